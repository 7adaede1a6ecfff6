"""A fused attention forward written in Triton: the reference row of ``attention_perf.py``
(issue 23 item 5). One program per (block of 128 queries, batch x head); keys and values in
blocks of 64; the online softmax in base 2 in float32; ``tl.dot`` for both products. Q, K and V
``[batch, heads, seq, d]`` contiguous, as many key/value heads as query heads.

Imported only where Triton is installed; ``TRITON_INTERPRET=1`` runs it on CPU tensors (the
check in ``attention_perf.py --smoke``).
"""

from __future__ import annotations

import math
from typing import Any

import triton
import triton.language as tl

BLOCK_M, BLOCK_N = 128, 64


@triton.jit
def _attention_fwd(Q, K, V, Out, qk_scale, S, D: tl.constexpr, BM: tl.constexpr,  # noqa: N803
                   BN: tl.constexpr, CAUSAL: tl.constexpr):  # noqa: N803
    pid_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * S * D
    rows = pid_m * BM + tl.arange(0, BM)
    cols = tl.arange(0, D)
    q = tl.load(Q + base + rows[:, None] * D + cols[None, :], mask=rows[:, None] < S, other=0.0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    hi = S
    if CAUSAL:
        hi = tl.minimum((pid_m + 1) * BM, S)
    for start in tl.range(0, hi, BN):
        keys = start + tl.arange(0, BN)
        kt = tl.load(K + base + keys[None, :] * D + cols[:, None], mask=keys[None, :] < S,
                     other=0.0)
        s = tl.dot(q, kt) * qk_scale
        keep = keys[None, :] < S
        if CAUSAL:
            keep = keep & (keys[None, :] <= rows[:, None])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * D + cols[None, :], mask=keys[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(Out + base + rows[:, None] * D + cols[None, :], out.to(Out.dtype.element_ty),
             mask=rows[:, None] < S)


def attention(q: Any, k: Any, v: Any, causal: bool = False) -> Any:
    """softmax(Q K^T / sqrt(d) [+ causal mask]) V for ``[b, h, s, d]`` tensors."""
    b, h, s, d = q.shape
    out = q.new_empty(q.shape)
    grid = (triton.cdiv(s, BLOCK_M), b * h)
    _attention_fwd[grid](q, k, v, out, 1.4426950408889634 / math.sqrt(d), s, D=d, BM=BLOCK_M,
                         BN=BLOCK_N, CAUSAL=causal, num_warps=8, num_stages=3)
    return out
