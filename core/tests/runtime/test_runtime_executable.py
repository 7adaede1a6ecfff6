"""Executables: argument checks, export_library / load_module, the compile cache, tvm.compile."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hostir import identity, loop, make_func

import tvm
from tvm._registry import snapshot_all
from tvm.error import BackendNotInstalledError, CompileError, IntegrityError, TVMError
from tvm.host import compiler as host_compiler
from tvm.ir import Buffer, BufferStore, Call, ForKind, Op, PrimFunc, Var
from tvm.runtime import CompileCache, load_module, read_container
from tvm.runtime.arguments import ArgumentChecker, ParamSig, Signature
from tvm.target import Target


def _vadd(n: int = 64, dtype: str = "float32") -> PrimFunc:
    A, B, C = (Buffer(x, [n], dtype) for x in "ABC")
    return make_func("vadd", [A, B, C], loop(n, lambda i: BufferStore(C, A[i] + B[i], [i]),
                                              ForKind.PARALLEL))


def _build(func: PrimFunc | None = None, **options):
    return tvm.compile(func or _vadd(), target="c", tir_pipeline=identity, **options)


def _arrays(n: int = 64, dtype: str = "float32"):
    rng = np.random.default_rng(1)
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype), \
        np.zeros(n, dtype)


class _DLPackOnly:
    """A DLPack producer that is not a numpy array (like a torch CPU tensor)."""

    def __init__(self, arr: np.ndarray, device: tuple[int, int] = (1, 0)) -> None:
        self._arr, self._device = arr, device

    def __dlpack__(self, **kw):
        return self._arr.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._device


# -- argument checks ------------------------------------------------------------------------------

_SIG = Signature("vadd", (
    ParamSig("A", "buffer", "float32", (64,)),
    ParamSig("B", "buffer", "float32", ("n",)),
    ParamSig("k", "scalar", "int32", var="k"),
    ParamSig("C", "buffer", "float32", (["Mul", "n", 2],)),
))


@pytest.mark.parametrize(("args", "error", "message"), [
    ((np.zeros(64, "float64"), np.zeros(3, "float32"), 1, np.zeros(6, "float32")), ValueError,
     "vadd: argument 'A': expected dtype float32, got float64"),
    ((np.zeros((8, 8), "float32"), np.zeros(3, "float32"), 1, np.zeros(6, "float32")), ValueError,
     r"vadd: argument 'A': expected a 1-d array of shape \(64,\), got a 2-d array of shape \(8, 8\)"),
    ((np.zeros(63, "float32"), np.zeros(3, "float32"), 1, np.zeros(6, "float32")), ValueError,
     r"vadd: argument 'A': expected shape \(64,\), got \(63,\)"),
    ((np.zeros(128, "float32")[::2], np.zeros(3, "float32"), 1, np.zeros(6, "float32")),
     ValueError, r"vadd: argument 'A': expected a contiguous \(row-major\) array, got strides "
     r"\(2,\) \(in elements\) for shape \(64,\); pass a contiguous copy: "
     r"numpy.ascontiguousarray\(x\) \(torch: x.contiguous\(\)\)"),
    ((np.zeros(64, "float32"), np.zeros(3, "float32")), TypeError,
     r"vadd\(\) takes 4 arguments \(A, B, k, C\), got 2"),
    ((np.zeros(64, "float32"), [1.0, 2.0], 1, np.zeros(6, "float32")), TypeError,
     r"vadd: argument 'B': expected an array \(float32, shape \(n,\)\): a numpy array, a torch "
     r"tensor or an object with __dlpack__, __array_interface__ or __cuda_array_interface__; "
     r"got list"),
    ((np.zeros(64, "float32"), np.zeros(3, "float32"), 1.5, np.zeros(6, "float32")), TypeError,
     r"vadd: argument 'k': expected an int \(int32\), got float 1.5"),
    ((np.zeros(64, "float32"), np.zeros(3, "float32"), 2**31, np.zeros(6, "float32")),
     ValueError, r"vadd: argument 'k': expected an int that fits in int32 \(-2147483648 to "
     r"2147483647\), got 2147483648"),
    ((np.zeros(64, "float32"), _DLPackOnly(np.zeros(3, "float32"), (2, 1)), 1,
      np.zeros(6, "float32")), ValueError,
     "vadd: argument 'B': expected an array on cpu, got one on cuda:1"),
    ((np.zeros(64, "float32"), np.zeros(3, "float32"), 1, np.zeros(7, "float32")), ValueError,
     r"vadd: argument 'C': expected shape \(n \* 2,\), got \(7,\) \(dimension 0 is 7, but "
     r"n \* 2 is 6\)"),
])
def test_argument_checker_messages(args, error, message) -> None:
    with pytest.raises(error, match=f"^{message}$"):
        ArgumentChecker(_SIG)(args)


def test_argument_checker_binds_values_and_reads_dlpack() -> None:
    a, b = np.zeros(64, "float32"), np.arange(5, dtype="float32")
    values = ArgumentChecker(_SIG)([a, _DLPackOnly(b), np.int32(7), np.zeros(10, "float32")])
    assert values == {"n": 5, "k": 7}


def test_signature_round_trips_through_json() -> None:
    again = Signature.from_dict(json.loads(json.dumps(_SIG.to_dict())))
    assert again == _SIG


@pytest.mark.parametrize(("bad", "words"), [
    (lambda a: a.astype("float64"), ["A", "float64", "float32"]),
    (lambda a: a[:10], ["A", "10", "64"]),
    (lambda a: a.reshape(8, 8), ["A", "8"]),
    (lambda a: np.zeros(128, "float32")[::2], ["A", "contiguous"]),
])
def test_executable_checks_arguments_before_calling(bad, words) -> None:
    ex = _build()
    a, b, c = _arrays()
    with pytest.raises(ValueError) as info:
        ex(bad(a), b, c)
    text = str(info.value)
    assert all(w in text for w in words), text
    assert not c.any()  # nothing ran


def test_executable_accepts_dlpack_producers_and_writes_through() -> None:
    ex = _build()
    a, b, c = _arrays()
    ex(_DLPackOnly(a), _DLPackOnly(b), _DLPackOnly(c))
    np.testing.assert_array_equal(c, a + b)


# -- export / load --------------------------------------------------------------------------------


def test_export_library_and_load_module_round_trip(tmp_path) -> None:
    ex = _build()
    path = tmp_path / "vadd.tvmex"
    assert ex.export_library(path) == str(path)
    with open(path, "rb") as f:
        assert re.fullmatch(rb"TVM-EXECUTABLE 3 sha256:[0-9a-f]{64}\n", f.readline())
        header = json.loads(f.readline())
    assert header["backend"] == "c" and header["entries"] == ["vadd"]
    assert header["target"]["kind"] == "c" and header["format_version"] == 3
    assert header["source"] == ex.inspect_source()
    meta = header["metadata"]
    assert [p["name"] for p in meta["functions"]["vadd"]["params"]] == ["A", "B", "C"]
    loaded = load_module(path)
    assert loaded.inspect_source() == ex.inspect_source()
    assert loaded.target == Target("c")
    a, b, c = _arrays()
    loaded(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    assert meta["arguments"]["vadd"]["params"][0] == {
        "name": "A", "kind": "buffer", "dtype": "float32", "shape": [64], "strides": [],
        "scope": "global", "var": None, "written": False}
    with pytest.raises(ValueError, match="^vadd: argument 'A': expected dtype float32, got float64$"):
        loaded(a.astype("float64"), b, c)


def test_a_module_key_finds_the_function_it_holds(tmp_path) -> None:
    """``IRModule({"main": f})`` exports ``f`` under its global_symbol; ``ex["main"]`` (the
    seed's call) finds it, also after export and load."""
    ex = tvm.compile(tvm.IRModule({"main": _vadd()}), target="c", tir_pipeline=identity)
    assert ex.entry_names == ["vadd"] and "main" in ex and "vadd" in ex and "other" not in ex
    a, b, c = _arrays()
    ex["main"](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    ex.export_library(tmp_path / "m.tvmex")
    loaded = load_module(tmp_path / "m.tvmex")
    c[:] = 0
    loaded["main"](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(KeyError, match=r"this executable has no function 'other'; it has \['vadd'\]"):
        ex["other"]


def test_load_module_rejects_damaged_files(tmp_path) -> None:
    path = tmp_path / "vadd.tvmex"
    _build().export_library(path)
    data = path.read_bytes()
    (tmp_path / "cut.tvmex").write_bytes(data[:-100])
    with pytest.raises(IntegrityError, match="cut.tvmex: its contents do not match the digest "
                                             "in its first line"):
        load_module(tmp_path / "cut.tvmex")
    (tmp_path / "junk.tvmex").write_bytes(b"\x7fELF not ours")
    with pytest.raises(ValueError, match="is not an executable written by export_library"):
        load_module(tmp_path / "junk.tvmex")


def test_load_module_of_an_unknown_backend(tmp_path) -> None:
    from tvm.runtime import write_container

    write_container(tmp_path / "x.tvmex", {"backend": "nosuch", "target": {"kind": "nosuch"},
                                           "entries": []}, b"")
    with pytest.raises(BackendNotInstalledError, match="written by backend 'nosuch', and no "
                                                      "loaded backend can load it"):
        load_module(tmp_path / "x.tvmex")
    header, payload = read_container(tmp_path / "x.tvmex")
    assert header["backend"] == "nosuch" and payload == b""


# -- compile cache --------------------------------------------------------------------------------


@pytest.fixture
def count_compiles(monkeypatch):
    calls = []
    real = host_compiler.Toolchain.compile_shared

    def spy(self, source, flags, **kw):
        calls.append(source)
        return real(self, source, flags, **kw)

    monkeypatch.setattr(host_compiler.Toolchain, "compile_shared", spy)
    return calls


def _entry_files(root) -> list[str]:
    return sorted(str(p) for p in (root / "c").rglob("*.bin"))


def test_cache_hit_skips_the_compiler(tmp_path, count_compiles) -> None:
    root = tmp_path / "cache"
    _build()
    assert len(count_compiles) == 1 and len(_entry_files(root)) == 1
    ex = _build()
    assert len(count_compiles) == 1  # served from the cache
    a, b, c = _arrays()
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    _build(opt_level=2)  # other compiler options: another entry
    assert len(count_compiles) == 2 and len(_entry_files(root)) == 2
    _build(cache=False)
    assert len(count_compiles) == 3


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch, count_compiles) -> None:
    other = tmp_path / "elsewhere"
    monkeypatch.setenv("TVM_CACHE_DIR", str(other))
    _build()
    assert len(_entry_files(other)) == 1
    monkeypatch.setenv("TVM_CACHE", "0")
    _build()
    _build()
    assert len(count_compiles) == 3 and len(_entry_files(other)) == 1


@pytest.mark.parametrize("damage", ["truncate_bin", "flip_bin", "garbage_json", "drop_bin"])
def test_corrupted_cache_entry_is_rebuilt_not_loaded(tmp_path, count_compiles, damage) -> None:
    root = tmp_path / "cache"
    _build()
    (bin_path,) = _entry_files(root)
    meta_path = bin_path[:-4] + ".json"
    good = Path(bin_path).read_bytes()
    # Replace files rather than editing them in place: this process has the old one mapped.
    if damage == "truncate_bin":
        _replace(bin_path, good[: len(good) // 2])
    elif damage == "flip_bin":
        _replace(bin_path, good[:100] + bytes([good[100] ^ 0xFF]) + good[101:])
    elif damage == "garbage_json":
        _replace(meta_path, b"{not json")
    else:
        os.unlink(bin_path)
    ex = _build()
    assert len(count_compiles) == 2  # rebuilt
    assert Path(bin_path).read_bytes() == good
    a, b, c = _arrays()
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    _build()
    assert len(count_compiles) == 2  # and the repaired entry is a hit again


def _replace(path: str, data: bytes) -> None:
    tmp = path + ".damaged"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def test_compile_cache_api(tmp_path) -> None:
    cache = CompileCache("unit", root=tmp_path)
    assert cache.get("ab" * 32) is None
    path = cache.put("ab" * 32, b"payload", {"x": 1})
    assert path.read_bytes() == b"payload" and cache.get("ab" * 32) == b"payload"
    assert cache.metadata("ab" * 32) == {"x": 1}
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []
    _replace(str(path), b"payloaX")
    assert cache.get("ab" * 32) is None and not path.exists()
    assert cache.stats == {"hits": 1, "misses": 2, "corrupt": 1}


# -- compiler errors ------------------------------------------------------------------------------


def test_missing_compiler_is_a_compile_error_with_the_command(monkeypatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/bin/tvm-test-cc -O1")
    with pytest.raises(CompileError) as info:
        _build()
    err = info.value
    assert str(err).startswith("the C compiler ('/nonexistent/bin/tvm-test-cc') could not be run "
                               "asking for its version: No such file or directory; install a C "
                               "compiler or point CC")
    assert err.command.startswith("/nonexistent/bin/tvm-test-cc -O1")
    assert "command: /nonexistent/bin/tvm-test-cc -O1" in str(err)


@pytest.fixture
def _restore_registries():
    restore = snapshot_all()  # the test's own op must not outlive it (other tests list ops)
    yield
    restore()


@pytest.mark.usefixtures("_restore_registries")
def test_broken_source_is_a_compile_error_with_log_and_command() -> None:
    op = Op.register("tirx.test_runtime.broken", category="device_intrin",
                     namespace="test_runtime", effect=1, dtype="arg0", override=True)
    op.set_codegen("c", "this_is_not_declared({0})")
    A = Buffer("A", [4], "float32")
    func = make_func("broken", [A], loop(4, lambda i: BufferStore(A, Call("float32", op, [A[i]]),
                                                                  [i])))
    with pytest.raises(CompileError) as info:
        _build(func)
    err = info.value
    assert "the C compiler failed (exit code" in str(err) and "compiling the C source of broken" in str(err)
    assert "this_is_not_declared" in err.log and "--- compiler output ---" in str(err)
    assert " -O3 -fPIC -shared " in err.command and err.command.split()[-4].endswith("module.c")
    source = err.command.split()[-4]
    assert os.path.exists(source)  # kept, so the command can be re-run
    assert "this_is_not_declared(A[i])" in Path(source).read_text()


# -- tvm.compile ----------------------------------------------------------------------------------


def test_compile_defaults_to_the_current_target_or_c() -> None:
    assert _build().target == Target("c")
    with Target({"kind": "c", "opt_level": 3}):
        ex = tvm.compile(_vadd(), tir_pipeline=identity)
    assert ex.target.attrs["opt_level"] == 3 and "-O3" in ex.compiler["flags"]


def test_compile_runs_pipeline_with_target_and_finalizers() -> None:
    seen = []

    def main(mod):
        seen.append(("main", Target.current(), [f.attrs.get("target") for f in mod.functions.values()]))
        return mod

    def finalize_host():  # a factory, like tvm.tirx.pipeline.finalize_host_passes
        def run(mod):
            seen.append(("host", sorted(mod.functions)))
            return mod
        return run

    ex = tvm.compile(_vadd(), target="c", tir_pipeline=(main, finalize_host, None))
    assert seen == [("main", Target("c"), [Target("c")]), ("host", ["vadd"])]
    assert ex.entry_names == ["vadd"]


def test_compile_with_the_default_pipeline_of_lowered_ir() -> None:
    ex = tvm.compile(_vadd(), target="c")
    a, b, c = _arrays()
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_compile_errors() -> None:
    with pytest.raises(TypeError, match="expects a PrimFunc or an IRModule"):
        tvm.compile("not a function", target="c")
    with pytest.raises(ValueError, match="unknown TIR pipeline 'nope'; known pipelines: .*default"):
        tvm.compile(_vadd(), target="c", tir_pipeline="nope")
    with pytest.raises(TypeError, match=r"unknown compile option\(s\) \['bogus'\] for target 'c'"):
        _build(bogus=1)


def test_no_backend_builds_the_kind() -> None:
    from types import ModuleType

    from tvm.plugin import hookimpl
    from tvm.target import TargetKind

    plugin = ModuleType("test_nobuild_plugin")
    plugin.tvm_target_kinds = hookimpl(lambda: [TargetKind("test_nobuild")])
    plugin.tvm_module_aliases = hookimpl(lambda: {})
    if not tvm.backend.is_loaded("test_nobuild"):
        tvm.backend.register_plugin(plugin, "test_nobuild")
    with pytest.raises(TVMError, match=r"no loaded backend builds target kind 'test_nobuild'; "
                                       r"loaded backends: .*\bc\b"):
        tvm.compile(_vadd(), target="test_nobuild", tir_pipeline=identity)


def test_unknown_entry_and_multi_entry_default() -> None:
    ex = _build()
    with pytest.raises(KeyError, match="has no function 'nope'; it has \\['vadd'\\]"):
        ex["nope"]
    mod = tvm.IRModule({"f": _vadd().with_attr("global_symbol", "f"),
                        "g": _vadd().with_attr("global_symbol", "g")})
    ex2 = tvm.compile(mod, target="c", tir_pipeline=identity)
    with pytest.raises(TypeError, match=r"has 2 functions \(f, g\); call one with ex\['name'\]"):
        ex2(*_arrays())


def test_scalar_param_kinds_round_trip(tmp_path) -> None:
    n = Var("n", "int64")
    A = Buffer("A", [n], "int64")
    flag = Var("flag", "bool")
    scale = Var("scale", "float64")
    body = loop(n, lambda i: BufferStore(A, tvm.ir.Select(flag, tvm.ir.Cast("int64", scale) * i, i),
                                         [i]), dtype="int64")
    func = make_func("f", [A], body, scalars=[flag, scale])
    ex = _build(func)
    a = np.zeros(10, "int64")
    ex(a, True, 3.0)
    np.testing.assert_array_equal(a, np.arange(10) * 3)
    ex.export_library(tmp_path / "f.tvmex")
    load_module(tmp_path / "f.tvmex")(a, False, 3.0)
    np.testing.assert_array_equal(a, np.arange(10))
