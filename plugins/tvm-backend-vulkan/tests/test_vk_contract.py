"""Vulkan through core's build contract and the SPIR-V tools: options, stage dumps, the compile
cache, the exported file, and the tools' failures (log and a command that reproduces them)."""

from __future__ import annotations

import json
import shlex
import subprocess

import numpy as np
import pytest
from vk_helpers import TARGET

import tvm
from tvm.error import CompileError, OptionError
from tvm.runtime.cache import compile_cache
from tvm.runtime.executable import read_container
from tvm.script import tirx as T
from tvm_backend_vulkan import compiler

pytestmark = pytest.mark.usefixtures("spirv_tools")


@T.prim_func
def axpy(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), a: T.float32):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    Y[bx * 128 + tx] = X[bx * 128 + tx] * a + Y[bx * 128 + tx]


def test_options_are_parsed_by_core():
    with pytest.raises(OptionError, match=r"unknown compile option\(s\) \['opt_level'\] for "
                                          r"target 'vulkan'; known: bounds_check, cache, target_env, validate"):
        tvm.compile(axpy, target=TARGET, opt_level=3)
    with pytest.raises(OptionError, match="compile option 'validate' for target 'vulkan' must "
                                          "be bool, got str 'yes'"):
        tvm.compile(axpy, target=TARGET, validate="yes")


def test_dump_dir_gets_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_DUMP_DIR", str(tmp_path))
    ex = tvm.compile(axpy, target=TARGET)
    names = sorted(p.name for p in tmp_path.glob("vulkan-*"))
    assert names == ["vulkan-01-source.comp", "vulkan-02-binary.spv", "vulkan-03-metadata.json"]
    assert (tmp_path / "vulkan-01-source.comp").read_text() == ex.inspect_source()
    assert (tmp_path / "vulkan-02-binary.spv").read_bytes() == ex.spirv("axpy_kernel")
    meta = json.loads((tmp_path / "vulkan-03-metadata.json").read_text())
    assert meta["layouts"] == [{"name": "axpy_kernel", "push_size": 4, "params": [
        ["buffer", 0, "float32"], ["buffer", 1, "float32"], ["push", 0, "float32"]]}]
    assert meta["spirv"] == {"axpy_kernel": [0, len(ex.spirv("axpy_kernel"))]}
    assert meta["validated"] is True and meta["target_env"] == "vulkan1.1"


def test_the_second_compile_comes_from_the_cache(monkeypatch):
    tvm.compile(axpy, target=TARGET)
    stats = dict(compile_cache("vulkan").stats)

    def no_glslang(*args, **kwargs):
        raise AssertionError("glslang ran although the SPIR-V was in the cache")

    monkeypatch.setattr(compiler, "_compile_one", no_glslang)
    ex = tvm.compile(axpy, target=TARGET)
    assert compile_cache("vulkan").stats["hits"] == stats["hits"] + 1
    assert len(ex.spirv("axpy_kernel")) > 0


def test_exported_file_holds_spirv_and_plans(tmp_path, vulkan_device):
    ex = tvm.compile(axpy, target=TARGET)
    path = ex.export_library(tmp_path / "axpy.tvmex")
    header, payload = read_container(path)
    assert header["backend"] == "vulkan" and header["builder_format"] == 1
    assert payload == ex.spirv("axpy_kernel")
    assert int.from_bytes(payload[:4], "little") == compiler.SPIRV_MAGIC
    loaded = tvm.runtime.load_module(path)
    x, y = np.ones(256, "float32"), np.ones(256, "float32")
    loaded(x, y, 0.5)
    np.testing.assert_array_equal(y, 1.5)


def test_a_damaged_binary_is_refused():
    ex = tvm.compile(axpy, target=TARGET)
    with pytest.raises(ValueError, match=r"the binary holds no SPIR-V module for kernel "
                                         r"'axpy_kernel' at \[0, \d+\)"):
        compiler.spirv_modules(b"\0" * 8, ex.metadata)


def test_glslang_failure_carries_its_log_and_command():
    bad = ("// kernel: broken\n#version 450\nlayout(local_size_x = 1) in;\n"
           "void main() { undefined_thing = 1; }\n")
    with pytest.raises(CompileError) as info:
        compiler.compile_glsl(bad)
    err = info.value
    assert str(err).startswith("glslangValidator failed (exit code 2) compiling kernel 'broken' "
                               "to SPIR-V (its input is kept at ")
    assert "undefined_thing" in err.log
    rerun = subprocess.run(shlex.split(err.command), capture_output=True, text=True)
    assert rerun.returncode != 0 and "undefined_thing" in rerun.stdout


def test_spirv_val_rejects_an_invalid_module(tmp_path):
    good, meta = compiler.compile_glsl(tvm.compile(axpy, target=TARGET).inspect_source())
    broken = bytearray(good)
    broken[12:16] = (0).to_bytes(4, "little")  # the id bound: every id is now out of bounds
    with pytest.raises(CompileError) as info:
        compiler.validate_spirv(bytes(broken), name="axpy_kernel")
    assert str(info.value).startswith("spirv-val failed (exit code 1) validating the SPIR-V of "
                                      "'axpy_kernel'")
    assert "spirv-val" in info.value.command and info.value.log


def test_missing_tool_says_what_to_install(monkeypatch):
    monkeypatch.setattr(compiler.shutil, "which", lambda name: None)
    with pytest.raises(CompileError, match=r"^glslangValidator is not installed: install the "
                                           r"Debian package glslang-tools \(as root: bash "
                                           r"scripts/system-deps.sh, or apt-get install "
                                           r"glslang-tools\)$"):
        compiler.find_tool("glslangValidator")
