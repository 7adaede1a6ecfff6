"""Every tile primitive, lowered by the generic fallback and compiled for the host C target,
against numpy: several shapes and dtypes, thread scope (host form) and CTA scope (kernel form).

These need ``tvm.compile(func, target="c")`` (the host backend); they skip until it is present.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from tile_helpers import call, func_of, kernel_of

from tvm.ir import Buffer

SHAPES = [(4, 8), (3, 5), (16, 33)]
FLOATS = ["float32", "float16", "bfloat16"]


@pytest.fixture(scope="module")
def compile_c() -> Callable[..., Any]:
    try:
        from tvm.driver import compile as tvm_compile
    except ImportError as err:
        pytest.skip(f"tvm.compile is not available yet ({err})")
    from tvm import driver
    from tvm.target import KIND_REGISTRY

    ensure = getattr(driver, "ensure_builtin_backends", None)
    if ensure is not None:
        ensure()  # a source checkout loads the host backend on first use
    if "c" not in KIND_REGISTRY:
        pytest.skip("the host C target kind 'c' is not registered")
    return tvm_compile


def np_dtype(dtype: str) -> Any:
    if dtype == "bfloat16":
        return pytest.importorskip("ml_dtypes").bfloat16
    return np.dtype(dtype)


def tol(dtype: str) -> float:
    return {"float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}.get(dtype, 0)


def rand(shape: tuple[int, ...], dtype: str, rng: np.random.Generator, *, positive: bool = False) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("int"):
        lo = 1 if positive else -9
        return rng.integers(lo, 10, shape).astype(dtype)
    x = rng.uniform(0.1, 2.0, shape) if positive else rng.uniform(-2.0, 2.0, shape)
    return x.astype(np.float32).astype(np_dtype(dtype))


def run(compile_c, make, arrays: list[np.ndarray], dtypes: list[str], scope: str, threads: int = 8) -> np.ndarray:
    bufs = [Buffer(f"B{i}", list(a.shape), d) for i, (a, d) in enumerate(zip(arrays, dtypes))]
    c = make(*bufs)
    c = c.replace(scope=scope)
    if scope == "thread":
        f = func_of(bufs, c)
    else:
        f, _ = kernel_of(bufs, threads, c)
    ex = compile_c(f, target="c")
    args = [a.copy() for a in arrays]
    ex(*args)
    return args[0]


def close(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    t = tol(dtype)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want).astype(np.float64),
                               rtol=t, atol=t)


def ref_cast(x: np.ndarray, dtype: str) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np_dtype(dtype))


SCOPES = ["thread", "cta"]


def _sig(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


UNARY_REF = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x, "abs": np.abs, "neg": np.negative, "silu": lambda x: x * _sig(x),
    "tanh": np.tanh, "sigmoid": _sig, "relu": lambda x: np.maximum(x, 0),
}
POSITIVE_ONLY = {"log", "sqrt", "rsqrt", "reciprocal"}
INT_UNARY = {"abs", "neg", "relu"}
BINARY_REF = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "fdiv": None,
              "maximum": np.maximum, "minimum": np.minimum}


def f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [*FLOATS, "int32"])
def test_copy_fill_zero(compile_c, scope: str, shape, dtype: str) -> None:
    rng = np.random.default_rng(0)
    dst, src = rand(shape, dtype, rng), rand(shape, dtype, rng)
    close(run(compile_c, lambda d, s: call("copy", d, s), [dst, src], [dtype] * 2, scope), src, dtype)
    close(run(compile_c, lambda d, s: call("copy_async", d, s), [dst, src], [dtype] * 2, scope), src, dtype)
    close(run(compile_c, lambda d, s: call("permute_layout", d, s), [dst, src], [dtype] * 2, scope), src, dtype)
    close(run(compile_c, lambda d: call("fill", d, 3), [dst], [dtype], scope), np.full(shape, 3), dtype)
    close(run(compile_c, lambda d: call("memset", d, 2), [dst], [dtype], scope), np.full(shape, 2), dtype)
    close(run(compile_c, lambda d: call("zero", d), [dst], [dtype], scope), np.zeros(shape), dtype)


@pytest.mark.parametrize("scope", SCOPES)
def test_copy_of_regions_and_unit_dims(compile_c, scope: str) -> None:
    rng = np.random.default_rng(1)
    big, dst = rand((8, 12), "float32", rng), rand((4, 6), "float32", rng)
    got = run(compile_c, lambda d, s: call("copy", d, s[2:6, 3:9]), [dst, big], ["float32"] * 2, scope)
    close(got, big[2:6, 3:9], "float32")
    col, vec = rand((6, 1), "float32", rng), rand((6,), "float32", rng)
    close(run(compile_c, lambda d, s: call("copy", d, s), [vec, col], ["float32"] * 2, scope), col[:, 0], "float32")


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize(("dst_dt", "src_dt"), [("float16", "float32"), ("float32", "float16"),
                                                ("bfloat16", "float32"), ("int32", "float32"),
                                                ("float32", "int32")])
def test_cast(compile_c, scope: str, dst_dt: str, src_dt: str) -> None:
    rng = np.random.default_rng(2)
    dst, src = rand((5, 7), dst_dt, rng), rand((5, 7), src_dt, rng) * 3
    want = np.trunc(f64(src)) if dst_dt == "int32" else ref_cast(src, dst_dt)
    close(run(compile_c, lambda d, s: call("cast", d, s), [dst, src], [dst_dt, src_dt], scope), want, dst_dt)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("shape", SHAPES[:2])
@pytest.mark.parametrize("dtype", [*FLOATS, "int32"])
@pytest.mark.parametrize("op", sorted(UNARY_REF))
def test_unary(compile_c, op: str, dtype: str, shape, scope: str) -> None:
    if dtype == "int32" and op not in INT_UNARY:
        pytest.skip("float-only op")
    rng = np.random.default_rng(3)
    dst, src = rand(shape, dtype, rng), rand(shape, dtype, rng, positive=op in POSITIVE_ONLY)
    got = run(compile_c, lambda d, s: call(op, d, s), [dst, src], [dtype] * 2, scope)
    close(got, UNARY_REF[op](f64(src)), dtype)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_with_bias_and_scale(compile_c, dtype: str, scope: str) -> None:
    rng = np.random.default_rng(4)
    dst, src, bias = rand((4, 8), dtype, rng), rand((4, 8), dtype, rng), rand((4, 1), dtype, rng)
    got = run(compile_c, lambda d, s, b: call("exp", d, s, bias=b, scale=0.5), [dst, src, bias],
              [dtype] * 3, scope)
    close(got, np.exp(f64(src) * 0.5 + f64(bias)), dtype)
    got = run(compile_c, lambda d, s: call("sqrt", d, s, bias=4.5, scale=2.0), [dst, src], [dtype] * 2, scope)
    close(got, np.sqrt(f64(src) * 2.0 + 4.5), dtype)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("dtype", [*FLOATS, "int32"])
@pytest.mark.parametrize("op", sorted(BINARY_REF))
def test_binary(compile_c, op: str, dtype: str, scope: str) -> None:
    rng = np.random.default_rng(5)
    shape = (6, 10)
    dst, a = rand(shape, dtype, rng), rand(shape, dtype, rng)
    b = rand(shape, dtype, rng, positive=op == "fdiv")
    row = rand((1, 10), dtype, rng, positive=op == "fdiv")

    def ref(x, y):
        if op == "fdiv":
            return f64(x) // f64(y) if dtype == "int32" else f64(x) / f64(y)
        return BINARY_REF[op](f64(x), f64(y))

    close(run(compile_c, lambda d, x, y: call(op, d, x, y), [dst, a, b], [dtype] * 3, scope), ref(a, b), dtype)
    close(run(compile_c, lambda d, x, y: call(op, d, x, y), [dst, a, row], [dtype] * 3, scope), ref(a, row), dtype)
    close(run(compile_c, lambda d, x: call(op, d, x, 3), [dst, a], [dtype] * 2, scope), ref(a, np.float64(3)), dtype)
    close(run(compile_c, lambda d, x: call(op, d, 3, x), [dst, b], [dtype] * 2, scope), ref(np.float64(3), b), dtype)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("dtype", [*FLOATS, "int32"])
def test_fma_and_select(compile_c, dtype: str, scope: str) -> None:
    rng = np.random.default_rng(6)
    dst, a, b, c = (rand((5, 6), dtype, rng) for _ in range(4))
    got = run(compile_c, lambda d, x, y, z: call("fma", d, x, y, z), [dst, a, b, c], [dtype] * 4, scope)
    close(got, f64(a) * f64(b) + f64(c), dtype)
    mask = rand((5, 6), "bool", rng)
    got = run(compile_c, lambda d, x, y, p: call("select", d, x, y, p), [dst, a, b, mask],
              [dtype, dtype, dtype, "bool"], scope)
    close(got, np.where(mask, f64(a), f64(b)), dtype)
    got = run(compile_c, lambda d, x: call("select", d, x, 0, True),
              [dst, a], [dtype] * 2, scope)
    close(got, a, dtype)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("dtype", [*FLOATS, "int32"])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize(("shape", "axes", "keepdims"), [
    ((4, 8), -1, False), ((4, 8), 0, False), ((4, 8), -1, True), ((3, 5, 7), (0, 2), False),
    ((6, 9), (0, 1), True),
])
def test_reductions(compile_c, op: str, dtype: str, shape, axes, keepdims: bool, scope: str) -> None:
    rng = np.random.default_rng(7)
    src = rand(shape, dtype, rng)
    want = getattr(np, op)(f64(src), axis=axes, keepdims=keepdims)
    want = np.atleast_1d(want)
    dst = rand(want.shape, dtype, rng)
    got = run(compile_c, lambda d, s: call(op, d, s, axes=axes), [dst, src], [dtype] * 2, scope)
    close(got, want, dtype)
    acc_want = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op](f64(dst), want)
    got = run(compile_c, lambda d, s: call(op, d, s, axes=axes, accum=True), [dst, src], [dtype] * 2, scope)
    close(got, acc_want, dtype)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("dtype", [*FLOATS, "int32"])
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize(("m", "n", "k"), [(4, 6, 5), (16, 16, 16), (1, 7, 3)])
def test_gemm(compile_c, m: int, n: int, k: int, ta: bool, tb: bool, dtype: str, scope: str) -> None:
    rng = np.random.default_rng(8)
    a = rand((k, m) if ta else (m, k), dtype, rng)
    b = rand((n, k) if tb else (k, n), dtype, rng)
    c, d = rand((m, n), dtype, rng), rand((m, n), dtype, rng)
    oa, ob = (f64(a).T if ta else f64(a)), (f64(b).T if tb else f64(b))
    t = dtype
    got = run(compile_c, lambda D, A, B: call("gemm", D, A, B, transpose_A=ta, transpose_B=tb),
              [d, a, b], [dtype] * 3, scope)
    close(got, oa @ ob, t)
    alpha, beta = (2, 3) if dtype == "int32" else (0.5, 2.0)
    got = run(compile_c, lambda D, A, B, C: call("gemm", D, A, B, C, ta, tb, alpha, beta),
              [d, a, b, c], [dtype] * 4, scope)
    close(got, alpha * (oa @ ob) + beta * f64(c), t)
    got = run(compile_c, lambda D, A, B: call("gemm", D, A, B, D, ta, tb, beta=1.0), [d, a, b], [dtype] * 3, scope)
    close(got, oa @ ob + f64(d), t)
    # gemm_async takes B as [N, K] (K-major) unless transpose_B, as the seed does
    got = run(compile_c, lambda D, A, B: call("gemm_async", D, A, B, ta, not tb, True), [d, a, b],
              [dtype] * 3, scope)
    close(got, oa @ ob + f64(d), t)
    got = run(compile_c, lambda D, A, B: call("gemm_async", D, A, B, ta, not tb), [d, a, b],
              [dtype] * 3, scope)
    close(got, oa @ ob, t)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize(("shape", "order"), [((4, 8), (1, 0)), ((2, 3, 4), (2, 0, 1))])
def test_permute_layout_between_different_layouts(compile_c, scope: str, shape, order) -> None:
    """dst has a permuted (column-major-like) TileLayout: the logical values are kept and the
    physical order in memory is the permuted one."""
    from tvm.script import tirx as T

    rng = np.random.default_rng(11)
    src = rand(shape, "float32", rng)
    # Physical strides of dst: the axes in `order` are laid out slowest to fastest.
    strides = [0] * len(shape)
    step = 1
    for axis in reversed(order):
        strides[axis] = step
        step *= shape[axis]
    layout = T.TileLayout(T.S[tuple(shape):tuple(strides)])
    S = Buffer("S", list(shape), "float32")
    D = Buffer("D", list(shape), "float32", layout=layout)
    c = call("permute_layout", D, S).replace(scope=scope)
    f = func_of([D, S], c) if scope == "thread" else kernel_of([D, S], 8, c)[0]
    dst = np.zeros(shape, "float32")
    compile_c(f, target="c")(dst, src.copy())
    np.testing.assert_array_equal(dst.ravel(), src.transpose(order).ravel())


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("dtype", [*FLOATS, "int32"])
def test_compose_ops(compile_c, dtype: str, scope: str) -> None:
    rng = np.random.default_rng(9)
    x, y, z, dst = (rand((4, 8), dtype, rng) for _ in range(4))
    red = rand((4,), dtype, rng)
    got = run(compile_c, lambda d, a, b, c: call("binary_chain", d, a, b, c, "mul", "add"),
              [dst, x, y, z], [dtype] * 4, scope)
    close(got, f64(x) * f64(y) + f64(z), dtype)
    got = run(compile_c, lambda r, s: call("reduce_negate", r, s, "max"), [red, x], [dtype] * 2, scope)
    close(got, -f64(x).max(-1), dtype)

    def both(make, arrays):
        bufs_dt = [dtype] * len(arrays)
        from tvm.ir import Buffer as Buf

        bufs = [Buf(f"B{i}", list(a.shape), d) for i, (a, d) in enumerate(zip(arrays, bufs_dt))]
        c = make(*bufs).replace(scope=scope)
        f = func_of(bufs, c) if scope == "thread" else kernel_of(bufs, 8, c)[0]
        args = [a.copy() for a in arrays]
        compile_c(f, target="c")(*args)
        return args

    unary, ref = ("abs", np.abs) if dtype == "int32" else ("exp", np.exp)
    d_out, r_out, _ = both(lambda d, r, s: call("unary_reduce", d, r, s, unary, "sum"), [dst, red, x])
    close(d_out, ref(f64(x)), dtype)
    close(r_out, f64(d_out).sum(-1), dtype)
    d_out, r_out, _, _ = both(lambda d, r, a, b: call("binary_reduce", d, r, a, b, "sub", "max"),
                              [dst, red, x, y])
    close(d_out, f64(x) - f64(y), dtype)
    close(r_out, f64(d_out).max(-1), dtype)


@pytest.mark.parametrize("scope", SCOPES)
def test_compose_op_block(compile_c, scope: str) -> None:
    """``with Tx.compose_op():`` runs its calls in order: (x + y) then exp of that, summed."""
    from tvm.tirx.operator.tile_primitive.ops import make_compose_op

    rng = np.random.default_rng(11)
    x, y = rand((4, 8), "float32", rng), rand((4, 8), "float32", rng)
    X, Y, T1, T2 = (Buffer(n, [4, 8]) for n in ("X", "Y", "T1", "T2"))
    R = Buffer("R", [4])
    block = make_compose_op([call("add", T1, X, Y, scope=scope), call("exp", T2, T1, scope=scope),
                             call("sum", R, T2, scope=scope)], scope=scope)
    bufs = [R, X, Y, T1, T2]
    f = func_of(bufs, block) if scope == "thread" else kernel_of(bufs, 8, block)[0]
    args = [np.zeros(4, "float32"), x, y, np.zeros_like(x), np.zeros_like(x)]
    compile_c(f, target="c")(*args)
    close(args[0], np.exp(f64(x) + f64(y)).sum(-1), "float32")


def test_kernel_form_several_ops_in_sequence(compile_c) -> None:
    """A row softmax from tile primitives at CTA scope: max, sub, exp, sum, div."""
    rng = np.random.default_rng(10)
    x = rand((8, 16), "float32", rng)
    X, Y = Buffer("X", [8, 16]), Buffer("Y", [8, 16])
    mx, sm = Buffer("mx", [8, 1]), Buffer("sm", [8, 1])
    f, _ = kernel_of([X, Y, mx, sm], 32,
                     call("max", mx, X, scope="cta"), call("sub", Y, X, mx, scope="cta"),
                     call("exp", Y, Y, scope="cta"), call("sum", sm, Y, scope="cta"),
                     call("fdiv", Y, Y, sm, scope="cta"))
    args = [x.copy(), np.zeros_like(x), np.zeros((8, 1), "float32"), np.zeros((8, 1), "float32")]
    compile_c(f, target="c")(*args)
    e = np.exp(x - x.max(-1, keepdims=True))
    close(args[1], e / e.sum(-1, keepdims=True), "float32")


# Every tile primitive the core defines, mapped to the test above that checks it against numpy.
# A new primitive fails here until it has a numeric test.
NUMERIC_TESTS = {
    "copy": "test_copy_fill_zero", "copy_async": "test_copy_fill_zero",
    "permute_layout": "test_permute_layout_between_different_layouts", "fill": "test_copy_fill_zero",
    "memset": "test_copy_fill_zero", "zero": "test_copy_fill_zero", "cast": "test_cast",
    **{op: "test_unary" for op in UNARY_REF}, **{op: "test_binary" for op in BINARY_REF},
    "fma": "test_fma_and_select", "select": "test_fma_and_select",
    "sum": "test_reductions", "max": "test_reductions", "min": "test_reductions",
    "gemm": "test_gemm", "gemm_async": "test_gemm", "binary_chain": "test_compose_ops",
    "binary_reduce": "test_compose_ops", "unary_reduce": "test_compose_ops",
    "reduce_negate": "test_compose_ops", "compose_op": "test_compose_op_block",
}


def test_every_tile_primitive_has_a_numeric_test() -> None:
    from tvm.tirx.operator.tile_primitive.ops import TILE_OPS

    assert set(TILE_OPS) == set(NUMERIC_TESTS)
    assert all(name in globals() for name in NUMERIC_TESTS.values())
