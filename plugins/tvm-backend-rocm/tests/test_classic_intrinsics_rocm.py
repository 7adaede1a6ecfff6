"""The classic thread intrinsics in HIP (issue 28): barriers and wavefront shuffles."""

from __future__ import annotations

import pytest
import rocm_helpers  # noqa: F401 - loads the backend

import tvm.driver
from tvm.error import CodegenError
from tvm.script import tirx as T
from tvm_backend_rocm.codegen import generate_hip


def _hip(func) -> str:
    from tvm.target import Target

    t = Target("rocm")
    return generate_hip(tvm.driver.lower(func, target=t), t)[0]


def _kernel(warp_size: int):
    @T.prim_func
    def rotate(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        tx = T.thread_id([64])
        S = T.alloc_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        T.tvm_storage_sync("shared")
        B[tx] = T.tvm_warp_shuffle_down(T.uint64(0xFFFFFFFFFFFFFFFF), S[tx], 1, 64, warp_size)
        T.tvm_storage_sync("warp")
        A[tx] = T.tvm_warp_shuffle_xor(T.uint64(0xFFFFFFFFFFFFFFFF), B[tx], 5, 64, warp_size)

    return rotate


def test_barriers_and_shuffles_in_hip() -> None:
    src = _hip(_kernel(64))
    assert "__syncthreads();" in src and "__builtin_amdgcn_wave_barrier();" in src
    assert "B[tx] = __shfl_down(S[tx], 1, 64);" in src
    assert "A[tx] = __shfl_xor(B[tx], 5, 64);" in src


def test_a_shuffle_of_another_width_than_the_wavefront_is_refused() -> None:
    with pytest.raises(CodegenError, match="wavefront width 64"):
        _hip(_kernel(32))
