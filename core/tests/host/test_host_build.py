"""Compile hand-built lowered IR with the system C compiler and check results against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hostir import identity, loop, make_func

import tvm
from tvm.error import TVMError
from tvm.host.compiler import get_toolchain
from tvm.ir import (
    AllocBuffer,
    AssertStmt,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    For,
    ForKind,
    IntImm,
    PrimFunc,
    Ramp,
    Select,
    Var,
    seq,
)
from tvm.ir import expr as E
from tvm.tirx import op as T

RNG = np.random.default_rng(0)


def build(func: PrimFunc, **options):
    return tvm.compile(func, target="c", tir_pipeline=identity, **options)


def _vadd(n: int, dtype: str, kind: ForKind = ForKind.SERIAL) -> PrimFunc:
    A, B, C = (Buffer(x, [n], dtype) for x in "ABC")
    return make_func("vadd", [A, B, C], loop(n, lambda i: BufferStore(C, A[i] + B[i], [i]), kind))


def _data(shape, dtype: str):
    if dtype.startswith("int"):
        return RNG.integers(-1000, 1000, size=shape).astype(dtype)
    if dtype == "bfloat16":
        import ml_dtypes

        return RNG.standard_normal(shape).astype(ml_dtypes.bfloat16)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int8", "float16",
                                   "bfloat16"])
@pytest.mark.parametrize("kind", [ForKind.SERIAL, ForKind.PARALLEL])
def test_vector_add(dtype: str, kind: ForKind) -> None:
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    n = 1031
    ex = build(_vadd(n, dtype, kind))
    a, b = _data(n, dtype), _data(n, dtype)
    c = np.zeros(n, a.dtype)
    ex(a, b, c)
    expected = a + b  # numpy (and ml_dtypes) round each result to the element type, as C does
    np.testing.assert_array_equal(c.astype("float64"), expected.astype("float64"))


def test_float16_native_and_emulated_agree_with_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    A, B = Buffer("A", [256], "float16"), Buffer("B", [256], "float16")
    func = make_func("f", [A, B], loop(256, lambda i: BufferStore(
        B, T.exp(A[i]) * A[i] + Cast("float16", IntImm("int32", 1)), [i])))
    a = (RNG.standard_normal(256) * 1.5).astype("float16")
    ref = (np.exp(a) * a + np.float16(1)).astype("float16")
    native = np.zeros_like(a)
    build(func)(a, native)
    np.testing.assert_allclose(native.astype("float32"), ref.astype("float32"), rtol=2e-3, atol=2e-3)
    # Force the conversion-helper path, as with a compiler lacking _Float16.
    from tvm.host import compiler

    monkeypatch.setattr(compiler.Toolchain, "has_float16", property(lambda self: False))
    emulated = np.zeros_like(a)
    ex = build(func)
    assert "tvm_f32_to_f16" in ex.inspect_source()
    ex(a, emulated)
    np.testing.assert_allclose(emulated.astype("float32"), ref.astype("float32"), rtol=2e-3,
                               atol=2e-3)


def test_float16_conversion_helpers_round_like_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    from tvm.host import compiler

    monkeypatch.setattr(compiler.Toolchain, "has_float16", property(lambda self: False))
    n = 4096
    A, B = Buffer("A", [n], "float32"), Buffer("B", [n], "float16")
    ex = build(make_func("f", [A, B], loop(n, lambda i: BufferStore(B, Cast("float16", A[i]), [i]))))
    a = np.concatenate([RNG.standard_normal(n - 8).astype("float32") * 1e-5,
                        np.array([65504, 65520, 1e-8, -0.0, np.inf, -np.inf, 6e-8, 70000],
                                 "float32")])
    b = np.zeros(n, "float16")
    ex(a, b)
    with np.errstate(over="ignore"):
        expected = a.astype("float16")
    np.testing.assert_array_equal(b.view("uint16"), expected.view("uint16"))


def test_bfloat16_rounding_matches_ml_dtypes() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    n = 512
    A, B = Buffer("A", [n], "float32"), Buffer("B", [n], "bfloat16")
    ex = build(make_func("f", [A, B], loop(n, lambda i: BufferStore(B, Cast("bfloat16", A[i]), [i]))))
    a = RNG.standard_normal(n).astype("float32")
    b = np.zeros(n, ml_dtypes.bfloat16)
    ex(a, b)
    np.testing.assert_array_equal(b.view("uint16"), a.astype(ml_dtypes.bfloat16).view("uint16"))


def test_row_sum_reduction_with_local_accumulator() -> None:
    m, n = 37, 129
    A, S = Buffer("A", [m, n], "float32"), Buffer("S", [m], "float32")
    acc = Buffer("acc", [1], "float32", scope="local")

    def row(i: Var):
        return seq([AllocBuffer(acc), BufferStore(acc, 0.0, [0]),
                     loop(n, lambda j: BufferStore(acc, acc[0] + A[i, j], [0]), name="j"),
                     BufferStore(S, acc[0], [i])])

    ex = build(make_func("row_sum", [A, S], loop(m, row, ForKind.PARALLEL)))
    a = RNG.standard_normal((m, n)).astype("float32")
    s = np.zeros(m, "float32")
    ex(a, s)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_matmul_loops() -> None:
    M, N, K = 33, 47, 65
    A, B, C = Buffer("A", [M, K], "float32"), Buffer("B", [K, N], "float32"), Buffer("C", [M, N], "float32")
    body = loop(M, lambda i: loop(N, lambda j: seq([
        BufferStore(C, 0.0, [i, j]),
        loop(K, lambda k: BufferStore(C, C[i, j] + A[i, k] * B[k, j], [i, j]), name="k"),
    ]), name="j"), ForKind.PARALLEL)
    ex = build(make_func("matmul", [A, B, C], body))
    a, b = _data((M, K), "float32"), _data((K, N), "float32")
    c = np.zeros((M, N), "float32")
    ex(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_kernel_form_thread_loops_run_on_the_host() -> None:
    n = 4096
    A, B, C = (Buffer(x, [n], "float32") for x in "ABC")
    bx, tx = Var("bx"), Var("tx")
    idx = bx * 128 + tx
    body = For(bx, 0, n // 128, ForKind.THREAD_BINDING, thread_tag="blockIdx.x", body=For(
        tx, 0, 128, ForKind.THREAD_BINDING, thread_tag="threadIdx.x",
        body=BufferStore(C, A[idx] + B[idx], [idx])))
    ex = build(make_func("vadd", [A, B, C], body))
    a, b = _data(n, "float32"), _data(n, "float32")
    c = np.zeros(n, "float32")
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_floordiv_floormod_truncdiv_on_negative_numbers(dtype: str) -> None:
    n = 64
    A, D, M, Q = (Buffer(x, [n], dtype) for x in "ADMQ")
    b = IntImm(dtype, -7)
    c = IntImm(dtype, 5)
    body = loop(n, lambda i: seq([BufferStore(D, A[i] // b + A[i] // c, [i]),
                                  BufferStore(M, A[i] % b + A[i] % c, [i]),
                                  BufferStore(Q, T.truncdiv(A[i], c) + T.truncmod(A[i], b), [i])]))
    ex = build(make_func("f", [A, D, M, Q], body))
    a = np.arange(-32, 32).astype(dtype)
    d, m, q = (np.zeros(n, dtype) for _ in range(3))
    ex(a, d, m, q)
    np.testing.assert_array_equal(d, a // -7 + a // 5)
    np.testing.assert_array_equal(m, a % -7 + a % 5)
    np.testing.assert_array_equal(q, np.trunc(a / 5).astype(dtype) + np.fmod(a, -7))


@pytest.mark.parametrize(("name", "ref"), [
    ("exp", np.exp), ("sqrt", lambda x: np.sqrt(np.abs(x))), ("tanh", np.tanh),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("log", lambda x: np.log(np.abs(x))),
    ("rsqrt", lambda x: 1 / np.sqrt(np.abs(x))), ("round", np.round), ("erf", None),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_math(name: str, ref, dtype: str) -> None:
    n = 300
    A, B = Buffer("A", [n], dtype), Buffer("B", [n], dtype)
    needs_abs = name in ("sqrt", "log", "rsqrt")
    fn = getattr(T, name)
    body = loop(n, lambda i: BufferStore(B, fn(T.fabs(A[i]) if needs_abs else A[i]), [i]))
    ex = build(make_func("f", [A, B], body))
    a = (RNG.standard_normal(n) * 2).astype(dtype)
    a[:4] = [0.5, 1.5, 2.5, -2.5]  # round() must round half to even, like numpy
    b = np.zeros(n, dtype)
    ex(a, b)
    if ref is None:
        import math

        expected = np.array([math.erf(x) for x in a.astype("float64")])
    else:
        expected = ref(a.astype("float64"))
    np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-6)


def test_select_min_max_and_if_then_else() -> None:
    n = 100
    A, B = Buffer("A", [n], "float32"), Buffer("B", [n], "float32")
    body = loop(n, lambda i: BufferStore(B, Select(
        A[i] > 0.0, E.Min(A[i], E.FloatImm("float32", 0.5)),
        T.if_then_else(i < 50, E.Max(A[i], E.FloatImm("float32", -0.5)), A[i] * 2.0)), [i]))
    ex = build(make_func("f", [A, B], body))
    a = _data(n, "float32")
    b = np.zeros(n, "float32")
    ex(a, b)
    idx = np.arange(n)
    expected = np.where(a > 0, np.minimum(a, 0.5), np.where(idx < 50, np.maximum(a, -0.5), a * 2))
    np.testing.assert_allclose(b, expected.astype("float32"))


def test_vector_ramp_broadcast_store() -> None:
    n = 64
    A, B = Buffer("A", [n], "float32"), Buffer("B", [n], "float32")
    body = loop(n // 8, lambda i: BufferStore(
        B, BufferLoad(A, [Ramp(i * 8, 1, 8)]) * Broadcast(E.FloatImm("float32", 3.0), 8),
        [Ramp(i * 8, 1, 8)]))
    ex = build(make_func("f", [A, B], body))
    a = _data(n, "float32")
    b = np.zeros(n, "float32")
    ex(a, b)
    np.testing.assert_allclose(b, a * 3)


def test_symbolic_shape_and_scalar_parameter() -> None:
    n = Var("n", "int32")
    A, B = Buffer("A", [n], "float32"), Buffer("B", [n], "float32")
    alpha = Var("alpha", "float32")
    func = make_func("axpy", [A, B], loop(n, lambda i: BufferStore(B, B[i] + A[i] * alpha, [i])),
                     scalars=[alpha])
    ex = build(func)
    for size in (1, 17, 1000):
        a, b = _data(size, "float32"), _data(size, "float32")
        expected = b + a * np.float32(2.5)
        ex(a, b, 2.5)
        np.testing.assert_allclose(b, expected, rtol=1e-6)
    with pytest.raises(ValueError) as info:
        ex(np.zeros(3, "float32"), np.zeros(4, "float32"), 1.0)
    assert str(info.value) == ("axpy: argument 'B': expected shape (n,) with n = 3 (from argument "
                               "'A' shape[0]), got (4,)")


def test_large_temporary_goes_to_the_heap() -> None:
    n = 1 << 17
    A = Buffer("A", [n], "float32")
    tmp = Buffer("tmp", [n], "float32")
    body = seq([AllocBuffer(tmp),
                loop(n, lambda i: BufferStore(tmp, A[i] * 2.0, [i]), ForKind.PARALLEL),
                loop(n, lambda i: BufferStore(A, tmp[n - 1 - i], [i]), name="j")])
    ex = build(make_func("f", [A], body))
    assert "tvm_alloc(" in ex.inspect_source() and "free(tmp);" in ex.inspect_source()
    a = _data(n, "float32")
    expected = (a * 2)[::-1].copy()
    ex(a)
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("kind", [ForKind.SERIAL, ForKind.PARALLEL])
def test_failed_assert_raises_with_its_message(kind: ForKind) -> None:
    n = 64
    A = Buffer("A", [n], "int32")
    body = loop(n, lambda i: seq([AssertStmt(A[i] < 100, "A[i] must be below 100"),
                                  BufferStore(A, A[i] + 1, [i])]), kind)
    ex = build(make_func("checked", [A], body))
    a = np.zeros(n, "int32")
    ex(a)
    assert (a == 1).all()
    a[40] = 500
    with pytest.raises(TVMError, match=r"^checked: A\[i\] must be below 100$"):
        ex(a)


def test_openmp_probe_is_cached_and_used() -> None:
    tc = get_toolchain()
    first = tc.has_openmp
    assert tc.has_openmp is first and get_toolchain() is tc
    ex = build(_vadd(128, "float32", ForKind.PARALLEL))
    assert ("#pragma omp parallel for" in ex.inspect_source()) == first
    assert ("-fopenmp" in ex.compiler["flags"]) == first


def test_multiple_functions_in_one_module() -> None:
    mod = tvm.IRModule({"add": _vadd(8, "float32").with_attr("global_symbol", "add"),
                        "main": _vadd(8, "int32").with_attr("global_symbol", "main")})
    ex = tvm.compile(mod, target="c", tir_pipeline=identity)
    assert sorted(ex.entry_names) == ["add", "main"]
    a = np.ones(8, "float32")
    c = np.zeros(8, "float32")
    ex["add"](a, a, c)
    assert (c == 2).all()
    ai = np.ones(8, "int32")
    ci = np.zeros(8, "int32")
    ex(ai, ai, ci)  # "main" is the default entry
    assert (ci == 2).all()
