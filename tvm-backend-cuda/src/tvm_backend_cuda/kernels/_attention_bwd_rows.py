"""The row kernels around the attention backward (:mod:`._attention_bwd`): ``pre`` computes
``delta = rowsum(dO * O)`` (and the log-sum-exp in base 2) per query row before the dK/dV
kernel, ``post`` turns the float32 dQ accumulator, kept in the register-quad order of the
atomic dQ path (:func:`dqa_layout`), into dQ. Both are one CTA per group of rows."""

from __future__ import annotations

import math
from typing import Any, no_type_check

from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

from ._attention import CHUNK, LOG2E
from ._attention_bwd import (
    BWD_HEAD_DIMS,
    DQA_COL,
    DQA_DIGITS,
    DQA_QUAD,
    DQA_QUADS,
    DQA_ROW,
    QROWS,
    _dqa_quad,
    padded_seq,
)
from ._gemm import _pack
from ._rows import plan_rows

__all__ = ["attention_bwd_post_func", "attention_bwd_pre_func", "dqa_layout"]


def dqa_layout(rows: int, seq_q: int, d: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """How to read the dK/dV kernel's ``dQa`` as rows: ``(shape, axes)`` such that
    ``dQa.reshape(shape).transpose(axes)`` (torch: ``.view(shape).permute(axes)``) is
    ``[rows, padded_seq(seq_q), d]`` once reshaped (``rows = batch * heads_q``).

    Tile ``(row, query block, chunk of d)`` holds the block's 64 x 64 piece in the order of
    :data:`DQA_DIGITS` (register quad ``k`` of thread ``32 w + 4 i + q``, its element ``2 h +
    e``; row ``16 w + 8 h + i``, column ``8 k + 2 q + e``): the fragment order in which each
    warp's vector atomic adds cover 512 contiguous bytes."""
    shape = (rows, padded_seq(seq_q) // QROWS, d // CHUNK, *(n for _, n in DQA_DIGITS))
    # [row, block, chunk, *digits] -> [row, block, *row digits, chunk, *column digits]
    at = {name: 3 + pos for pos, (name, _) in enumerate(DQA_DIGITS)}
    return shape, (0, 1, *(at[x] for x in DQA_ROW), 2, *(at[x] for x in DQA_COL))


@no_type_check  # TVMScript: the parser gives the annotations their meaning
def attention_bwd_pre_func(rows: int, seq_q: int, d: int, dtype: str = "bfloat16") -> Any:
    """The backward's first step, one pass over O and dO: ``Dl[r, q] = sum(O * dO)`` over the
    row of query ``q`` of query head ``r`` (``rows = batch * heads_q``), in float32, and
    ``LSE2 = LSE * log2(e)``; the padding columns of both (:func:`padded_seq`) are zero. A
    warp a row (16-byte vector loads, the sum reduced over the warp). Parameters ``O, dO,
    LSE, LSE2, Dl``: O and dO ``[rows * seq_q, d]``, LSE ``[rows * seq_q]``."""
    dt = str(dtype)
    plan = plan_rows(d, dt)
    if not plan.warp_per_row:
        raise ValueError(f"attention backward: head_dim {d} is not one of {BWD_HEAD_DIMS}")
    per_cta = plan.rows_per_cta
    layout = plan.layout()
    width = plan.threads
    sqp = padded_seq(seq_q)
    total = rows * sqp

    @T.prim_func
    def attention_bwd_pre(O: T.Buffer((rows * seq_q, d), dt),  # noqa: E741
                          dO: T.Buffer((rows * seq_q, d), dt),
                          LSE: T.Buffer((rows * seq_q,), "float32"),
                          LSE2: T.Buffer((rows, sqp), "float32"),
                          Dl: T.Buffer((rows, sqp), "float32")):
        T.device_entry()
        bx = T.cta_id([(total + per_cta - 1) // per_cta])
        tid = T.thread_id([width * per_cta])
        o = T.alloc_buffer((plan.padded,), "float32", scope="local", layout=layout)
        g = T.alloc_buffer((plan.padded,), "float32", scope="local", layout=layout)
        s = T.alloc_buffer((1,), "float32", scope="local")
        r = T.meta_var(bx * per_cta + tid // width)
        h = T.meta_var(r // sqp)
        qq = T.meta_var(r % sqp)
        if r < total:
            if qq < seq_q:
                Tx.warp.copy(o[0:d], O[h * seq_q + qq, 0:d])
                Tx.warp.copy(g[0:d], dO[h * seq_q + qq, 0:d])
                Tx.warp.mul(o[0:d], o[0:d], g[0:d])
                Tx.warp.sum(s[0:1], o[0:d])
                if tid % width == 0:
                    Dl[h, qq] = s[0]
                    LSE2[h, qq] = LSE[h * seq_q + qq] * T.float32(LOG2E)
            else:
                if tid % width == 0:
                    Dl[h, qq] = T.float32(0)
                    LSE2[h, qq] = T.float32(0)

    return attention_bwd_pre


@no_type_check  # TVMScript: the parser gives the annotations their meaning
def attention_bwd_post_func(rows: int, seq_q: int, d: int, dtype: str = "bfloat16",
                            scale: float | None = None) -> Any:
    """The backward's last step when dQ was added atomically: ``dQ = dQa * scale`` in
    ``dtype``, rows ``[rows * seq_q, d]``, from the fragment-ordered tiles of ``dQa``
    (:func:`dqa_layout`): a CTA of 128 threads a 64 x 64 tile, each thread reading its own
    eight 16-byte quads (contiguous across the warp) and writing its element pairs to their
    rows. Parameters ``dQa, dQ``."""
    if d not in BWD_HEAD_DIMS:
        raise ValueError(f"attention backward: head_dim {d} is not one of {BWD_HEAD_DIMS}")
    sc = 1.0 / math.sqrt(d) if scale is None else float(scale)
    dc = d // CHUNK
    nqb = padded_seq(seq_q) // QROWS
    dt = str(dtype)

    @T.prim_func
    def attention_bwd_post(dQa: T.Buffer((rows * nqb * QROWS * d,), "float32"),
                           dQ: T.Buffer((rows * seq_q, d), dt)):
        T.device_entry()
        dQ_w = T.decl_buffer((rows * seq_q, d // 2), "uint32", data=dQ.data)
        bx = T.cta_id([rows * nqb * dc])  # the tile: (row * nqb + query block) * dc + chunk
        tid = T.thread_id([128])
        v = T.alloc_buffer((CHUNK // 2,), "float32", scope="local")
        # the thread's quads (DQA_DIGITS): register 4 k + 2 h + e is row 16 w + 8 h + i,
        # column 8 k + 2 q + e of the tile
        for k in T.unroll(DQA_QUADS):
            for e in T.unroll(DQA_QUAD):
                v[k * DQA_QUAD + e] = dQa[_dqa_quad(bx, k, tid) + e]
        q0 = T.meta_var(bx // dc % nqb * QROWS + tid // 32 * 16 + tid % 32 // 4)
        for h in T.unroll(2):
            if q0 + h * 8 < seq_q:
                for k in T.unroll(DQA_QUADS):
                    dQ_w[bx // (nqb * dc) * seq_q + q0 + h * 8,
                         bx % dc * (CHUNK // 2) + k * 4 + tid % 4] = _pack(
                        v[DQA_QUAD * k + 2 * h] * T.float32(sc),
                        v[DQA_QUAD * k + 2 * h + 1] * T.float32(sc), dt)

    return attention_bwd_post
