"""The host target's dispatch variants (tvm.host.dispatch) against numpy, over odd shapes (not
multiples of the vector lanes, register tiles or cache blocks), with the variant each call took
and the reasons a variant declines."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest
from hostir import loop

import tvm
from tvm.host.compiler import get_toolchain
from tvm.host.dispatch.common import PARALLEL_MIN
from tvm.host.dispatch.gemm import MIN_WORK
from tvm.host.dispatch.reduction import LANES
from tvm.ir import Buffer, BufferLoad, BufferStore, ForKind, PrimFunc, Var, seq
from tvm.target import Target
from tvm.tirx.operator.tile_primitive import list_registered_schedules, lower_tile_primitives
from tvm.tirx.operator.tile_primitive.dispatcher import DISPATCH_REGISTRY
from tvm.tirx.operator.tile_primitive.ops import make_call

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="no C compiler")
RNG = np.random.default_rng(7)


def func_of(buffers: list[Buffer], *calls: Any, name: str = "main") -> PrimFunc:
    return PrimFunc([b.data for b in buffers], seq(list(calls)), {b.data: b for b in buffers},
                    name=name)


def variants_of(func: PrimFunc) -> list[str]:
    trace: list[tuple[str, str, str]] = []
    tvm.driver.ensure_builtin_backends()
    lower_tile_primitives(func, Target("c"), trace=trace)
    return [variant for _, _, variant in trace]


def run(func: PrimFunc, *arrays: np.ndarray) -> list[np.ndarray]:
    ex = tvm.compile(func, target="c")
    args = [a.copy() for a in arrays]
    ex(*args)
    return args


def rand(shape: tuple[int, ...], dtype: str = "float32") -> np.ndarray:
    x = RNG.uniform(-2.0, 2.0, shape)
    if dtype == "bfloat16":
        return x.astype(np.float32).astype(pytest.importorskip("ml_dtypes").bfloat16)
    if dtype.startswith("int"):
        return RNG.integers(-50, 50, shape).astype(dtype)
    return x.astype(dtype)


def forced_error(func: PrimFunc) -> str:
    tvm.driver.ensure_builtin_backends()
    with pytest.raises(RuntimeError) as info:
        lower_tile_primitives(func, Target("c"))
    return str(info.value)


# -- registration -----------------------------------------------------------------------------------
def test_host_variants_are_registered_for_c_by_the_host_backend() -> None:
    tvm.driver.ensure_builtin_backends()
    table = list_registered_schedules()
    assert table["tirx.tile.add"]["c"] == ["vector"]
    assert table["tirx.tile.sum"]["c"] == ["vector"]
    assert table["tirx.tile.gemm"]["c"] == ["blocked"]
    assert table["tirx.tile.add"]["*"] == ["fallback"]
    assert table["tirx.tile.gemm"]["llvm"] == ["blocked"]  # the host backend builds llvm too
    assert DISPATCH_REGISTRY.owner_of(("tirx.tile.gemm", "c", "blocked")) == "c"


# -- element-wise ------------------------------------------------------------------------------------
ELEMENTWISE = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("fdiv", lambda a, b: a / b),
    ("maximum", np.fmax),
    ("minimum", np.fmin),
]


@pytest.mark.parametrize(("name", "ref"), ELEMENTWISE, ids=[n for n, _ in ELEMENTWISE])
@pytest.mark.parametrize("src2_shape", [(37, 53), (1, 53), (53,), (37, 1)])
def test_binary_broadcasts_like_numpy(name: str, ref: Any, src2_shape: tuple[int, ...]) -> None:
    D, A, B = Buffer("D", [37, 53]), Buffer("A", [37, 53]), Buffer("B", list(src2_shape))
    func = func_of([D, A, B], make_call(name, D, A, B))
    assert variants_of(func) == ["vector"]
    a, b = rand((37, 53)), rand(src2_shape)
    a[3, 5], b.flat[1] = np.nan, np.nan  # max/min ignore NaN operands, as fmaxf does
    d, _, _ = run(func, np.zeros((37, 53), "float32"), a, b)
    np.testing.assert_allclose(d, ref(a, b), rtol=1e-6, equal_nan=True)


UNARY = [
    ("exp", np.exp, (-30.0, 30.0)),
    ("sqrt", np.sqrt, (0.0, 9.0)),
    ("rsqrt", lambda x: 1 / np.sqrt(x), (0.1, 9.0)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), (-20.0, 20.0)),
    ("relu", lambda x: np.maximum(x, 0), (-2.0, 2.0)),
    ("neg", np.negative, (-2.0, 2.0)),
    ("abs", np.abs, (-2.0, 2.0)),
]


@pytest.mark.parametrize(("name", "ref", "lohi"), UNARY, ids=[n for n, _, _ in UNARY])
def test_unary_matches_numpy_on_an_odd_1d_size(name: str, ref: Any, lohi: Any) -> None:
    n = 1031
    D, A = Buffer("D", [n]), Buffer("A", [n])
    func = func_of([D, A], make_call(name, D, A))
    assert variants_of(func) == ["vector"]
    a = RNG.uniform(*lohi, n).astype("float32")
    d, _ = run(func, np.zeros(n, "float32"), a)
    np.testing.assert_allclose(d, ref(a.astype(np.float64)), rtol=2e-6, atol=1e-30)


def test_exp_is_within_two_ulp_and_keeps_the_special_values() -> None:
    x = np.concatenate([RNG.uniform(-105, 90, 20000).astype("float32"),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72283, 88.7229,
                                  -87.3, -103.9, -104.5], "float32")])
    D, A = Buffer("D", [x.size]), Buffer("A", [x.size])
    d, _ = run(func_of([D, A], make_call("exp", D, A)), np.zeros_like(x), x)
    exact = np.exp(x.astype(np.float64))
    with np.errstate(over="ignore"):
        rounded = exact.astype(np.float32)
    normal = np.isfinite(rounded) & (rounded > np.finfo(np.float32).tiny)
    ulp = np.abs(d[normal] - exact[normal]) / np.spacing(rounded[normal])
    assert ulp.max() <= 2.0
    np.testing.assert_array_equal(d[-10:][[1, 2, 3, 4, 6, 9]], [np.inf, 0, 1, 1, np.inf, 0])
    assert np.isnan(d[-10])


def test_fma_cast_select_fill_and_copy_of_a_region() -> None:
    D, A, B = Buffer("D", [9, 70], "float16"), Buffer("A", [9, 70]), Buffer("B", [9, 70])
    P = Buffer("P", [9, 70], "bool")
    S = Buffer("S", [20, 80])
    func = func_of([D, A, B, P, S],
                   make_call("fma", D, A, B, 0.5),
                   make_call("select", A, A, B, P),
                   make_call("copy", S[3:12, 5:75], A),
                   make_call("fill", S[0:2, 0:80], 1.5))
    assert variants_of(func) == ["vector"] * 4
    a, b = rand((9, 70)), rand((9, 70))
    p = RNG.integers(0, 2, (9, 70)).astype(bool)
    d, a2, _, _, s = run(func, np.zeros((9, 70), "float16"), a, b, p, np.zeros((20, 80), "float32"))
    np.testing.assert_allclose(d.astype(np.float32), (a * b + 0.5).astype(np.float16)
                               .astype(np.float32), rtol=1e-3)
    np.testing.assert_array_equal(a2, np.where(p, a, b))
    np.testing.assert_array_equal(s[3:12, 5:75], np.where(p, a, b))
    assert (s[0:2] == 1.5).all() and (s[12:] == 0).all() and (s[2:3] == 0).all()


def test_bfloat16_is_computed_in_float32() -> None:
    D, A, B = (Buffer(x, [33, 41], "bfloat16") for x in "DAB")
    func = func_of([D, A, B], make_call("mul", D, A, B))
    assert variants_of(func) == ["vector"]
    a, b = rand((33, 41), "bfloat16"), rand((33, 41), "bfloat16")
    d, _, _ = run(func, np.zeros_like(a), a, b)
    np.testing.assert_array_equal(d.astype(np.float32), (a.astype(np.float32) * b.astype(np.float32))
                                  .astype(a.dtype).astype(np.float32))


def test_large_ops_run_on_openmp_threads() -> None:
    if not get_toolchain().has_openmp:
        pytest.skip("the C compiler has no OpenMP")
    rows = PARALLEL_MIN // 100 + 1  # just above the threshold with 100 columns
    small = (Buffer("A", [rows - 2, 100]), Buffer("B", [rows - 2, 100]))
    big = (Buffer("A", [rows, 100]), Buffer("B", [rows, 100]))
    for (A, B), parallel in ((small, False), (big, True)):
        src = tvm.compile(func_of([A, B], make_call("exp", A, B)), target="c").inspect_source()
        assert ("#pragma omp parallel for" in src) is parallel


def test_elementwise_declines_a_strided_destination() -> None:
    D = Buffer("D", [8, 16], strides=[32, 2])
    A = Buffer("A", [8, 16])
    func = func_of([D, A], make_call("exp", D, A))
    assert variants_of(func) == ["fallback"]
    text = forced_error(func_of([D, A], make_call("exp", D, A, dispatch="vector")))
    assert "predicate 'dst_contiguous': dst (D) has innermost stride 2, not 1" in text


def test_elementwise_at_cta_scope_runs_on_thread_0() -> None:
    from tvm.ir import Evaluate, ScopeIdDef, Var
    from tvm.tirx import op as T

    A, B = Buffer("A", [5, 77]), Buffer("B", [5, 77])
    bx, tx = Var("bx"), Var("tx")
    func = func_of([A, B], Evaluate(T.device_entry()), ScopeIdDef("cta_id", [bx], [1]),
                   ScopeIdDef("thread_id", [tx], [64]), make_call("exp", B, A, scope="cta"))
    assert variants_of(func) == ["vector"]
    a = rand((5, 77))
    _, b = run(func, a, np.zeros_like(a))
    np.testing.assert_allclose(b, np.exp(a), rtol=2e-6)


# -- reductions --------------------------------------------------------------------------------------
REDUCE = {"sum": np.sum, "max": np.max, "min": np.min}


@pytest.mark.parametrize("name", list(REDUCE))
@pytest.mark.parametrize(("shape", "dst"), [((37, 53), (37,)), ((5, 3), (5, 1)),
                                            ((4, 2 * LANES), (4, 1)), ((1031,), (1,)),
                                            ((3, 4, 45), (3, 4))])
def test_reduction_over_the_innermost_axis(name: str, shape: tuple[int, ...],
                                           dst: tuple[int, ...]) -> None:
    S, D = Buffer("S", list(shape)), Buffer("D", list(dst))
    func = func_of([D, S], make_call(name, D, S, axes=-1))
    assert variants_of(func) == ["vector"]
    s = rand(shape)
    d, _ = run(func, np.zeros(dst, "float32"), s)
    np.testing.assert_allclose(d, REDUCE[name](s, axis=-1).reshape(dst), rtol=1e-5, atol=1e-5)


def test_reduction_accumulates_int_and_16_bit_sources() -> None:
    S, D = Buffer("S", [7, 99], "float16"), Buffer("D", [7, 1])
    Si, Di = Buffer("Si", [6, 40], "int32"), Buffer("Di", [6], "int32")
    func = func_of([D, S, Di, Si], make_call("sum", D, S, axes=-1, accum=True),
                   make_call("max", Di, Si, axes=1))
    assert variants_of(func) == ["vector", "vector"]
    s, si = rand((7, 99), "float16"), rand((6, 40), "int32")
    d0 = rand((7, 1))
    d, _, di, _ = run(func, d0, s, np.zeros(6, "int32"), si)
    np.testing.assert_allclose(d, d0 + s.astype(np.float32).sum(-1, keepdims=True), rtol=1e-4)
    np.testing.assert_array_equal(di, si.max(-1))


def test_reduction_declines_other_axes_and_strided_sources() -> None:
    S, D = Buffer("S", [6, 10]), Buffer("D", [10])
    func = func_of([D, S], make_call("sum", D, S, axes=0))
    assert variants_of(func) == ["fallback"]
    d, s = run(func, np.zeros(10, "float32"), rand((6, 10)))
    np.testing.assert_allclose(d, s.sum(0), rtol=1e-5)
    text = forced_error(func_of([D, S], make_call("sum", D, S, axes=0, dispatch="vector")))
    assert "predicate 'innermost_axis': reduces axes [0]; this variant reduces the innermost " \
           "axis (1) only" in text
    St = Buffer("St", [6, 10], strides=[30, 3])
    text = forced_error(func_of([D, St], make_call("max", D[0:6], St, dispatch="vector")))
    assert "predicate 'src_contiguous': src (St) has innermost stride 3, not 1" in text


# -- fusion ------------------------------------------------------------------------------------------
def _softmax(m: int, n: int, row_shape: tuple[int, ...]) -> PrimFunc:
    X, Y = Buffer("X", [m, n]), Buffer("Y", [m, n])
    mx, sm = Buffer("mx", list(row_shape)), Buffer("sm", list(row_shape))
    from tvm.ir import AllocBuffer

    return func_of([X, Y], AllocBuffer(mx), AllocBuffer(sm),
                   make_call("max", mx, X, axes=-1), make_call("sub", Y, X, mx),
                   make_call("exp", Y, Y), make_call("sum", sm, Y, axes=-1),
                   make_call("fdiv", Y, Y, sm), name="softmax")


def test_row_softmax_fuses_into_one_loop_over_rows() -> None:
    m = PARALLEL_MIN // 70 + 1  # rows, so that the ops run on OpenMP threads
    func = _softmax(m, 70, (m, 1))
    ex = tvm.compile(func, target="c")
    src = ex.inspect_source()
    body = src[src.index("int32_t softmax("):]
    assert body.count(f"for (int32_t row0 = 0; row0 < {m}; ++row0)") == 1  # one loop over rows
    if get_toolchain().has_openmp:
        assert body.count("#pragma omp parallel for") == 1
    assert "tvm_expf((X[" in body  # sub and exp fused: one store
    x = rand((m, 70)) * 5
    y = np.zeros_like(x)
    ex(x, y)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-8)


def test_loops_that_read_other_rows_are_not_fused() -> None:
    # (n,) broadcasts over rows numpy-style: the subtraction reads mx[j] for every row i, so
    # the loop writing mx must finish before it starts.
    func = _softmax(40, 40, (40,))
    src = tvm.compile(func, target="c").inspect_source()
    body = src[src.index("int32_t softmax("):src.index("softmax__tvm_packed")]
    # max | sub, exp and sum (which reads Y rows the same way) | fdiv (reads sm[j])
    assert body.count("\n  for (") == 3
    x = rand((40, 40))
    _, y = run(func, x, np.zeros_like(x))
    mx = x.max(-1)
    e = np.exp(x - mx)
    np.testing.assert_allclose(y, e / e.sum(-1), rtol=1e-5, atol=1e-8)


# -- gemm --------------------------------------------------------------------------------------------
# odd shapes (none a multiple of the library's blocks; M = 1, K = 1, N = 3), each with at least
# MIN_WORK multiply-adds so that the library takes them
GEMM_SHAPES = [(37, 53, 41), (1, 677, 105), (150, 70, 300), (130, 600, 1), (2000, 3, 17)]


@pytest.mark.parametrize(("m", "n", "k"), GEMM_SHAPES)
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_matches_numpy(m: int, n: int, k: int, ta: bool, tb: bool) -> None:
    A = Buffer("A", [k, m] if ta else [m, k])
    B = Buffer("B", [n, k] if tb else [k, n])
    D = Buffer("D", [m, n])
    func = func_of([D, A, B], make_call("gemm", D, A, B, transpose_A=ta, transpose_B=tb))
    assert variants_of(func) == ["blocked"]
    a, b = rand(tuple(A.static_shape())), rand(tuple(B.static_shape()))
    d, _, _ = run(func, np.zeros((m, n), "float32"), a, b)
    ref = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b)
    np.testing.assert_allclose(d, ref, rtol=1e-4, atol=1e-4 * np.sqrt(k))


def test_gemm_alpha_beta_bias_row_regions_and_accumulation() -> None:
    m, n, k = 45, 38, 70
    A, B, C, D = Buffer("A", [m, k]), Buffer("B", [k, n]), Buffer("C", [1, n]), Buffer("D", [m, n])
    Big, E, Bt = Buffer("Big", [60, 80]), Buffer("E", [m + 3, n + 4]), Buffer("Bt", [n, k])
    func = func_of([D, A, B, C, Big, E, Bt],
                   make_call("gemm", D, A, B, C, alpha=0.5, beta=2.0),        # bias row
                   make_call("gemm", D, A, B, D, beta=1.0),                  # D += A @ B
                   make_call("gemm", E[2:2 + m, 3:3 + n], Big[5:5 + m, 3:3 + k],
                             B[0:k, 0:n]),                                   # regions
                   make_call("gemm_async", E[0:m, 0:n], A, Bt, accum=True))  # A @ Bt^T
    assert variants_of(func) == ["blocked"] * 4
    a, b, c, big, e = rand((m, k)), rand((k, n)), rand((1, n)), rand((60, 80)), rand((m + 3, n + 4))
    d, _, _, _, _, e_out, _ = run(func, np.zeros((m, n), "float32"), a, b, c, big, e,
                                  np.ascontiguousarray(b.T))
    ab = a.astype(np.float64) @ b
    np.testing.assert_allclose(d, 0.5 * ab + 2.0 * c + ab, rtol=1e-4, atol=1e-3)
    want = e.astype(np.float64).copy()
    want[2:2 + m, 3:3 + n] = big[5:5 + m, 3:3 + k].astype(np.float64) @ b
    want[0:m, 0:n] += ab
    np.testing.assert_allclose(e_out, want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(("in_dt", "out_dt"), [("float64", "float64"), ("float16", "float32"),
                                               ("bfloat16", "float32"), ("float16", "float16"),
                                               ("bfloat16", "bfloat16")])
def test_gemm_types(in_dt: str, out_dt: str) -> None:
    m, n, k = 29, 41, 300
    A, B, D = Buffer("A", [m, k], in_dt), Buffer("B", [k, n], in_dt), Buffer("D", [m, n], out_dt)
    func = func_of([D, A, B], make_call("gemm", D, A, B))
    assert variants_of(func) == ["blocked"]
    a, b = rand((m, k), in_dt), rand((k, n), in_dt)
    d0 = np.zeros((m, n), dtype=a.dtype if out_dt == in_dt else out_dt)
    d, _, _ = run(func, d0, a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if out_dt in ("float16", "bfloat16"):  # one rounding of the float32 result
        np.testing.assert_allclose(d.astype(np.float64), ref, rtol=1e-2, atol=0.1)
    else:
        tol = 1e-10 if out_dt == "float64" else 1e-4
        np.testing.assert_allclose(d, ref, rtol=tol, atol=tol * np.sqrt(k))


@pytest.mark.parametrize(("m", "n", "k"), [(8, 8, 8), (16, 16, 16), (32, 32, 32), (37, 53, 29)])
def test_small_constant_gemm_is_left_to_the_fallback(m: int, n: int, k: int) -> None:
    # Packing panels costs more than the fallback's constant-bound loops save below MIN_WORK
    # multiply-adds (a tiled matmul of 16^3 tile calls ran 24x slower through the library).
    A, B, D = Buffer("A", [m, k]), Buffer("B", [k, n]), Buffer("D", [m, n])
    func = func_of([D, A, B], make_call("gemm", D, A, B))
    assert m * n * k < MIN_WORK and variants_of(func) == ["fallback"]
    a, b = rand((m, k)), rand((k, n))
    d, _, _ = run(func, np.zeros((m, n), "float32"), a, b)
    np.testing.assert_allclose(d, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4 * np.sqrt(k))
    text = forced_error(func_of([D, A, B], make_call("gemm", D, A, B, dispatch="blocked")))
    assert (f"predicate 'enough_work': {m}x{n}x{k} = {m * n * k} multiply-adds < {MIN_WORK}: "
            "the fallback's constant loops beat packing") in text
    # the same gemm over symbolic extents still goes to the library (its size is not known)
    n_var = Var("n", "int32")
    As, Ds = Buffer("As", [m, n_var]), Buffer("Ds", [m, n])
    Bs = Buffer("Bs", [n_var, n])
    assert variants_of(func_of([Ds, As, Bs], make_call("gemm", Ds, As, Bs))) == ["blocked"]


def test_gemm_declines_with_reasons() -> None:
    Ai, Bi, Di = Buffer("A", [8, 8], "int32"), Buffer("B", [8, 8], "int32"), Buffer("D", [8, 8], "int32")
    func = func_of([Di, Ai, Bi], make_call("gemm", Di, Ai, Bi))
    assert variants_of(func) == ["fallback"]
    a, b = rand((8, 8), "int32"), rand((8, 8), "int32")
    d, _, _ = run(func, np.zeros((8, 8), "int32"), a, b)
    np.testing.assert_array_equal(d, a @ b)
    text = forced_error(func_of([Di, Ai, Bi], make_call("gemm", Di, Ai, Bi, dispatch="blocked")))
    assert ("predicate 'operand_types': operand types ['int32', 'int32', 'int32']: the library "
            "computes float64, or float32 from float32/float16/bfloat16") in text
    A3, B, D = Buffer("A3", [2, 64, 64]), Buffer("B", [64, 64]), Buffer("D", [64, 64])
    text = forced_error(func_of([D, A3, B], make_call("gemm", D, A3[0:2, :, :], B,
                                                      dispatch="blocked")))
    assert "A: batched gemm (leading extents ['2']) is left to the fallback" in text
    Ds = Buffer("Ds", [64, 64], strides=[128, 2])
    text = forced_error(func_of([Ds, A3, B], make_call("gemm", Ds, A3[0:1, :, :], B,
                                                       dispatch="blocked")))
    assert "predicate 'D_contiguous': D (Ds) has innermost stride 2, not 1" in text


# -- parallel loops restate their range for the optimizer ----------------------------------------
def test_parallel_loop_range_is_restated_only_for_invariant_bounds() -> None:
    # The statement is evaluated at every iteration, so only bounds that cannot change there
    # (no loads, no calls) get one; a bound read from memory is left to OpenMP.
    N, A = Buffer("N", [1], "int32"), Buffer("A", [16], "int32")
    body = loop(BufferLoad(N, [0]), lambda i: BufferStore(A, i + 1, [i]), ForKind.PARALLEL)
    func = PrimFunc([N.data, A.data], body, {N.data: N, A.data: A}, name="first_n")
    ex = tvm.compile(func, target="c")
    assert "__builtin_unreachable" not in ex.inspect_source()
    a = np.zeros(16, "int32")
    ex(np.array([11], "int32"), a)
    np.testing.assert_array_equal(a, np.r_[np.arange(1, 12), np.zeros(5, "int32")])
    # constant bounds get it
    B = Buffer("B", [16], "int32")
    const_func = PrimFunc([B.data], loop(16, lambda i: BufferStore(B, i, [i]), ForKind.PARALLEL),
                          {B.data: B}, name="fill")
    src = tvm.compile(const_func, target="c").inspect_source()
    assert "if (i < 0 || i >= 16) __builtin_unreachable();" in src
