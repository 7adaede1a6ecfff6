"""The library's Hopper kernels under the CUDA emulator (CPU, no GPU): TMA loads and stores
through tensor maps derived at launch (128-byte swizzle, out-of-bounds zero fill, clipped
stores), wgmma from shared-memory descriptors (K- and MN-major) and from registers, mbarrier
transaction bytes, warp specialisation. Each result is checked against numpy."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()

ml_dtypes = pytest.importorskip("ml_dtypes")
TARGET = {"kind": "cuda", "arch": "sm_90a"}


def _emulated(func: Any) -> Any:
    return tvm.compile(func, target=TARGET, emulate=True)


def _check_bf16(got: np.ndarray, ref: np.ndarray) -> None:
    """f32 accumulation then one rounding to bfloat16: half a bfloat16 spacing (2^-8 of the
    value) plus the accumulation's own error, which matters only near zero."""
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=2.0 ** -8, atol=1e-3)


@pytest.mark.parametrize("m, n, k", [(256, 512, 192), (200, 264, 64)])
def test_gemm_bf16(m: int, n: int, k: int) -> None:
    """C = A @ B^T (TMA + wgmma + a producer warpgroup); 200 x 264 x 64: every tile edge
    crosses the arrays' ends (loads read zeros, stores are clipped)."""
    from tvm_backend_cuda import kernels

    ex = _emulated(kernels.gemm_func(m, n, k, "bfloat16", arch="sm_90a"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((n, k)).astype(ml_dtypes.bfloat16)
    c = np.full((m, n), 7.0, ml_dtypes.bfloat16)
    start = time.perf_counter()
    ex(a, b, c)
    assert time.perf_counter() - start < 30
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    _check_bf16(c, ref)


def test_gemm_float8_scaled() -> None:
    """e4m3 operands (8-bit wgmma, 128-byte rows of 128 elements) with scale_a * scale_b."""
    from tvm_backend_cuda import kernels

    m, n, k = 256, 512, 192
    ex = _emulated(kernels.gemm_func(m, n, k, "float8_e4m3fn", arch="sm_90a"))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((n, k)).astype(ml_dtypes.float8_e4m3fn)
    sa, sb = np.array([0.5], np.float32), np.array([0.25], np.float32)
    c = np.zeros((m, n), ml_dtypes.bfloat16)
    ex(a, b, sa, sb, c)
    ref = (a.astype(np.float32) @ b.astype(np.float32).T) * 0.125
    _check_bf16(c, ref)


def _attention_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    d = q.shape[-1]
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    v = np.repeat(v, q.shape[1] // v.shape[1], axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.exp(s - mx)
    total = p.sum(-1, keepdims=True)
    return (p / total) @ v, (np.log(total) + mx)[..., 0]


@pytest.mark.parametrize("shape, causal", [((1, 2, 2, 200, 300, 128), False),
                                           ((1, 4, 2, 200, 136, 64), True)])
def test_attention_forward(shape: tuple[int, ...], causal: bool) -> None:
    """FlashAttention forward: S = Q K^T (both operands in shared memory), O += P V (P from
    registers, V MN-major), key and query tails, GQA, causal."""
    from tvm_backend_cuda import kernels

    batch, hq, hk, sq, sk, d = shape
    ex = _emulated(kernels.attention_func(*shape, arch="sm_90a", causal=causal))
    rng = np.random.default_rng(2)
    bf = ml_dtypes.bfloat16
    q = rng.standard_normal((batch * hq * sq, d)).astype(bf)
    k = rng.standard_normal((batch * hk * sk, d)).astype(bf)
    v = rng.standard_normal((batch * hk * sk, d)).astype(bf)
    o = np.zeros((batch * hq * sq, d), bf)
    lse = np.zeros((batch * hq * sq,), np.float32)
    ex(q, k, v, o, lse)
    f32 = np.float32
    o_ref, lse_ref = _attention_ref(q.astype(f32).reshape(batch, hq, sq, d),
                                    k.astype(f32).reshape(batch, hk, sk, d),
                                    v.astype(f32).reshape(batch, hk, sk, d), causal)
    # P is rounded to bfloat16 before P V, as on the GPU
    np.testing.assert_allclose(o.astype(f32).reshape(o_ref.shape), o_ref, atol=2e-2)
    np.testing.assert_allclose(lse.reshape(lse_ref.shape), lse_ref, atol=1e-4)
