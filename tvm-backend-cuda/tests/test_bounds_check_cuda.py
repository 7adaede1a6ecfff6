"""Run-time bounds checks in CUDA kernels (issue 16): a failed check prints the buffer and the
index with the block and thread, then traps (the launch fails); the source compiles with NVRTC."""

from __future__ import annotations

import pytest

import tvm
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()


@T.prim_func
def scatter(A: T.Buffer((1024,), "float32"), idx: T.Buffer((1024,), "int32")):
    T.device_entry()
    bx = T.cta_id([8])
    tx = T.thread_id([128])
    A[idx[bx * 128 + tx]] = A[idx[bx * 128 + tx]] + 1.0


@pytest.mark.parametrize("target", ["nvidia/nvidia-h100", "nvidia/nvidia-a100"])
def test_checked_kernel_compiles_and_traps_with_a_message(target: str) -> None:
    ex = tvm.compile(scatter, target=target, pass_config={"tir.bounds_check": True})
    src = ex.inspect_source()
    assert ('#define TVM_BOUNDS_FAIL(message) printf("tvm: %s (block %d, thread %d)\\n", '
            "message, (int)blockIdx.x, (int)threadIdx.x)") in src
    assert ('    TVM_BOUNDS_FAIL("bounds check failed: buffer A index `idx[bx * 128 + tx]` is '
            'outside [0, 1024)");\n    __trap();') in src
    assert "buffer idx index" not in src  # bx * 128 + tx is proven in range


def test_no_check_without_the_option(monkeypatch) -> None:
    monkeypatch.delenv("TVM_BOUNDS_CHECK", raising=False)
    src = tvm.compile(scatter, target="nvidia/nvidia-h100").inspect_source()
    assert "TVM_BOUNDS_FAIL" not in src and "__trap" not in src
