"""The host compiler's flags and vector-ISA probe, and the C caller's plans and fast path."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

import tvm
from tvm.host import caller as caller_mod
from tvm.host.caller import build_plan, caller_module, make_caller
from tvm.host.compiler import Isa, cpu_features, get_toolchain, missing_cpu_features
from tvm.ir import Buffer, PrimFunc, Var, seq
from tvm.tirx.operator.tile_primitive.ops import make_call

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="no C compiler")


def test_flags_are_o3_with_ieee_rounding_and_the_probed_isa() -> None:
    tc = get_toolchain()
    flags = tc.flags()
    assert flags[0] == "-O3" and "-ffp-contract=off" in flags and "-fno-math-errno" in flags
    isa = tc.vector_isa
    assert isa is tc.vector_isa  # probed once
    assert all(f in flags for f in isa.flags)
    assert tc.flags(opt_level=1, mcpu="x86-64")[0] == "-O1"


def test_probed_isa_is_supported_by_this_cpu() -> None:
    isa = get_toolchain().vector_isa
    have = cpu_features()
    if have is None:
        assert isa == Isa("baseline")
        return
    assert set(isa.features) <= have and missing_cpu_features(isa.features) == []
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= have:
        assert isa.name == "x86-64-v4" and "avx512f" in isa.features
    assert missing_cpu_features(["sse2", "no_such_feature_x"]) == ["no_such_feature_x"]


def test_mcpu_chooses_the_march_and_its_features() -> None:
    tc = get_toolchain()
    v2 = tc.isa_for("x86-64-v2")
    if tc.isa_features(("-march=x86-64-v2",)) is None:
        pytest.skip("this compiler has no x86-64-v2")
    assert v2.flags == ("-march=x86-64-v2",) and "sse4_2" in v2.features
    assert "avx2" not in v2.features and "avx512f" not in v2.features
    assert tc.isa_features(("-march=no-such-cpu",)) is None


# -- the C caller ----------------------------------------------------------------------------------
def _add(shape: list[Any]) -> PrimFunc:
    A, B, C = (Buffer(x, shape) for x in "ABC")
    return PrimFunc([b.data for b in (A, B, C)], seq([make_call("add", C, A, B)]),
                    {b.data: b for b in (A, B, C)}, name="add")


def test_plan_of_static_and_symbolic_shapes() -> None:
    ex = tvm.compile(_add([3, 5]), target="c")
    checks, values = build_plan(ex.functions["add"], ex.signatures["add"])
    f32 = np.dtype("float32").num
    # flags: 1 C-contiguous, | 2 must be writable (the output C is written to)
    assert checks == ((0, f32, 1, 3, 5), (0, f32, 1, 3, 5), (0, f32, 3, 3, 5))
    assert values == ((0, 0), (0, 1), (0, 2))
    n = Var("n", "int32")
    ex = tvm.compile(_add([n, 7]), target="c")
    checks, values = build_plan(ex.functions["add"], ex.signatures["add"])
    assert checks == ((0, f32, 1, -1, 7), (0, f32, 1, -1, 7), (0, f32, 3, -1, 7))  # slot 0
    assert values == ((0, 0), (0, 1), (0, 2), (1, 0))  # the shape variable n from slot 0


def test_caller_runs_numpy_arrays_in_c_and_falls_back_for_everything_else() -> None:
    if caller_module() is None:
        pytest.skip(f"no C caller here: {caller_mod.unavailable_reason()}")
    n = Var("n", "int32")
    ex = tvm.compile(_add([n, 7]), target="c")
    calls: list[tuple[Any, ...]] = []

    def fallback(*args: Any) -> str:
        calls.append(args)
        return "fallback"

    fast = make_caller(ex._lib, ex.functions["add"], ex.signatures["add"], fallback,
                       tvm.error.TVMError)
    a, b = np.ones((4, 7), "float32"), np.full((4, 7), 2.0, "float32")
    c = np.zeros_like(a)
    assert fast(a, b, c) is None and not calls
    np.testing.assert_array_equal(c, 3.0)
    bad = [(a.astype("float64"), b, c), (a, b[:3], c), (a[:, ::2], b, c), (a, b), (a, [1], c),
           (a.view(a.dtype.newbyteorder()), b, c)]
    for args in bad:
        assert fast(*args) == "fallback"
    assert len(calls) == len(bad)


def test_executable_errors_are_the_checkers_after_the_fast_path() -> None:
    ex = tvm.compile(_add([16]), target="c")
    a = np.ones(16, "float32")
    c = np.zeros(16, "float32")
    ex(a, a, c)
    with pytest.raises(ValueError, match=r"^add: argument 'B': expected dtype float32, got "
                                          r"float64$"):
        ex(a, a.astype("float64"), c)
    with pytest.raises(TypeError, match=r"^add\(\) takes 3 arguments \(A, B, C\), got 2$"):
        ex(a, a)
    np.testing.assert_array_equal(c, 2.0)


def test_declared_alignment_is_checked_then_promised_to_the_compiler() -> None:
    A, B = Buffer("A", [64], align=64), Buffer("B", [64])
    func = PrimFunc([A.data, B.data], seq([make_call("exp", B, A)]), {A.data: A, B.data: B},
                    name="f")
    ex = tvm.compile(func, target="c")
    assert "A = (float*)__builtin_assume_aligned(A, 64);" in ex.inspect_source()
    raw = np.zeros(64 + 32, "float32")
    offset = (-raw.ctypes.data % 64) // 4
    a = raw[offset:offset + 64]  # 64-byte aligned
    a[:] = 1.0
    b = np.zeros(64, "float32")
    ex(a, b)
    np.testing.assert_allclose(b, np.e, rtol=1e-6)
    with pytest.raises(tvm.error.TVMError, match=r"^f: argument 'A' is not aligned to 64 bytes "
                                                 r"\(its buffer declares align=64\); pass an array "
                                                 r"allocated with that alignment$"):
        ex(raw[offset + 1:offset + 65], b)


def test_executables_record_their_isa_and_refuse_a_cpu_without_it(tmp_path) -> None:
    from tvm.runtime import load_module, read_container, write_container

    ex = tvm.compile(_add([16]), target="c")
    isa = get_toolchain().vector_isa
    assert ex.isa == isa.to_dict()
    path = tmp_path / "add.tvmex"
    ex.export_library(path)
    meta, payload = read_container(path)
    assert meta["metadata"]["isa"]["features"] == list(isa.features)
    if cpu_features() is None:
        pytest.skip("this machine does not show its CPU features")
    meta["metadata"]["isa"] = {"name": "x86-64-v9", "flags": ["-march=x86-64-v9"],
                               "features": ["avx512f", "no_such_feature"]}
    write_container(path, meta, payload)  # (a hand edit would fail the file's digest)
    with pytest.raises(tvm.error.TVMError) as info:
        load_module(path)
    assert str(info.value).startswith(
        f"{path}: this executable was compiled for x86-64-v9 (-march=x86-64-v9) and needs CPU features "
        "this machine lacks: no_such_feature; compile it again here (tvm.compile), or on the "
        "other machine with the target's mcpu set to a level both CPUs have")


def test_an_executable_with_a_c_caller_is_garbage_collected() -> None:
    import gc
    import weakref

    ex = tvm.compile(_add([16]), target="c")
    f = ex.get_function("add")
    if f.call_path != "C caller":
        pytest.skip(f"no C caller here: {caller_mod.unavailable_reason()}")
    gone = weakref.ref(f)
    del f, ex  # the caller's fallback is a bound method of the function: a cycle
    gc.collect()
    assert gone() is None


def _runnable() -> int:
    with open("/proc/loadavg", encoding="utf-8") as f:
        return int(f.read().split()[3].split("/")[0])


def test_parallel_loops_leave_the_cpus_that_other_programs_keep_busy() -> None:
    import os

    from tvm.ir import For, ForKind
    from tvm.tirx import op as T

    if not get_toolchain().has_openmp or cpu_features() is None:
        pytest.skip("needs OpenMP and Linux's /proc")
    A = Buffer("A", [1], "int32")  # the kernel stores the thread count its parallel loop got
    i = Var("i")
    body = For(i, 0, 4, ForKind.PARALLEL,
               seq([make_call("fill", A, T.call_extern("int32", "omp_get_num_threads"))]))
    ex = tvm.compile(PrimFunc([A.data], body, {A.data: A}, name="threads"), target="c")
    assert "num_threads(tvm_host_threads())" in ex.inspect_source()
    a = np.zeros(1, "int32")
    before = _runnable()
    ex(a)
    after = _runnable()
    cpus = os.cpu_count() or 1
    assert 1 <= a[0] <= cpus
    if min(before, after) > 3 * cpus:  # a busy machine: one thread
        assert a[0] == 1
