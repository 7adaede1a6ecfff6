"""Golden CUDA source from the codegen: launch bounds (the seed's tests), kernel form, shared and
dynamic shared memory, clusters, vector and 16-bit/fp8 types, headers only when needed."""

from __future__ import annotations

from typing import Any, no_type_check

import pytest

import tvm
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()

MIN_KEY = "tirx.launch_bounds_min_blocks_per_sm"
CLUSTER_KEY = "tirx.launch_bounds_max_blocks_per_cluster"


def _source(func: Any, target: Any = "nvidia/nvidia-h100") -> str:
    return tvm.compile(func, target=target).inspect_source()


@no_type_check
def _vadd(attrs: dict | None = None) -> Any:
    @T.prim_func
    def main(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"),
             C: T.Buffer((4096,), "float32")):
        T.device_entry()
        bx = T.cta_id([32])
        tx = T.thread_id([128])
        if attrs:
            T.attr(attrs)
        C[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]

    return main


VADD_GOLDEN = """\
extern "C" __global__ void __launch_bounds__(128) main_kernel(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  C[(bx * 128) + tx] = (A[(bx * 128) + tx] + B[(bx * 128) + tx]);
}
"""


def test_vector_add_golden_source() -> None:
    assert _source(_vadd()) == VADD_GOLDEN


def test_launch_bounds_omit_min_blocks_without_the_attribute() -> None:
    src = _source(_vadd())
    assert 'extern "C" __global__ void __launch_bounds__(128) main_kernel' in src
    assert "(128, 1)" not in src


def test_launch_bounds_min_blocks_attr_sets_one_block_per_sm() -> None:
    src = _source(_vadd({MIN_KEY: 1}))
    assert 'extern "C" __global__ void __launch_bounds__(128, 1) main_kernel' in src
    assert MIN_KEY not in src and "launch_bounds_min" not in src


def test_launch_bounds_max_blocks_per_cluster_is_the_third_operand() -> None:
    src = _source(_vadd({MIN_KEY: 2, CLUSTER_KEY: 4}))
    assert "__launch_bounds__(128, 2, 4) main_kernel" in src
    assert CLUSTER_KEY not in src and "tirx." not in src


@pytest.mark.parametrize("value, message", [
    (0, "must be positive"),
    (1.5, "expects an integer value"),
])
def test_launch_bounds_attribute_errors(value: Any, message: str) -> None:
    with pytest.raises(Exception, match=message):
        tvm.compile(_vadd({MIN_KEY: value}), target="nvidia/nvidia-h100")


