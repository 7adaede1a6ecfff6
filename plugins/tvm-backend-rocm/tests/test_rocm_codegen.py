"""HIP as printed (CUDA-style, as data): exact text, HIP's launch bounds, dynamic shared memory,
16-bit floats, the barriers of core's fallback, and what AMD GPUs cannot do."""

from __future__ import annotations

import pytest
import rocm_helpers  # noqa: F401 - loads the backend

import tvm.driver
from tvm.error import CodegenError
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_rocm.codegen import generate_hip


def hip(func, target="rocm"):
    from tvm.target import Target

    t = Target(target)
    return generate_hip(tvm.driver.lower(func, target=t), t)[0]


@T.prim_func
def axpy(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), a: T.float32,
         n: T.int64):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    Y[bx * 128 + tx] = T.exp(X[bx * 128 + tx]) * a + Y[bx * 128 + tx] + T.Cast("float32", n)


def test_kernel_text():
    assert hip(axpy) == (
        "#include <hip/hip_runtime.h>\n\n"
        'extern "C" __global__ void __launch_bounds__(128) axpy_kernel(float* __restrict__ X, '
        "float* __restrict__ Y, float a, long long n) {\n"
        "  const int bx = (int)blockIdx.x;\n"
        "  const int tx = (int)threadIdx.x;\n"
        "  Y[(bx * 128) + tx] = (((expf(X[(bx * 128) + tx]) * a) + Y[(bx * 128) + tx]) + "
        "((float)(n)));\n"
        "}\n")


@T.prim_func
def occupancy(A: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    T.attr({"tirx.launch_bounds_min_blocks_per_sm": 2})
    A[tx] = A[tx] + 1.0


@pytest.mark.parametrize(("target", "bounds"), [
    ("rocm", "__launch_bounds__(256, 2)"),  # 2 blocks x 4 wave64 / 4 SIMDs
    ("amd/radeon-rx-6900-xt", "__launch_bounds__(256, 4)"),  # 2 blocks x 8 wave32 / 4 SIMDs
])
def test_min_blocks_become_waves_per_simd(target, bounds):
    assert f'extern "C" __global__ void {bounds} occupancy_kernel(' in hip(occupancy, target)


@T.prim_func
def clustered(A: T.Buffer((256,), "float32")):
    T.device_entry()
    cx = T.cluster_id([2])
    bx = T.cta_id_in_cluster([2])
    tx = T.thread_id([64])
    A[(cx * 2 + bx) * 64 + tx] = 1.0


def test_clusters_are_refused():
    with pytest.raises(CodegenError) as err:
        hip(clustered)
    assert str(err.value) == ("target 'rocm': kernel `clustered_kernel` runs in thread-block "
                              "clusters, which AMD GPUs do not have")


@T.prim_func
def dyn_and_half(A: T.Buffer((128,), "float16"), B: T.Buffer((128,), "bfloat16")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    S = T.alloc_buffer((128,), "float16", scope="shared.dyn")
    S[tx] = A[tx] * T.float16(2)
    B[tx] = T.Cast("bfloat16", S[127 - tx])


def test_dynamic_shared_memory_and_16_bit_floats():
    src = hip(dyn_and_half)
    assert "  extern __shared__ __attribute__((aligned(16))) unsigned char tvm_dyn_smem[];" in src
    assert "  _Float16* S = (_Float16*)(tvm_dyn_smem + 0);" in src
    assert "_Float16* __restrict__ A, uint16_t* __restrict__ B" in src
    assert "static __device__ __forceinline__ uint16_t tvm_f32_to_bf16(float f) {" in src


@T.prim_func
def cta_sum(A: T.Buffer((64, 32), "float32"), S: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    Tx.cta.sum(S, A, axes=-1)
    Tx.warp.fill(A[0:2, 0:32], 0.0)


def test_fallback_barriers():
    src = hip(cta_sum)
    assert "  __syncthreads();" in src.splitlines()
    assert "__builtin_amdgcn_wave_barrier();" in src


@T.prim_func
def too_big(A: T.Buffer((2048,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([2048])
    A[tx] = 1.0


def test_blocks_beyond_the_target():
    with pytest.raises(CodegenError) as err:
        hip(too_big)
    assert str(err.value) == ("target 'rocm': kernel `too_big_kernel` has blocks of 2048 threads "
                              "(2048, 1, 1), more than the target's max_threads_per_block=1024")
