"""The example backend builds and runs through core's build contract: a kernel against numpy,
argument checks, export and load, stage dumps, options and the compile cache."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tvm
import tvm_backend_example
from tvm.error import OptionError
from tvm.runtime.executable import read_container
from tvm.script import tirx as T

tvm_backend_example.register_backend()  # before T.example is parsed below


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test compiles into its own cache (also when tvm's pytest plugin is off)."""
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@T.prim_func
def axpb(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
         C: T.Buffer((64,), "float32"), alpha: T.float32):
    for i in range(64):
        C[i] = T.example.fma(A[i], B[i] * alpha, T.float32(1.0))


def _inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal(64).astype("float32"), rng.standard_normal(64).astype("float32"),
            np.zeros(64, "float32"))


def _check(ex):
    a, b, c = _inputs()
    ex(a, b, c, 0.5)
    np.testing.assert_allclose(c, a * (b * 0.5) + 1.0, rtol=1e-6)


def _files(root):
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_kernel_runs_against_numpy():
    ex = tvm.compile(axpb, target="example")
    assert type(ex).__name__ == "ExampleExecutable" and ex.entry_names == ["axpb"]
    assert "((A[i]) * ((B[i] * alpha)) + (1.0f))" in ex.inspect_source()
    _check(ex)


def test_arguments_are_checked():
    ex = tvm.compile(axpb, target="example/demo-board")
    a, b, c = _inputs()
    with pytest.raises(ValueError, match=r"^axpb: argument 'A': expected shape \(64,\), got "
                                         r"\(10,\)$"):
        ex(a[:10], b, c, 1.0)
    with pytest.raises(TypeError, match=r"^axpb\(\) takes 4 arguments \(A, B, C, alpha\), got 3$"):
        ex(a, b, c)


def test_export_and_load(tmp_path):
    ex = tvm.compile(axpb, target="example/tiny")
    path = ex.export_library(tmp_path / "axpb.tvmex")
    header, payload = read_container(path)
    assert header["backend"] == "example" and header["target"]["kind"] == "example"
    assert payload[:4] == b"\x7fELF" or payload[:4] in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
    assert sorted(header["metadata"]) == ["arguments", "compiler", "function_aliases", "functions",
                                         "source"]
    loaded = tvm.runtime.load_module(path)
    assert loaded.inspect_source() == ex.inspect_source()
    _check(loaded)


def test_dump_dir_gets_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_DUMP_DIR", str(tmp_path / "dump"))
    ex = tvm.compile(axpb, target="example")
    dump = tmp_path / "dump"
    stages = sorted(p.name for p in dump.glob("example-*"))
    assert stages == ["example-01-source.c", "example-02-binary.so", "example-03-metadata.json"]
    assert (dump / "example-01-source.c").read_text() == ex.inspect_source()
    assert (dump / "example-02-binary.so").read_bytes() == ex.binary.data
    metadata = json.loads((dump / "example-03-metadata.json").read_text())
    assert [f["name"] for f in metadata["functions"]] == ["axpb"]


def test_options(monkeypatch):
    ex = tvm.compile(axpb, target="example", opt_level=3)
    assert "-O3" in ex.metadata["compiler"]["flags"]
    assert "-O2" in tvm.compile(axpb, target="example").metadata["compiler"]["flags"]
    with pytest.raises(OptionError, match=r"unknown compile option\(s\) \['mcpu_x'\] for target "
                                          r"'example'; known: bounds_check, cache, cc, opt_level"):
        tvm.compile(axpb, target="example", mcpu_x="a")


def test_binaries_are_cached(private_cache):
    tvm.compile(axpb, target="example")
    (entry,) = private_cache.glob("example/*/*.bin")
    before = entry.stat().st_mtime_ns
    _check(tvm.compile(axpb, target="example"))  # read back, not compiled again
    assert _files(private_cache) == [entry, entry.with_suffix(".json")]
    assert entry.stat().st_mtime_ns == before


def test_cache_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv("TVM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _check(tvm.compile(axpb, target="example"))
    assert len(list((tmp_path / "xdg" / "tvm" / "example").glob("*/*.bin"))) == 1
    assert _files(tmp_path / "home") == []


def test_cache_off(private_cache, monkeypatch):
    monkeypatch.setenv("TVM_CACHE", "0")
    _check(tvm.compile(axpb, target="example"))
    _check(tvm.compile(axpb, target="example", cache=False))
    assert _files(private_cache) == []


def test_tile_primitive_lowers_through_the_backends_variant():
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.operator.tile_primitive import lower_tile_primitives

    @T.prim_func
    def axpy(X: T.Buffer((64,), "float32"), Y: T.Buffer((64,), "float32"),
             Z: T.Buffer((64,), "float32")):
        Tx.fma(Z, X, T.float32(2), Y)

    trace = []
    lower_tile_primitives(axpy, "example/demo-board", trace=trace)
    assert trace == [("tirx.tile.fma", "thread", "example_fma")]
    ex = tvm.compile(axpy, target="example/demo-board")
    assert "Z[i0] = ((X[i0]) * (2.0f) + (Y[i0]));" in ex.inspect_source()  # T.example.fma
    x, y, z = np.arange(64, dtype="float32"), np.ones(64, "float32"), np.zeros(64, "float32")
    ex(x, y, z)
    np.testing.assert_array_equal(z, 2 * x + 1)


def test_other_tile_primitives_use_cores_fallback_with_the_serial_barrier():
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.operator.tile_primitive import lower_tile_primitives

    @T.prim_func
    def row_sum(A: T.Buffer((8, 16), "float32"), S: T.Buffer((8,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([32])
        Tx.cta.sum(S, A, axes=-1)

    trace = []
    lower_tile_primitives(row_sum, "example", trace=trace)
    assert trace == [("tirx.tile.sum", "cta", "fallback")]
    a = np.random.default_rng(0).standard_normal((8, 16)).astype("float32")
    s = np.zeros(8, "float32")
    tvm.compile(row_sum, target="example")(a, s)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5)
