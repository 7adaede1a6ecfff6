"""Generated helper names the seed's tests read in the CUDA source (issue 28, item 9): the
copies of ``T.cuda.copy_<n>b`` / ``copy_bytes`` are ``tvm_builtin_copy_<bits>b`` and the named
barriers ``tvm_builtin_ptx_bar_sync`` / ``tvm_builtin_ptx_bar_arrive``: one definition each,
before the kernel, whatever the number of uses; the source compiles with NVRTC."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()


def _kernel() -> Any:
    @T.prim_func
    def k(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        T.device_entry()
        tx = T.thread_id([64])
        T.cuda.copy_128b(B[tx * 4], A[tx * 4])
        T.ptx.bar.sync(1, 64)
        T.cuda.copy_bytes(B[tx], A[tx], 4)
        T.cuda.copy_32b(B[tx + 64], A[tx + 64])
        T.ptx.bar.arrive(2, 64)
        T.ptx.bar.sync(1, 64)
        T.cuda.copy_16b(B[128 + tx * 2], A[128 + tx * 2])

    return k


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "sm_100a"])
def test_helpers_have_the_seed_names_and_compile(arch: str) -> None:
    ex = tvm.compile(_kernel(), target={"kind": "cuda", "arch": arch})
    src = ex.inspect_source()
    assert ex.cubin[:4] == b"\x7fELF"
    kernel = src.index("__global__")
    for name, body in [
        ("tvm_builtin_copy_128b", "*(uint4*)dst = *(const uint4*)src;"),
        ("tvm_builtin_copy_32b", "*(unsigned int*)dst = *(const unsigned int*)src;"),
        ("tvm_builtin_copy_16b", "*(unsigned short*)dst = *(const unsigned short*)src;"),
        ("tvm_builtin_ptx_bar_sync", 'asm volatile("bar.sync %0, %1;"'),
        ("tvm_builtin_ptx_bar_arrive", 'asm volatile("bar.arrive %0, %1;"'),
    ]:
        head = f"__device__ __forceinline__ void {name}("
        assert src.count(head) == 1, name  # defined once
        assert src.index(head) < src.index(body) < kernel
    # copy_bytes(.., 4) and copy_32b are the same copy: one helper, two calls
    assert src.count("tvm_builtin_copy_32b(((void*)") == 2
    assert src.count("tvm_builtin_ptx_bar_sync(1, 64);") == 2  # int32 operands: no casts
    assert "tvm_builtin_ptx_bar_arrive(2, 64);" in src


@pytest.mark.gpu
def test_helpers_copy_and_sync(device: str) -> None:
    torch = pytest.importorskip("torch")
    ex = tvm.compile(_kernel(), target="cuda")
    a = torch.arange(256, dtype=torch.float32, device=device)
    b = torch.zeros_like(a)
    ex(a, b)
    if device == "cuda":
        torch.cuda.synchronize()
    want = np.zeros(256, "float32")
    want[:] = np.arange(256)  # 128b copies 0..255, 32b re-copies 0..127, 16b halves of 128..255
    np.testing.assert_array_equal(b.cpu().numpy(), want)