@no_type_check
def test_shared_dynamic_shared_and_cluster_dims() -> None:
    @T.prim_func
    def k(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([8])
        tx = T.thread_id([128])
        S = T.alloc_buffer((128,), "float32", scope="shared")
        D = T.alloc_buffer((64,), "float64", scope="shared.dyn")
        E = T.alloc_buffer((128,), "float32", scope="shared.dyn")
        S[tx] = A[bx * 128 + tx]
        E[tx] = S[tx]
        if tx < 64:
            D[tx] = T.Cast("float64", E[tx])
        B[bx * 128 + tx] = E[tx]

    ex = tvm.compile(k, target="nvidia/nvidia-h100")
    src = ex.inspect_source()
    assert "__shared__ float S[128]" in src
    assert "extern __shared__ __attribute__((aligned(16))) unsigned char tvm_dyn_smem[];" in src
    assert "double* D = (double*)(tvm_dyn_smem + 0);" in src
    assert "float* E = (float*)(tvm_dyn_smem + 512);" in src
    assert ex.plans["k"].steps[0].smem == 1024


@no_type_check
def _aligned_allocs(dyn_align: int) -> Any:
    @T.prim_func
    def k(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([8])
        tx = T.thread_id([128])
        S = T.alloc_buffer((128,), "float32", scope="shared", align=128)
        R = T.alloc_buffer((4,), "float32", scope="shared", align=8)
        L = T.alloc_buffer((2,), "float32", scope="local", align=64)
        D = T.alloc_buffer((16,), "float64", scope="shared.dyn")
        E = T.alloc_buffer((128,), "float32", scope="shared.dyn", align=dyn_align)
        S[tx] = A[bx * 128 + tx]
        if tx < 4:
            R[tx] = S[tx]
        L[0] = S[tx] + R[0]
        E[tx] = L[0]
        if tx < 16:
            D[tx] = T.Cast("float64", E[tx])
        B[bx * 128 + tx] = E[tx]

    return k


ALIGNED_GOLDEN = """\
extern "C" __global__ void __launch_bounds__(128) k_kernel(float* __restrict__ A, float* __restrict__ B) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  __shared__ float S[128] __attribute__((aligned(128)));
  __shared__ float R[4] __attribute__((aligned(16)));
  float L[2] __attribute__((aligned(64)));
  extern __shared__ __attribute__((aligned(1024))) unsigned char tvm_dyn_smem[];
  double* D = (double*)(tvm_dyn_smem + 0);
  float* E = (float*)(tvm_dyn_smem + 1024);
"""


def test_alloc_align_static_local_and_dynamic_base_golden() -> None:
    """``align=`` of a static allocation is printed (16 at least: vector accesses rely on it);
    the dynamic base takes the largest alignment of the dynamic buffers, since their offsets
    keep only the alignment the base has."""
    ex = tvm.compile(_aligned_allocs(1024), target="nvidia/nvidia-h100")  # NVRTC accepts it
    src = ex.inspect_source()
    assert src.startswith(ALIGNED_GOLDEN), src
    assert ex.plans["k"].steps[0].smem == 1536


@pytest.mark.parametrize("dyn_align, base", [(0, 16), (8, 16), (128, 128)])
def test_dynamic_shared_base_alignment(dyn_align: int, base: int) -> None:
    src = _source(_aligned_allocs(dyn_align))
    assert (f"extern __shared__ __attribute__((aligned({base}))) unsigned char tvm_dyn_smem[];"
            in src)
    assert "float* E = (float*)(tvm_dyn_smem + 128);" in src  # right after D's 128 bytes


@no_type_check
def test_cluster_dims_from_the_kernel_form() -> None:
    @T.prim_func
    def k(A: T.Buffer((1024,), "float32")):
        T.device_entry()
        cid = T.cta_id_in_cluster([2])
        bx = T.cta_id([8])
        tx = T.thread_id([128])
        A[bx * 128 + tx] = T.Cast("float32", cid)

    src = _source(k)
    assert "__cluster_dims__(2, 1, 1) __launch_bounds__(128) k_kernel" in src


@no_type_check
def test_half_bfloat16_fp8_types_and_headers() -> None:
    @T.prim_func
    def k(A: T.Buffer((128,), "float16"), B: T.Buffer((128,), "bfloat16"),
          C: T.Buffer((128,), "float8_e4m3fn"), D: T.Buffer((128,), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        D[tx] = T.Cast("float32", A[tx]) + T.Cast("float32", B[tx]) + T.Cast("float32", C[tx])

    src = _source(k)
    assert src.startswith("#include <cuda_fp8.h>\n")  # it brings the fp16 and bf16 headers
    assert "cuda_fp16.h" not in src and "cuda_bf16.h" not in src
    assert "half* __restrict__ A, __nv_bfloat16* __restrict__ B, __nv_fp8_e4m3* __restrict__ C" in src


def test_no_header_for_a_float_kernel() -> None:
    assert "#include" not in _source(_vadd())


@no_type_check
def test_vector_types_float4() -> None:
    @T.prim_func
    def k(A: T.Buffer((4096,), "float32"), C: T.Buffer((4096,), "float32")):
        T.device_entry()
        bx = T.cta_id([4])
        tx = T.thread_id([256])
        for v in T.vectorized(4):
            C[bx * 1024 + tx * 4 + v] = A[bx * 1024 + tx * 4 + v] * T.float32(2)

    ex = tvm.compile(k, target="nvidia/nvidia-a100")
    src = ex.inspect_source()
    assert "const float4 vec = *(const float4*)(&A[(bx * 1024) + (tx * 4)]);" in src
    assert ("*(float4*)(&C[(bx * 1024) + (tx * 4)]) = make_float4((vec.x * 2.0f), "
            "(vec.y * 2.0f), (vec.z * 2.0f), (vec.w * 2.0f));") in src
    assert ex.meta["kernels"]["k_kernel"]["vector_align"] == {"A": 16, "C": 16}


@no_type_check
def test_unaligned_vector_index_stays_scalar() -> None:
    @T.prim_func
    def k(A: T.Buffer((4100,), "float32"), C: T.Buffer((4100,), "float32")):
        T.device_entry()
        tx = T.thread_id([1024])
        for v in T.vectorized(4):
            C[tx * 4 + v + 1] = A[tx * 4 + v + 1]

    src = _source(k)
    assert "float4" not in src
    assert "C[((tx * 4) + 1)]" in src.replace(" + 0", "") or "C[(tx * 4) + 1]" in src


@no_type_check
def test_warp_shuffle_reduction_variant_is_chosen() -> None:
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def k(A: T.Buffer((4, 256), "float32"), S: T.Buffer((4,), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        Tx.cta.max(S[0:4], A[0:4, 0:256], axes=-1)

    src = _source(k)
    assert src.count("__shfl_xor_sync(4294967295U, red_acc[0], ") == 5
    assert "fmaxf(red_acc[0], __shfl_xor_sync(4294967295U, red_acc[0], 16, 32))" in src
    assert "__syncthreads();" in src


@no_type_check
def test_fallback_barriers_for_warp_and_cta_scopes() -> None:
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        tx = T.thread_id([64])
        S = T.alloc_buffer((64,), "float32", scope="shared")
        Tx.cta.copy(S[0:64], A[0:64])
        Tx.warp.copy(B[0:32], S[0:32])

    src = _source(k)
    assert "__syncthreads();" in src
    assert "__syncwarp();" in src


def test_host_function_is_not_printed() -> None:
    mod = tvm.driver.lower(_vadd(), "nvidia/nvidia-h100")
    assert sorted(mod.functions) == ["main", "main_kernel"]
    src = _source(_vadd())
    assert src.count("__global__") == 1 and "int32_t" not in src


@no_type_check
def test_nan_inf_and_int64_literals() -> None:
    @T.prim_func
    def k(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int64")):
        T.device_entry()
        tx = T.thread_id([1])
        A[0] = T.float32(float("inf"))
        A[1] = T.float32(float("nan"))
        B[0] = T.int64(-(2**40))

    src = _source(k)
    assert "__int_as_float(0x7f800000)" in src and "__int_as_float(0x7fc00000)" in src
    assert "(-1099511627776LL)" in src
    tvm.compile(k, target={"kind": "cuda", "arch": "sm_80"})  # NVRTC accepts it


def test_a_variable_named_like_a_cuda_builtin_is_renamed() -> None:
    """``for blockIdx in T.thread_binding(...)`` (the seed's scripts name their loops so) must
    not declare ``const int blockIdx = (int)blockIdx.x;``, which hides CUDA's blockIdx."""
    import numpy as np

    @T.prim_func
    def k(A: T.Buffer((96,), "int32")):
        T.device_entry()
        for blockIdx in T.thread_binding(3, thread="blockIdx.x"):
            for threadIdx in T.thread_binding(32, thread="threadIdx.x"):
                warpSize = blockIdx * 100 + threadIdx
                A[blockIdx * 32 + threadIdx] = warpSize

    ex = tvm.compile(k, target="nvidia/nvidia-h100", emulate=True)
    src = ex.inspect_source()
    assert "const int blockIdx_ = (int)blockIdx.x;" in src
    assert "const int threadIdx_ = (int)threadIdx.x;" in src
    assert " warpSize =" not in src
    a = np.zeros(96, "int32")
    ex(a)
    np.testing.assert_array_equal(a, [b * 100 + t for b in range(3) for t in range(32)])
