"""The classic thread intrinsics on Metal (issue 28): ``T.tvm_storage_sync`` as threadgroup /
SIMD-group barriers, ``T.tvm_warp_shuffle(_up/_down/_xor)`` as SIMD-group shuffles and
``T.tvm_access_ptr`` as a pointer in the buffer's address space; checked MSL, emulated."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from metal_helpers import compile_metal

import tvm
from tvm.error import TVMError
from tvm.script import tirx as T


def _rotate(shuffle: str) -> Any:
    fn = getattr(T, shuffle)

    @T.prim_func
    def rotate(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([32])
        S = T.alloc_buffer((32,), "float32", scope="shared")
        S[31 - tx] = A[bx * 32 + tx]
        T.tvm_storage_sync("shared")
        B[bx * 32 + tx] = fn(T.uint32(0xFFFFFFFF), S[tx], 3, 32, 32)
        T.tvm_storage_sync("warp")

    return rotate


def test_barriers_and_shuffles_render_as_msl() -> None:
    src = compile_metal(_rotate("tvm_warp_shuffle_up")).inspect_source()
    assert "threadgroup_barrier(mem_flags::mem_threadgroup);" in src
    assert "simdgroup_barrier(mem_flags::mem_threadgroup);" in src
    assert "simd_shuffle_up(S[tx], (ushort)(3))" in src


@pytest.mark.usefixtures("cxx")
@pytest.mark.parametrize("shuffle", ["tvm_warp_shuffle", "tvm_warp_shuffle_up",
                                     "tvm_warp_shuffle_down", "tvm_warp_shuffle_xor"])
def test_shuffles_emulated(shuffle: str) -> None:
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    compile_metal(_rotate(shuffle)).emulate(a, b)
    lanes = np.arange(32)
    src = {"tvm_warp_shuffle": np.full(32, 3),
           "tvm_warp_shuffle_up": np.where(lanes >= 3, lanes - 3, lanes),
           "tvm_warp_shuffle_down": np.where(lanes + 3 < 32, lanes + 3, lanes),
           "tvm_warp_shuffle_xor": lanes ^ 3}[shuffle]
    staged = a.reshape(2, 32)[:, ::-1]
    np.testing.assert_array_equal(b, staged[:, src].reshape(64))


def test_access_ptr_keeps_the_address_space() -> None:
    @T.prim_func
    def add(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        tx = T.thread_id([8])
        B[tx] = T.float32(0)
        T.evaluate(A.access_ptr("rw", offset=tx))

    src = compile_metal(add).inspect_source()  # the shim's syntax check passes
    assert "((device float*)(A) + (tx))" in src


def test_a_shuffle_narrower_than_the_simd_group_is_refused() -> None:
    @T.prim_func
    def narrow(A: T.Buffer((32,), "float32")):
        T.device_entry()
        tx = T.thread_id([32])
        A[tx] = T.tvm_warp_shuffle(T.uint32(0xFFFFFFFF), A[tx], 0, 16, 32)

    with pytest.raises(TVMError, match="width and warp_size must be 32"):
        tvm.compile(narrow, target="apple/m1-gpu")
