"""The tile-primitive variants for Metal: which one is chosen, its MSL, and its numerics against
numpy on the CPU emulator."""

from __future__ import annotations

import numpy as np
import pytest
from metal_helpers import compile_metal

from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.operator.tile_primitive import get_variants


def test_variants_are_registered_for_metal():
    assert [c.variant for c in get_variants("sum", "metal")][:2] == ["simdgroup", "threadgroup"]
    assert get_variants("gemm", "metal")[0].variant == "simdgroup_matrix"
    assert get_variants("add", "metal")[0].variant == "threadgroup"
    assert get_variants("add", "metal")[-1].variant == "fallback"


# -- elementwise ----------------------------------------------------------------------------


@T.prim_func
def exp_add(A: T.Buffer((40, 50), "float32"), B: T.Buffer((40, 50), "float32"),
            C: T.Buffer((40, 50), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([96])
    S = T.alloc_buffer((40, 50), "float32", scope="shared")
    Tx.cta.exp(S, A)
    Tx.cta.add(S, S, B)
    Tx.cta.copy(C, S)


def test_elementwise_through_threadgroup_memory(rng):
    ex = compile_metal(exp_add)
    src = ex.inspect_source()
    assert "threadgroup float S[2000];" in src
    assert src.count("threadgroup_barrier(mem_flags::mem_threadgroup);") == 2
    a, b = rng.standard_normal((40, 50)).astype("float32"), rng.random((40, 50)).astype("float32")
    c = np.zeros((40, 50), "float32")
    ex.emulate(a, b, c)
    np.testing.assert_allclose(c, np.exp(a) + b, rtol=1e-5)


# -- reductions -----------------------------------------------------------------------------


def _reduce_kernel(op: str, m: int, n: int, threads: int, dtype: str, keep: bool) -> object:
    out_shape = (m, 1) if keep else (m,)
    dst_region = "B[0:M, 0:1]" if keep else "B[0:M]"
    src = f"""
@T.prim_func
def red(A: T.Buffer(({m}, {n}), "{dtype}"), B: T.Buffer({out_shape}, "{dtype}")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([{threads}])
    Tx.cta.{op}({dst_region.replace("M", str(m))}, A[0:{m}, 0:{n}], axes=-1)
"""
    from tvm import script

    return script.from_source(src, extra_vars={"Tx": Tx})


@pytest.mark.parametrize(("op", "m", "n", "threads", "dtype", "keep", "variant"), [
    ("sum", 16, 100, 128, "float32", False, "simd_sum"),
    ("max", 8, 33, 64, "float32", True, "simd_max"),
    ("min", 3, 1000, 256, "float32", False, "red_partials"),   # threadgroup variant
    ("sum", 2, 777, 128, "float16", True, "red_partials"),
    ("sum", 64, 64, 32, "float16", False, "simd_sum"),
])
def test_row_reductions(op, m, n, threads, dtype, keep, variant, rng):
    ex = compile_metal(_reduce_kernel(op, m, n, threads, dtype, keep))
    assert variant in ex.inspect_source()
    a = rng.standard_normal((m, n)).astype(dtype)
    b = np.zeros((m, 1) if keep else (m,), dtype)
    ex.emulate(a, b)
    ref = getattr(a.astype("float64"), op)(axis=-1, keepdims=keep)
    tol = 1e-5 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(b.astype("float64"), ref, rtol=tol, atol=tol * n ** 0.5)


def test_forced_threadgroup_variant(rng):
    @T.prim_func
    def rowsum(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([64])
        Tx.cta.sum(B, A, axes=-1, dispatch="threadgroup")

    ex = compile_metal(rowsum)
    assert "threadgroup float red_partials[2];" in ex.inspect_source()
    a = rng.standard_normal((8, 64)).astype("float32")
    b = np.zeros(8, "float32")
    ex.emulate(a, b)
    np.testing.assert_allclose(b, a.sum(-1), rtol=1e-5, atol=1e-5)


# -- gemm -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "ta", "tb", "threads"), [
    ("float32", False, False, 64),
    ("float32", True, False, 128),
    ("float32", False, True, 32),
    ("float16", False, False, 64),
])
def test_simdgroup_matrix_gemm(dtype, ta, tb, threads, rng):
    m, n, k = 24, 32, 16
    a_shape = (k, m) if ta else (m, k)
    b_shape = (n, k) if tb else (k, n)
    src = f"""
@T.prim_func
def mm(A: T.Buffer({a_shape}, "{dtype}"), B: T.Buffer({b_shape}, "{dtype}"),
       C: T.Buffer(({m}, {n}), "{dtype}")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([{threads}])
    As = T.alloc_buffer({a_shape}, "{dtype}", scope="shared")
    Tx.cta.copy(As, A)
    Tx.cta.gemm(C, As, B, transpose_A={ta}, transpose_B={tb})
"""
    from tvm import script

    ex = compile_metal(script.from_source(src, extra_vars={"Tx": Tx}))
    text = ex.inspect_source()
    elem = "float" if dtype == "float32" else "half"
    assert f"simdgroup_{elem}8x8 simd_mats[3];" in text
    assert "simdgroup_multiply_accumulate(simd_mats[0], simd_mats[1], simd_mats[2], " \
           "simd_mats[0]);" in text
    a = rng.standard_normal(a_shape).astype(dtype)
    b = rng.standard_normal(b_shape).astype(dtype)
    c = np.zeros((m, n), dtype)
    ex.emulate(a, b, c)
    ref = (a.T if ta else a).astype("float64") @ (b.T if tb else b).astype("float64")
    tol = 1e-4 if dtype == "float32" else 5e-2
    np.testing.assert_allclose(c.astype("float64"), ref, rtol=tol, atol=tol)


def test_gemm_accumulates_into_d(rng):
    @T.prim_func
    def mm_acc(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"),
               C: T.Buffer((16, 16), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([64])
        Tx.cta.gemm(C, A, B, C, beta=1.0)

    ex = compile_metal(mm_acc)
    assert "simdgroup_load(simd_mats[0], " in ex.inspect_source()
    a = rng.standard_normal((16, 8)).astype("float32")
    b = rng.standard_normal((8, 16)).astype("float32")
    c = rng.standard_normal((16, 16)).astype("float32")
    expected = c + a @ b
    ex.emulate(a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_gemm_not_multiple_of_8_falls_back(rng):
    @T.prim_func
    def mm_odd(A: T.Buffer((12, 5), "float32"), B: T.Buffer((5, 9), "float32"),
               C: T.Buffer((12, 9), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([64])
        Tx.cta.gemm(C, A, B)

    ex = compile_metal(mm_odd)
    assert "simdgroup" not in ex.inspect_source().split("using namespace metal;")[1]
    a = rng.standard_normal((12, 5)).astype("float32")
    b = rng.standard_normal((5, 9)).astype("float32")
    c = np.zeros((12, 9), "float32")
    ex.emulate(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
