"""Kernels on the WebGPU device (wgpu on lavapipe) against numpy: an elementwise kernel, a
reduction and a softmax built from Tx primitives, a tiled matmul in shared memory, scalars
through push constants, a grid computed from a scalar, and WGSL's integer and math rules."""

from __future__ import annotations

import numpy as np
import pytest
from wg_helpers import SUBGROUPS, compile_webgpu

from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.shader.demo import softmax_kernel, tiled_matmul_kernel

pytestmark = pytest.mark.usefixtures("webgpu_device")


@T.prim_func
def scaled_rows(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8, 128), "float32")):
    T.device_entry()
    bx = T.cta_id([8])
    tx = T.thread_id([32])
    Tx.cta.exp(B[bx:bx + 1, 0:128], A[bx:bx + 1, 0:128], scale=0.25)
    Tx.cta.mul(B[bx:bx + 1, 0:128], B[bx:bx + 1, 0:128], A[bx:bx + 1, 0:128])
    Tx.cta.maximum(B[bx:bx + 1, 0:128], B[bx:bx + 1, 0:128], -0.5)


def test_elementwise_tile_ops(rng):
    a = rng.uniform(-3, 3, (8, 128)).astype("float32")
    b = np.zeros_like(a)
    compile_webgpu(scaled_rows)(a, b)
    want = np.maximum(np.exp(a.astype("float64") * 0.25) * a, -0.5)
    np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-6)


