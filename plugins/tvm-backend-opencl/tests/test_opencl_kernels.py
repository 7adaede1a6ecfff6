"""Kernels executed on this machine's OpenCL device (PoCL on a CPU) against numpy: an
elementwise kernel, reductions built from ``Tx`` primitives, a tiled matmul, data types,
dynamic ``__local`` memory, symbolic shapes, export and load."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from opencl_helpers import compile_opencl

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

pytestmark = pytest.mark.opencl

ROWS, COLS = 64, 256


@T.prim_func
def elementwise(A: T.Buffer((ROWS, COLS), "float32"), B: T.Buffer((ROWS, COLS), "float32"),
                C: T.Buffer((ROWS, COLS), "float32")):
    T.device_entry()
    bx = T.cta_id([ROWS])
    tx = T.thread_id([128])
    Tx.cta.exp(C[bx:bx + 1, 0:COLS], A[bx:bx + 1, 0:COLS], scale=0.5)
    Tx.cta.mul(C[bx:bx + 1, 0:COLS], C[bx:bx + 1, 0:COLS], B[bx:bx + 1, 0:COLS])
    Tx.cta.maximum(C[bx:bx + 1, 0:COLS], C[bx:bx + 1, 0:COLS], 0.75)


def test_elementwise_kernel(rng):
    ex = compile_opencl(elementwise)
    a, b = rng.standard_normal((ROWS, COLS), "float32"), rng.random((ROWS, COLS), "float32")
    c = np.zeros((ROWS, COLS), "float32")
    ex(a, b, c)
    np.testing.assert_allclose(c, np.maximum(np.exp(a * 0.5) * b, 0.75), rtol=1e-5)


SM_ROWS, SM_COLS, SM_THREADS = 8, 1000, 256


@T.prim_func
def softmax(A: T.Buffer((SM_ROWS, SM_COLS), "float32"), B: T.Buffer((SM_ROWS, SM_COLS), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([SM_THREADS])
    mx = T.alloc_buffer((SM_ROWS,), "float32", scope="shared")
    sm = T.alloc_buffer((SM_ROWS,), "float32", scope="shared")
    Tx.cta.max(mx, A, axes=-1)
    for i in T.serial(SM_ROWS):
        Tx.cta.sub(B[i:i + 1, 0:SM_COLS], A[i:i + 1, 0:SM_COLS], mx[i])
    Tx.cta.exp(B, B)
    Tx.cta.sum(sm, B, axes=-1)
    for i in T.serial(SM_ROWS):
        Tx.cta.fdiv(B[i:i + 1, 0:SM_COLS], B[i:i + 1, 0:SM_COLS], sm[i])


def test_row_softmax_from_tx_reductions(rng):
    ex = compile_opencl(softmax)
    assert ex.inspect_source().count("__local float red_scratch") == 2  # the tree, twice
    a = rng.standard_normal((SM_ROWS, SM_COLS), "float32") * 3
    b = np.zeros_like(a)
    ex(a, b)
    e = np.exp(a.astype("float64") - a.max(-1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


def _reduce(op: str, rows: int, cols: int, threads: int, dtype: str, accum: bool) -> object:
    @T.prim_func
    def red(A: T.Buffer((rows, cols), dtype), S: T.Buffer((rows,), dtype)):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([threads])
        Tx.cta.sum(S, A, axes=-1, accum=accum) if op == "sum" else (
            Tx.cta.max(S, A, axes=-1, accum=accum) if op == "max" else
            Tx.cta.min(S, A, axes=-1, accum=accum))

    return red


@pytest.mark.parametrize(("op", "rows", "cols", "threads", "dtype", "accum", "variant"), [
    ("sum", 3, 777, 64, "float32", False, "workgroup_tree"),
    ("max", 2, 4096, 256, "float32", True, "workgroup_tree"),
    ("min", 5, 100, 32, "float64", False, "workgroup_tree"),
    ("sum", 4, 300, 128, "float16", True, "workgroup_tree"),
    ("sum", 70, 33, 64, "float32", False, "fallback"),  # a row for every work-item
])
def test_reductions_against_numpy(rng, op, rows, cols, threads, dtype, accum, variant):
    ex = compile_opencl(_reduce(op, rows, cols, threads, dtype, accum))
    assert ("red_scratch" in ex.inspect_source()) == (variant == "workgroup_tree")
    a = rng.standard_normal((rows, cols)).astype(dtype)
    s0 = rng.standard_normal(rows).astype(dtype)
    s = s0.copy()
    ex(a, s)
    ref = {"sum": np.sum, "max": np.max, "min": np.min}[op](a.astype("float64"), axis=-1)
    if accum:
        ref = {"sum": ref + s0, "max": np.maximum(ref, s0), "min": np.minimum(ref, s0)}[op]
    tol = 2e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(s.astype("float64"), ref, rtol=tol, atol=tol)


M = N = K = 128
TILE = 32


@T.prim_func
def tiled_matmul(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"),
                 C: T.Buffer((M, N), "float32")):
    T.device_entry()
    bx, by = T.cta_id([N // TILE, M // TILE])
    tx = T.thread_id([128])
    As = T.alloc_buffer((TILE, TILE), "float32", scope="shared")
    Bs = T.alloc_buffer((TILE, TILE), "float32", scope="shared")
    acc = T.alloc_buffer((TILE, TILE), "float32", scope="shared")
    Tx.cta.fill(acc, 0.0)
    for kk in T.serial(K // TILE):
        Tx.cta.copy(As, A[by * TILE:by * TILE + TILE, kk * TILE:kk * TILE + TILE])
        Tx.cta.copy(Bs, B[kk * TILE:kk * TILE + TILE, bx * TILE:bx * TILE + TILE])
        Tx.cta.gemm(acc, As, Bs, acc, beta=1.0)
    Tx.cta.copy(C[by * TILE:by * TILE + TILE, bx * TILE:bx * TILE + TILE], acc)


def test_tiled_matmul(rng):
    ex = compile_opencl(tiled_matmul)
    src = ex.inspect_source()
    assert src.count("__local float") == 3
    assert "reqd_work_group_size(128, 1, 1)" in src
    a, b = rng.standard_normal((M, K), "float32"), rng.standard_normal((K, N), "float32")
    c = np.zeros((M, N), "float32")
    ex(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4)


@T.prim_func
def dtypes(H: T.Buffer((64,), "float16"), G: T.Buffer((64,), "bfloat16"),
           D: T.Buffer((64,), "float64"), N32: T.Buffer((64,), "int32"),
           Ho: T.Buffer((64,), "float16"), Go: T.Buffer((64,), "bfloat16"),
           Do: T.Buffer((64,), "float64"), Io: T.Buffer((64,), "int32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    Ho[tx] = H[tx] * T.float16(3) + T.float16(0.5)
    Go[tx] = G[tx] * T.bfloat16(2) - T.bfloat16(1)
    Do[tx] = T.sqrt(D[tx]) + T.Cast("float64", H[tx])
    Io[tx] = T.floordiv(N32[tx], 7) * 100 + T.floormod(N32[tx], 7)


def test_data_types(rng):
    ex = compile_opencl(dtypes)
    h = rng.standard_normal(64).astype("float16")
    g = rng.standard_normal(64).astype(ml_dtypes.bfloat16)
    d = rng.random(64)
    i = rng.integers(-1000, 1000, 64).astype("int32")
    ho, go = np.zeros(64, "float16"), np.zeros(64, ml_dtypes.bfloat16)
    do, io = np.zeros(64), np.zeros(64, "int32")
    ex(h, g, d, i, ho, go, do, io)
    np.testing.assert_array_equal(ho, (h * np.float16(3) + np.float16(0.5)).astype("float16"))
    want_g = (g.astype("float32") * 2 - 1).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(go.astype("float32"), want_g.astype("float32"))
    np.testing.assert_allclose(do, np.sqrt(d) + h.astype("float64"), rtol=1e-12)
    np.testing.assert_array_equal(io, (i // 7) * 100 + i % 7)


@T.prim_func
def dyn_local(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    S = T.alloc_buffer((128,), "float32", scope="shared.dyn")
    S[tx] = A[bx * 128 + tx]
    T.opencl.barrier("local")
    B[bx * 128 + tx] = S[127 - tx]


def test_dynamic_local_memory_is_a_kernel_argument(rng):
    ex = compile_opencl(dyn_local)
    assert "__local uchar* tvm_dyn_smem)" in ex.inspect_source()
    a, b = rng.standard_normal(256, "float32"), np.zeros(256, "float32")
    ex(a, b)
    np.testing.assert_array_equal(b, a.reshape(2, 128)[:, ::-1].reshape(-1))


@T.prim_func
def scaled(a: T.handle, b: T.handle, alpha: T.float32):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 64)])
    tx = T.thread_id([64])
    if bx * 64 + tx < n:
        B[bx * 64 + tx] = A[bx * 64 + tx] * alpha


@pytest.mark.parametrize("n", [1, 64, 1000])
def test_symbolic_shape_and_scalar_argument(rng, n):
    ex = compile_opencl(scaled)
    a, b = rng.standard_normal(n, "float32"), np.zeros(n, "float32")
    ex(a, b, 1.5)
    np.testing.assert_allclose(b, a * 1.5, rtol=1e-6)


def test_export_and_load_runs_the_same(rng, tmp_path):
    ex = compile_opencl(tiled_matmul)
    path = ex.export_library(tmp_path / "matmul.tvm")
    loaded = tvm.runtime.load_module(path)
    assert loaded.inspect_source() == ex.inspect_source()
    a, b = rng.standard_normal((M, K), "float32"), rng.standard_normal((K, N), "float32")
    c1, c2 = np.zeros((M, N), "float32"), np.zeros((M, N), "float32")
    ex(a, b, c1)
    loaded(a, b, c2)
    np.testing.assert_array_equal(c1, c2)


def test_an_array_passed_twice_is_one_buffer(rng):
    @T.prim_func
    def inplace(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([128])
        B[tx] = A[tx] + 1.0

    ex = compile_opencl(inplace)
    a = rng.standard_normal(128, "float32")
    want = a + 1
    ex(a, a)
    np.testing.assert_array_equal(a, want)
