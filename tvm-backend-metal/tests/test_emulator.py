"""Metal kernels executed on the CPU by the shim's emulator, checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tvm.error import CompileError
from tvm_backend_metal.emulator import compile_msl, run_msl

pytestmark = pytest.mark.usefixtures("cxx")

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"

VADD = (
    HEADER
    + """
kernel void vadd(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                 device float* c [[buffer(2)]], constant uint& n [[buffer(3)]],
                 uint gid [[thread_position_in_grid]]) {
  if (gid < n) c[gid] = a[gid] + b[gid];
}
"""
)


def test_vector_add(rng):
    n = 1000
    a, b = rng.standard_normal((2, 1024), dtype=np.float32)
    c = np.full(1024, -7.0, np.float32)
    run_msl(VADD, "vadd", grid=16, threadgroup=64, buffers=[a, b, c, n])
    np.testing.assert_array_equal(c[:n], a[:n] + b[:n])
    np.testing.assert_array_equal(c[n:], -7.0)  # the guard held


def test_vector_add_in_process_and_cached(rng):
    a, b = rng.standard_normal((2, 256), dtype=np.float32)
    c = np.zeros(256, np.float32)
    k1 = compile_msl(VADD, "vadd")
    k2 = compile_msl(VADD, "vadd")
    assert k1 is k2 and k1.library_path.exists()
    k1(4, 64, [a, b, c, np.uint32(256)], isolate=False)
    np.testing.assert_array_equal(c, a + b)


def test_threadgroup_reduction_with_barriers(rng):
    src = (
        HEADER
        + """
