"""Triton kernels of the same jobs as ``tvm_backend_cuda.kernels`` (written for this benchmark): the
comparison column of ``bench/cuda_perf.py``. Each is the usual one-program-per-row (or
per-block) form: the row in registers, one pass over memory, float32 arithmetic."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

__all__ = ["add", "layernorm", "rmsnorm", "softmax"]


@triton.jit
def _add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):  # noqa: N803
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask).to(tl.float32)
    tl.store(c_ptr + offs, (a + b).to(c_ptr.dtype.element_ty), mask=mask)


def add(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    n = a.numel()
    block = 4096
    _add_kernel[(triton.cdiv(n, block),)](a, b, c, n, BLOCK=block, num_warps=8)


def _warps(block: int) -> int:
    return max(4, min(16, block // 512))


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):  # noqa: N803
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * n + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor, y: torch.Tensor) -> None:
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _softmax_kernel[(m,)](x, y, n, BLOCK=block, num_warps=_warps(block))


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):  # noqa: N803
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(y_ptr + row * n + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm(x: torch.Tensor, w: torch.Tensor, y: torch.Tensor, eps: float = 1e-6) -> None:
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _rmsnorm_kernel[(m,)](x, w, y, n, eps, BLOCK=block, num_warps=_warps(block))


@triton.jit
def _layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):  # noqa: N803
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n + eps)
    tl.store(y_ptr + row * n + offs, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def layernorm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, y: torch.Tensor,
              eps: float = 1e-5) -> None:
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _layernorm_kernel[(m,)](x, w, b, y, n, eps, BLOCK=block, num_warps=_warps(block))

