"""``T.local_scalar`` / ``T.shared_scalar`` / ``T.decl_scalar`` in CUDA kernels (issue 28):
0-d buffers in registers and shared memory, rendered, compiled with NVRTC, and run (GPU, else
emulated)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()


def _count_kernel() -> Any:
    @T.prim_func
    def count(A: T.Buffer((64,), "int32"), out: T.Buffer((2,), "int32")):
        T.device_entry()
        tx = T.thread_id([32])
        total = T.shared_scalar("int32")
        pool = T.alloc_buffer((4,), "int32", scope="shared")
        best = T.decl_scalar("int32", pool.data, "shared", 2)
        n = T.local_scalar("int32", init=0)
        if tx == 0:
            total = 0
            best = 0
        T.cuda.cta_sync()
        for k in range(2):
            n += A[tx * 2 + k]
        T.cuda.atomic_add(T.address_of(total), n)
        if tx == 31:
            best = n
        T.cuda.cta_sync()
        if tx == 0:
            out[0] = total
            out[1] = best

    return count


def test_scalar_cells_render_as_a_register_and_shared_values() -> None:
    ex = tvm.compile(_count_kernel(), target={"kind": "cuda", "arch": "sm_80"})
    src = ex.inspect_source()
    assert "__shared__ int total[1] " in src
    assert "int n[1] " in src
    assert "n[0] = (n[0] + A[(tx * 2) + k]);" in src
    assert "pool[2] = n[0];" in src  # the decl_scalar is element 2 of its pool
    assert ex.cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
def test_scalar_cells_run(device: str) -> None:
    ex = tvm.compile(_count_kernel(), target="cuda")
    a = np.arange(64, dtype="int32")
    expected = [int(a.sum()), int(a[62] + a[63])]
    if device == "cpu":
        out = np.zeros(2, "int32")
        ex(a, out)
    else:
        torch = pytest.importorskip("torch")
        t = torch.zeros(2, dtype=torch.int32, device=device)
        ex(torch.from_numpy(a).to(device), t)
        torch.cuda.synchronize()
        out = t.cpu().numpy()
    assert out.tolist() == expected