@T.prim_func
def row_stats(A: T.Buffer((32, 200), "float32"), S: T.Buffer((32,), "float32"),
              M: T.Buffer((32,), "float32"), N: T.Buffer((32,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([64])
    Tx.cta.sum(S[bx * 8:bx * 8 + 8], A[bx * 8:bx * 8 + 8, 0:200], axes=-1)
    Tx.cta.max(M[bx * 8:bx * 8 + 8], A[bx * 8:bx * 8 + 8, 0:200], axes=-1)
    Tx.cta.min(N[bx * 8:bx * 8 + 8], A[bx * 8:bx * 8 + 8, 0:200], axes=-1)


def test_reductions_from_tile_primitives(rng):
    a = rng.uniform(-4, 4, (32, 200)).astype("float32")
    s, mx, mn = (np.zeros(32, "float32") for _ in range(3))
    compile_webgpu(row_stats)(a, s, mx, mn)
    np.testing.assert_allclose(s, a.astype("float64").sum(-1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(mx, a.max(-1))
    np.testing.assert_array_equal(mn, a.min(-1))


def test_softmax_of_tile_reductions_and_elementwise_ops(rng):
    a = rng.standard_normal((16, 96)).astype("float32") * 4
    b = np.zeros_like(a)
    compile_webgpu(softmax_kernel(16, 96, 32))(a, b)
    e = np.exp(a.astype("float64") - a.max(-1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("m,n,k,t", [(64, 64, 64, 16), (32, 96, 48, 8)])
def test_tiled_matmul(rng, m, n, k, t):
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = np.full((m, n), np.nan, "float32")
    ex = compile_webgpu(tiled_matmul_kernel(m, n, k, t))
    assert "var<workgroup> As: array<f32, " in ex.inspect_source()
    ex(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-4,
                               atol=1e-4)


@T.prim_func
def axpy(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), a: T.float32,
         shift: T.int32):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([64])
    Y[bx * 64 + tx] = X[bx * 64 + tx] * a + Y[bx * 64 + tx] + T.cast(shift, "float32")


def test_scalars_arrive_in_a_uniform_struct():
    ex = compile_webgpu(axpy)
    text = ex.inspect_source()
    assert "struct tvm_args_t { a: f32, shift: i32, }" in text
    assert "@group(0) @binding(2) var<uniform> tvm_args: tvm_args_t;" in text
    x, y = np.arange(256, dtype="float32"), np.ones(256, "float32")
    ex(x, y, 0.5, -3)
    np.testing.assert_array_equal(y, x * 0.5 + 1 - 3)


@T.prim_func
def scale_n(var_A: T.handle, n: T.int32):
    A = T.match_buffer(var_A, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 64)])
    tx = T.thread_id([64])
    if bx * 64 + tx < n:
        A[bx * 64 + tx] = A[bx * 64 + tx] * 2.0


@pytest.mark.parametrize("n", [1, 64, 1000])
def test_grid_from_a_scalar(n):
    ex = compile_webgpu(scale_n)
    a = np.arange(n, dtype="float32")
    ex(a, n)
    np.testing.assert_array_equal(a, np.arange(n) * 2.0)


@T.prim_func
def int_rules(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"),
              Q: T.Buffer((64,), "int32"), R: T.Buffer((64,), "int32"),
              M: T.Buffer((64,), "int32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    Q[tx] = T.floordiv(A[tx], B[tx])
    R[tx] = T.floormod(A[tx], B[tx])
    M[tx] = T.truncmod(A[tx], B[tx])


def test_floor_and_trunc_division_of_negative_integers(rng):
    a = rng.integers(-50, 50, 64).astype("int32")
    b = rng.choice([-7, -3, -1, 2, 5, 9], 64).astype("int32")
    q, r, m = (np.zeros(64, "int32") for _ in range(3))
    ex = compile_webgpu(int_rules)
    assert "tvm_floordiv_i32(" in ex.inspect_source()
    ex(a, b, q, r, m)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    np.testing.assert_array_equal(m, np.fmod(a, b))


@T.prim_func
def float_rules(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
                R: T.Buffer((64,), "float32"), F: T.Buffer((64,), "float32"),
                S: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    R[tx] = T.round(A[tx])
    F[tx] = T.fmod(A[tx], B[tx])
    S[tx] = T.rsqrt(T.fabs(B[tx]))
    C[tx] = T.copysign(A[tx], B[tx])


def test_float_rules(rng):
    a = np.concatenate([np.array([0.5, 1.5, 2.5, -0.5, -2.5], "float32"),
                        rng.uniform(-9, 9, 59).astype("float32")])
    b = rng.choice([-2.5, -1.0, 0.75, 3.0], 64).astype("float32")
    r, f, s, c = (np.zeros(64, "float32") for _ in range(4))
    compile_webgpu(float_rules)(a, b, r, f, s, c)
    np.testing.assert_array_equal(r, np.round(a))  # half to even
    np.testing.assert_allclose(f, np.fmod(a, b), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s, 1 / np.sqrt(np.abs(b)), rtol=1e-6)
    np.testing.assert_array_equal(c, np.copysign(a, b))


@T.prim_func
def shuffles(A: T.Buffer((64,), "float32"), S: T.Buffer((64,), "float32"),
             D: T.Buffer((64,), "float32"), U: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    S[tx] = T.webgpu.subgroup_shuffle(A[tx], 0)
    D[tx] = T.webgpu.subgroup_shuffle_down(A[tx], 1)
    U[tx] = T.webgpu.subgroup_shuffle_up(A[tx], 1)


def test_subgroup_shuffles_run(webgpu_device):
    """Lane 0's value spreads over each subgroup; down/up read the neighbour lane. The subgroup
    width is the adapter's (8 on lavapipe): it is read off the broadcast, and must be one of
    the widths WebGPU allows."""
    if not webgpu_device["subgroups"]:
        pytest.skip(f"{webgpu_device['name']} has no subgroups")
    ex = compile_webgpu(shuffles, target=SUBGROUPS)
    a = np.arange(64, dtype="float32") * 3 + 1
    s, d, u = (np.zeros(64, "float32") for _ in range(3))
    ex(a, s, d, u)
    width = int(np.argmax(s != s[0])) or 64
    assert width in (4, 8, 16, 32, 64), s
    lane = np.arange(64) % width
    np.testing.assert_array_equal(s, a[np.arange(64) - lane])
    inner = lane < width - 1
    np.testing.assert_array_equal(d[inner], a[np.arange(64)[inner] + 1])
    outer = lane > 0
    np.testing.assert_array_equal(u[outer], a[np.arange(64)[outer] - 1])
