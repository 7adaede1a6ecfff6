"""Metal through core's build contract: options, stage dumps, the exported file, and the
compile cache of the emulator's objects (TVM_CACHE, TVM_CACHE_DIR, XDG_CACHE_HOME)."""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from metal_helpers import TARGET

import tvm
from tvm.error import CompileError, OptionError
from tvm.runtime.cache import compile_cache
from tvm.runtime.executable import read_container
from tvm.script import tirx as T
from tvm_backend_metal import emulator
from tvm_backend_metal.msl_check import check_msl

pytestmark = pytest.mark.usefixtures("cxx")


@T.prim_func
def axpy(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), a: T.float32):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    Y[bx * 128 + tx] = X[bx * 128 + tx] * a + Y[bx * 128 + tx]


def _vadd(tag: str) -> str:
    """An MSL kernel whose text (so whose cache key) differs by ``tag``."""
    return (f"#include <metal_stdlib>\nusing namespace metal;\n// {tag}\n"
            "kernel void vadd(device const float* a [[buffer(0)]], "
            "device float* c [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n"
            "  c[i] = a[i] + 1.0f;\n}\n")


def _run_vadd(source: str) -> emulator.EmulatedKernel:
    kernel = emulator.compile_msl(source, "vadd")
    a, c = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    kernel(1, 64, [a, c], isolate=False)
    np.testing.assert_array_equal(c, a + 1)
    return kernel


def _entries(root: Path, namespace: str = "metal-emu") -> list[Path]:
    return sorted((root / namespace).glob("*/*.bin"))


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


# -- the emulator's compile cache ----------------------------------------------------------------


def test_emulator_objects_go_to_tvm_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    kernel = _run_vadd(_vadd("cache-dir"))
    (entry,) = _entries(tmp_path / "cache")
    assert kernel.library_path == entry
    record = json.loads(entry.with_suffix(".json").read_text())
    assert record["meta"] == {"kernel": "vadd"} and record["size"] == entry.stat().st_size


def test_emulator_cache_is_read_back_without_compiling(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    source = _vadd("read-back")
    first = _run_vadd(source)
    monkeypatch.setattr(emulator, "_KERNEL_CACHE", {})  # as a new process would start
    monkeypatch.setattr(emulator, "_build", _no_compiler)
    hits = compile_cache("metal-emu").stats["hits"]
    again = _run_vadd(source)
    assert again is not first and again.library_path == first.library_path
    assert compile_cache("metal-emu").stats["hits"] == hits + 1


def _no_compiler(*args: object) -> tuple[bytes, str]:
    raise AssertionError("the C++ compiler ran although the object was in the cache")


def test_emulator_cache_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv("TVM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _run_vadd(_vadd("xdg"))
    assert len(_entries(tmp_path / "xdg" / "tvm")) == 1
    assert _files(tmp_path / "home") == []


def test_emulator_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TVM_CACHE", "0")
    kernel = _run_vadd(_vadd("off"))
    assert _files(tmp_path / "cache") == []
    assert kernel.library_path.exists()  # a private file outside the cache


def test_msl_check_leaves_no_files_and_keeps_the_source_of_a_failure(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    check_msl(_vadd("good"))
    assert _files(tmp_path) == []
    with pytest.raises(CompileError) as info:
        check_msl(_vadd("bad").replace("1.0f;", "1.0f"))
    (kept,) = _files(tmp_path)
    assert kept.suffix == ".metal" and str(kept) in info.value.command
    rerun = subprocess.run(shlex.split(info.value.command), capture_output=True, text=True)
    assert rerun.returncode != 0 and "expected" in rerun.stderr


# -- tvm.compile for metal ---------------------------------------------------------------------


def test_compile_caches_nothing_and_emulate_caches_through_xdg(tmp_path, monkeypatch):
    # The MSL is compiled by the Metal driver when it runs: the compile stage caches nothing;
    # the emulator's objects land in $XDG_CACHE_HOME/tvm/metal-emu, nothing under $HOME.
    monkeypatch.delenv("TVM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ex = tvm.compile(axpy, target=TARGET, check=True)
    assert _files(tmp_path / "xdg") == []
    x, y = np.arange(256, dtype="float32"), np.ones(256, "float32")
    ex.emulate(x, y, 2.0)
    np.testing.assert_allclose(y, 2 * np.arange(256) + 1)
    assert [p.parent.parent.name for p in _files(tmp_path / "xdg")] == ["metal-emu"] * 2
    assert _files(tmp_path / "home") == []


def test_compile_and_emulate_with_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TVM_CACHE", "0")
    ex = tvm.compile(axpy, target=TARGET)
    x, y = np.ones(256, "float32"), np.zeros(256, "float32")
    ex.emulate(x, y, 3.0)
    np.testing.assert_array_equal(y, 3.0)
    assert _files(tmp_path / "cache") == []


def test_dump_dir_gets_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_DUMP_DIR", str(tmp_path / "dump"))
    ex = tvm.compile(axpy, target=TARGET)
    stages = sorted(p.name for p in (tmp_path / "dump").glob("metal-*"))
    assert stages == ["metal-01-source.metal", "metal-02-binary.metal", "metal-03-metadata.json"]
    dump = tmp_path / "dump"
    assert (dump / "metal-01-source.metal").read_text() == ex.inspect_source()
    assert (dump / "metal-02-binary.metal").read_text() == ex.inspect_source()
    metadata = json.loads((dump / "metal-03-metadata.json").read_text())
    assert metadata["kernels"] == ["axpy_kernel"]
    (plan,) = metadata["plans"]
    (step,) = plan["steps"]
    assert step["kernel"] == "axpy_kernel" and step["grid"] == [2, 1, 1]
    assert step["args"] == [["array", 0], ["array", 1], ["param", 2, "float32"]]


def test_options_are_parsed_by_core():
    with pytest.raises(OptionError, match=r"unknown compile option\(s\) \['opt_level'\] for "
                                          r"target 'metal'; known: cache, check"):
        tvm.compile(axpy, target=TARGET, opt_level=3)
    with pytest.raises(OptionError, match="compile option 'check' for target 'metal' must be "
                                          "bool, got str 'yes'"):
        tvm.compile(axpy, target=TARGET, check="yes")


def test_build_time_check_rejects_bad_msl(monkeypatch):
    from tvm_backend_metal import codegen

    real = codegen.generate_msl

    def broken(mod, target=None):
        source, functions = real(mod, target)
        return source.replace(" * a)", " * alpha)"), functions

    monkeypatch.setattr("tvm_backend_metal.executable.generate_msl", broken)
    assert " * alpha)" in tvm.compile(axpy, target=TARGET).inspect_source()  # unchecked
    with pytest.raises(CompileError, match="MSL syntax check failed"):
        tvm.compile(axpy, target=TARGET, check=True)


def test_exported_file_holds_msl_and_plans(tmp_path):
    ex = tvm.compile(axpy, target=TARGET)
    path = ex.export_library(tmp_path / "axpy.tvmex")
    header, payload = read_container(path)
    assert header["backend"] == "metal" and header["builder_format"] == 3
    assert payload.decode() == ex.inspect_source()
    assert header["metadata"]["plans"][0]["signature"]["name"] == "axpy"
    loaded = tvm.runtime.load_module(path)
    x, y = np.ones(256, "float32"), np.ones(256, "float32")
    loaded.emulate(x, y, 0.5)
    np.testing.assert_array_equal(y, 1.5)
