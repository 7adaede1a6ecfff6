"""``while`` loops in CUDA kernels (issue 28, item 5): rendered as C++ ``while``, compiled with
NVRTC, and run (GPU, else emulated)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()


def _steps_kernel() -> Any:
    @T.prim_func
    def steps(N: T.Buffer((64,), "int32"), out: T.Buffer((64,), "int32")):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([32])
        n = T.alloc_buffer((1,), "int32", scope="local")
        n[0] = N[bx * 32 + tx]
        out[bx * 32 + tx] = 0
        while n[0] > 1:
            n[0] = T.if_then_else(n[0] % 2 == 0, n[0] // 2, 3 * n[0] + 1)
            out[bx * 32 + tx] = out[bx * 32 + tx] + 1

    return steps


def _expected(values: np.ndarray) -> list[int]:
    out = []
    for v in values.tolist():
        k = 0
        while v > 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            k += 1
        out.append(k)
    return out


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_while_loop_compiles_with_nvrtc(arch: str) -> None:
    ex = tvm.compile(_steps_kernel(), target={"kind": "cuda", "arch": arch})
    assert "  while (n[0] > 1) {" in ex.inspect_source()
    assert ex.cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
def test_a_while_loop_runs(device: str) -> None:
    ex = tvm.compile(_steps_kernel(), target="cuda")
    n = np.arange(1, 65, dtype="int32")
    if device == "cpu":
        out = np.zeros(64, "int32")
        ex(n, out)
    else:
        torch = pytest.importorskip("torch")
        t = torch.zeros(64, dtype=torch.int32, device=device)
        ex(torch.from_numpy(n).to(device), t)
        torch.cuda.synchronize()
        out = t.cpu().numpy()
    assert out.tolist() == _expected(n)