kernel void tg_sum(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   uint tid [[thread_index_in_threadgroup]],
                   uint bid [[threadgroup_position_in_grid]],
                   uint ntg [[threads_per_threadgroup]]) {
  threadgroup float buf[256];
  buf[tid] = x[bid * ntg + tid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint s = ntg / 2; s > 0; s >>= 1) {
    if (tid < s) buf[tid] += buf[tid + s];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (tid == 0) out[bid] = buf[0];
}
"""
    )
    x = rng.standard_normal(8 * 256).astype(np.float32)
    out = np.zeros(8, np.float32)
    run_msl(src, "tg_sum", grid=8, threadgroup=256, buffers=[x, out])
    np.testing.assert_allclose(out, x.reshape(8, 256).sum(1), rtol=1e-5, atol=1e-5)


SIMD_SUM = (
    HEADER
    + """
kernel void row_sum(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    uint2 tid [[thread_position_in_threadgroup]],
                    uint bid [[threadgroup_position_in_grid]],
                    uint lane [[thread_index_in_simdgroup]],
                    uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float partial[8];
  float v = x[bid * 256 + tid.x];
  v = simd_sum(v);
  if (lane == 0) partial[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float p = lane < 8 ? partial[lane] : 0.0f;
    p = simd_sum(p);
    if (lane == 0) out[bid] = p;
  }
}
"""
)


def test_simd_sum_reduction(rng):
    x = rng.standard_normal(4 * 256).astype(np.float32)
    out = np.zeros(4, np.float32)
    run_msl(SIMD_SUM, "row_sum", grid=4, threadgroup=256, buffers=[x, out])
    np.testing.assert_allclose(out, x.reshape(4, 256).sum(1), rtol=1e-5, atol=1e-5)


def test_simd_shuffle_down_reduction_and_max(rng):
    src = (
        HEADER
        + """
kernel void shfl(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                 device float* mx [[buffer(2)]], device float* up [[buffer(3)]],
                 uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                 uint sg [[simdgroup_index_in_threadgroup]]) {
  float v = x[gid];
  for (ushort off = 16; off > 0; off >>= 1) v += simd_shuffle_down(v, off);
  if (lane == 0) out[sg] = v;
  float m = simd_max(x[gid]);
  if (lane == 31) mx[sg] = m;
  up[gid] = simd_shuffle_up(x[gid], 1) + simd_shuffle_xor(x[gid], 3) * 0.0f;
}
"""
    )
    x = rng.standard_normal(128).astype(np.float32)
    out, mx = np.zeros(4, np.float32), np.zeros(4, np.float32)
    up = np.zeros(128, np.float32)
    run_msl(src, "shfl", grid=1, threadgroup=128, buffers=[x, out, mx, up])
    lanes = x.reshape(4, 32)
    np.testing.assert_allclose(out, lanes.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mx, lanes.max(1))
    expect_up = np.concatenate([lanes[:, :1], lanes[:, :-1]], axis=1).reshape(-1)
    np.testing.assert_array_equal(up, expect_up)  # lane 0 keeps its own value


def test_divergent_simd_sum_uses_only_active_lanes():
    src = (
        HEADER
        + """
kernel void half_warp(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
  float r = -1.0f;
  if (lane < 16) r = simd_sum(float(lane));
  else r = simd_sum(100.0f);
  out[lane] = r;
}
"""
    )
    out = np.zeros(32, np.float32)
    run_msl(src, "half_warp", grid=1, threadgroup=32, buffers=[out])
    np.testing.assert_array_equal(out[:16], sum(range(16)))
    np.testing.assert_array_equal(out[16:], 1600.0)


GEMM = (
    HEADER
    + """
// C[M,N] = A[M,K] @ B[K,N]; one SIMD group per 8x8 tile of C.
kernel void gemm(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                 device float* C [[buffer(2)]], constant uint& K [[buffer(3)]],
                 constant uint& N [[buffer(4)]],
                 uint2 tile [[threadgroup_position_in_grid]]) {
  simdgroup_float8x8 a, b;
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  for (uint k = 0; k < K; k += 8) {
    simdgroup_load(a, A + tile.y * 8 * K + k, K);
    simdgroup_load(b, B + k * N + tile.x * 8, N, ulong2(0, 0), false);
    simdgroup_multiply_accumulate(acc, a, b, acc);
  }
  simdgroup_store(acc, C + tile.y * 8 * N + tile.x * 8, N);
}
"""
)


def test_simdgroup_matmul_16x16(rng):
    A = rng.standard_normal((16, 16)).astype(np.float32)
    B = rng.standard_normal((16, 16)).astype(np.float32)
    C = np.zeros((16, 16), np.float32)
    run_msl(GEMM, "gemm", grid=(2, 2), threadgroup=32, buffers=[A, B, C, 16, 16])
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


def test_simdgroup_matmul_rectangular_threadgroup_memory_and_transpose(rng):
    src = (
        HEADER
        + """
kernel void gemm_tg(device const half* A [[buffer(0)]], device const half* Bt [[buffer(1)]],
                    device float* C [[buffer(2)]],
                    uint sg [[simdgroup_index_in_threadgroup]],
                    uint tid [[thread_index_in_threadgroup]]) {
  threadgroup half As[16 * 8];
  threadgroup half Bs[8 * 16];
  for (uint i = tid; i < 128; i += 64) { As[i] = A[i]; Bs[i] = Bt[i]; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  simdgroup_half8x8 a, b;
  simdgroup_float8x8 c = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);
  simdgroup_load(a, As + sg * 64, 8);
  simdgroup_load(b, Bs, 8, ulong2(0, 0), true);  // Bs holds B transposed
  simdgroup_multiply_accumulate(c, a, b, c);
  simdgroup_store(c, C + sg * 64, 8);
}
"""
    )
    A = rng.standard_normal((16, 8)).astype(np.float16)
    B = rng.standard_normal((8, 8)).astype(np.float16)
    C = np.zeros((16, 8), np.float32)
    Bt = np.zeros((16, 8), np.float16)
    Bt[:8] = B.T
    run_msl(src, "gemm_tg", grid=1, threadgroup=64, buffers=[A, Bt, C])
    ref = A.astype(np.float32) @ B.astype(np.float32) + 1.0
    np.testing.assert_allclose(C, ref, rtol=1e-3, atol=1e-3)


def test_thread_elements_layout_roundtrip():
    # Write each lane's two elements through thread_elements(), multiply by the identity.
    src = (
        HEADER
        + """
kernel void te(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
  simdgroup_float8x8 m;
  m.thread_elements()[0] = float(lane * 2);
  m.thread_elements()[1] = float(lane * 2 + 1);
  simdgroup_float8x8 eye = simdgroup_float8x8(1.0f);
  simdgroup_float8x8 r;
  simdgroup_multiply(r, m, eye);
  simdgroup_store(r, out, 8);
}
"""
    )
    out = np.zeros(64, np.float32)
    run_msl(src, "te", grid=1, threadgroup=32, buffers=[out])
    # Apple's 8x8 layout (as in MLX's BaseMMAFrag): lane l holds (row, col) and (row, col + 1).
    expect = np.zeros((8, 8), np.float32)
    for lane in range(32):
        qid = lane // 4
        row = (qid & 4) + (lane // 2) % 4
        col = (qid & 2) * 2 + (lane % 2) * 2
        expect[row, col : col + 2] = [2 * lane, 2 * lane + 1]
    np.testing.assert_array_equal(out.reshape(8, 8), expect)


def test_half_inputs_and_vector_types(rng):
    src = (
        HEADER
        + """
kernel void axpy_h(device const half4* x [[buffer(0)]], device half4* y [[buffer(1)]],
                   constant float& alpha [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  float4 xf = float4(x[i]);
  float4 yf = float4(y[i]);
  y[i] = half4(fma(float4(alpha), xf, yf));
  y[i].w = max(y[i].w, 0.0h);
}
"""
    )
    x = rng.standard_normal(64).astype(np.float16)
    y = rng.standard_normal(64).astype(np.float16)
    expect = (np.float32(2.5) * x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    expect[3::4] = np.maximum(expect[3::4], 0)
    run_msl(src, "axpy_h", grid=2, threadgroup=8, buffers=[x, y, np.float32(2.5)])
    np.testing.assert_array_equal(y, expect)


def test_atomics_across_threadgroups():
    src = (
        HEADER
        + """
kernel void count(device atomic_uint* c [[buffer(0)]], device atomic_float* s [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(c, 1u, memory_order_relaxed);
  atomic_fetch_add_explicit(s, 0.5f, memory_order_relaxed);
}
"""
    )
    c = np.zeros(1, np.uint32)
    s = np.zeros(1, np.float32)
    run_msl(src, "count", grid=64, threadgroup=64, buffers=[c, s], workers=2)
    assert c[0] == 4096 and s[0] == 2048.0


def test_3d_grid_positions():
    src = (
        HEADER
        + """
kernel void pos(device uint* out [[buffer(0)]], uint3 p [[thread_position_in_grid]],
                uint3 size [[threads_per_grid]]) {
  out[(p.z * size.y + p.y) * size.x + p.x] = p.x + 10 * p.y + 100 * p.z;
}
"""
    )
    out = np.zeros((4, 6, 8), np.uint32)
    run_msl(src, "pos", grid=(2, 3, 2), threadgroup=(4, 2, 2), buffers=[out])
    z, y, x = np.meshgrid(range(4), range(6), range(8), indexing="ij")
    np.testing.assert_array_equal(out, x + 10 * y + 100 * z)


def test_non_contiguous_array_written_back():
    src = (
        HEADER
        + """
kernel void fill(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = i; }
"""
    )
    base = np.zeros(64, np.int32)
    view = base[::2]
    run_msl(src, "fill", grid=1, threadgroup=32, buffers=[view])
    np.testing.assert_array_equal(base[::2], np.arange(32))
    np.testing.assert_array_equal(base[1::2], 0)


def test_dtype_mismatch_is_a_clear_type_error():
    a = np.zeros(64, np.float64)
    with pytest.raises(TypeError, match=r"holds float32 elements, got a float64 array"):
        run_msl(VADD, "vadd", grid=1, threadgroup=64, buffers=[a, a, a, 64])


def test_compile_error_and_unknown_kernel():
    with pytest.raises(CompileError, match="not declared") as info:
        run_msl(
            VADD.replace("a[gid] + b[gid]", "a[gid] + bb[gid]"),
            "vadd",
            1,
            64,
            [np.zeros(64, np.float32)] * 3 + [64],
        )
    assert "g++" in info.value.command or "clang" in info.value.command
    with pytest.raises(CompileError, match=r"no kernel named 'vsub'.*vadd"):
        compile_msl(VADD, "vsub")


def test_out_of_bounds_crash_is_reported_not_fatal():
    src = (
        HEADER
        + """
kernel void oob(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i * 100000000u] = 1.0f;
}
"""
    )
    out = np.zeros(4, np.float32)
    with pytest.raises(RuntimeError, match="crashed with SIG"):
        run_msl(src, "oob", grid=1, threadgroup=32, buffers=[out])


def test_bad_threadgroup_size():
    with pytest.raises(ValueError, match="1 to 1024 threads"):
        run_msl(VADD, "vadd", grid=1, threadgroup=(64, 32), buffers=[])
