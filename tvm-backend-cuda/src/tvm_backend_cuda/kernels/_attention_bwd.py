"""FlashAttention backward on Hopper: dQ, dK, dV from Q, K, V, dO, the forward's log-sum-exp
and ``D = rowsum(dO * O)``, in two kernels written with the tile primitives and ``lang``
helpers, deterministic (no atomics).

Both recompute ``P = exp(S * scale - lse)`` from the saved log-sum-exp, with ``dS = P * (dP -
D)`` and ``dP = dO V^T``:

- :func:`attention_bwd_dkdv_func`: one CTA per (batch, key/value head, block of 128 keys), two
  consumer warpgroups of 64 keys each, a producer warpgroup that loads the CTA's K and V once
  and then, for every query head of the group and every block of 64 queries (from the causal
  diagonal on), Q's and dO's tiles into a ring. Per query block a consumer computes ``S^T = K
  Q^T`` and ``dP^T = V dO^T`` (wgmma, both operands in shared memory), ``P^T`` and ``dS^T`` in
  registers, then ``dV += P^T dO`` and ``dK += dS^T Q`` (wgmma with the 16-bit ``P^T`` and
  ``dS^T`` fragments as the A operand from registers, dO and Q read MN-major). dK is scaled
  and both are stored at the end.
- :func:`attention_bwd_dq_func`: one CTA per (batch, query head, block of 128 queries), two
  consumers of 64 queries; per block of 64 keys ``S = Q K^T``, ``dP = dO V^T``, ``dS``, and
  ``dQ += dS K`` (dS from registers, K MN-major).

This is the first round: the products run one after another in each warpgroup (no overlap of
the elementwise work with the tensor cores), and ``dS P`` is recomputed in the dQ kernel
rather than shared through shared memory and atomics (about 1.4x the backward's arithmetic).
Parameters are the operands as rows, like the forward's (``[batch * heads * seq, d]``; ``LSE``
and ``Dl`` ``[batch * heads_q * seq_q]`` float32). d 64 or 128.
"""

from __future__ import annotations

import math
from typing import Any, no_type_check

from tvm.ir import BufferStore, Stmt, seq
from tvm.ir import expr as E
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.target import Target
from tvm_backend_cuda.dispatch.gemm_wgmma import wgmma_accumulator_layout
from tvm_backend_cuda.executable import default_arch
from tvm_backend_cuda.lang import Pipeline, PipelineState, SMEMPool, TMABar, WarpgroupRole

from ._attention import CHUNK, LOG2E, _check, _qk, _store_rows, _tma_rows, _wait, _zero

__all__ = ["BWD_HEAD_DIMS", "attention_bwd_dkdv_func", "attention_bwd_dq_func"]

BWD_HEAD_DIMS = (64, 128)
KEYS = 128  # keys per dK/dV CTA (two consumer warpgroups of 64)
QROWS = 64  # queries per step of the dK/dV kernel
QBLOCK = 128  # queries per dQ CTA
KSTEP = 64  # keys per step of the dQ kernel


def _common(batch: int, heads_q: int, heads_kv: int, seq_q: int, seq_k: int, d: int,
            dtype: str, scale: float | None, arch: str | None) -> float:
    """The checked scale (default ``1 / sqrt(d)``) after the shape, dtype and arch checks."""
    _check(batch, heads_q, heads_kv, seq_q, seq_k, d, dtype)
    if d not in BWD_HEAD_DIMS:
        raise ValueError(f"attention backward: head_dim {d} is not one of {BWD_HEAD_DIMS}")
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(f"attention backward: scale must be a positive float, got {scale!r}")
    arch = arch or default_arch(Target("cuda"))
    if arch != "sm_90a":
        raise ValueError(f"attention backward: arch {arch!r}: the kernels are written for "
                         f"sm_90a (wgmma, TMA); pass arch='sm_90a' to compile for it")
    return float(scale)


def attention_bwd_dkdv_func(batch: int, heads_q: int, heads_kv: int, seq_q: int, seq_k: int,
                            head_dim: int, dtype: str = "bfloat16", *, causal: bool = False,
                            scale: float | None = None, arch: str | None = None) -> Any:
    """The dK/dV kernel (module docstring): parameters ``Q, K, V, dO, LSE, Dl, dK, dV``."""
    sc = _common(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, scale, arch)
    return _dkdv(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, bool(causal), sc)


def attention_bwd_dq_func(batch: int, heads_q: int, heads_kv: int, seq_q: int, seq_k: int,
                          head_dim: int, dtype: str = "bfloat16", *, causal: bool = False,
                          scale: float | None = None, arch: str | None = None) -> Any:
    """The dQ kernel (module docstring): parameters ``Q, K, V, dO, LSE, Dl, dQ``."""
    sc = _common(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, scale, arch)
    return _dq(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, bool(causal), sc)


# -- elementwise parts ------------------------------------------------------------------------------


def _p_ds(sf: Any, df: Any, n: int, lse2: Any, dl: Any, valid: Any, sl2: float) -> Stmt:
    """``sf`` (scores) becomes ``P = exp2(s * scale * log2(e) - lse2)`` (0 where not
    ``valid(i)``) and ``df`` (dP) becomes ``dS = P * (dP - D)``; ``lse2(i)`` and ``dl(i)`` give
    element ``i``'s log-sum-exp in base 2 and its D."""
    out: list[Stmt] = []
    for i in range(n):
        p = T.ptx.exp2(sf[i] * T.float32(sl2) - lse2(i))
        v = valid(i)
        if v is not None:
            p = T.if_then_else(v, p, T.float32(0))
        out.append(BufferStore(sf, p, [i]))
        out.append(BufferStore(df, sf[i] * (df[i] - dl(i)), [i]))
    return seq(out)


def _to16(src: Any, dst: Any, n: int, dtype: str) -> Stmt:
    return seq([BufferStore(dst, T.Cast(dtype, src[i]), [i]) for i in range(n)])


def _mma_rs(accs: list[Any], A: Any, Bs: Any, stage: Any, dc: int, rows: int) -> Stmt:
    """``acc_c += A @ B_c`` for each 64-column chunk ``c`` (A from registers, B MN-major)."""
    return seq([Tx.wg.gemm_async(accs[c], A, Bs[stage * dc + c, 0:rows, 0:CHUNK],
                                 transpose_B=True, accum=True) for c in range(dc)])


def _col(i: int, tid: Any) -> Any:
    """Column of accumulator register ``i`` of this thread (the fragment layout)."""
    return (i // 4) * 8 + tid % 4 * 2 + i % 2


# -- dK, dV ------------------------------------------------------------------------------------------
@no_type_check  # TVMScript: the parser gives the annotations their meaning
def _dkdv(batch: int, hq: int, hkv: int, sq: int, sk: int, d: int, dtype: str, causal: bool,
          scale: float) -> Any:
    dc = d // CHUNK
    rq, rk = batch * hq * sq, batch * hkv * sk
    k_blocks = -(-sk // KEYS)
    q_blocks = -(-sq // QROWS)
    group = hq // hkv
    sl2 = scale * LOG2E
    stages = 2
    s_layout = wgmma_accumulator_layout(64, QROWS)
    o_layout = wgmma_accumulator_layout(64, CHUNK)
    n_s = QROWS // 2  # score registers a thread

    # fmt: off
    @T.prim_func
    def attention_bwd_dkdv(Q: T.Buffer((rq, d), dtype), K: T.Buffer((rk, d), dtype),
                           V: T.Buffer((rk, d), dtype), dO: T.Buffer((rq, d), dtype),
                           LSE: T.Buffer((rq,), "float32"), Dl: T.Buffer((rq,), "float32"),
                           dK: T.Buffer((rk, d), dtype), dV: T.Buffer((rk, d), dtype)):
        T.device_entry()
        dK_w = T.decl_buffer((rk, d // 2), "uint32", data=dK.data)
        dV_w = T.decl_buffer((rk, d // 2), "uint32", data=dV.data)
        bx = T.cta_id([k_blocks * hkv * batch])
        wg = T.warpgroup_id([3])
        tid = T.thread_id_in_wg([128])
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        pool = SMEMPool()
        Ks = pool.alloc_mma((dc, KEYS, CHUNK), dtype)
        Vs = pool.alloc_mma((dc, KEYS, CHUNK), dtype)
        Qs = pool.alloc_mma((stages * dc, QROWS, CHUNK), dtype)
        dOs = pool.alloc_mma((stages * dc, QROWS, CHUNK), dtype)
        kv_bar = TMABar(pool, 1, 1, init_thread=wg * 128 + tid == 0)
        pipe = Pipeline(pool, stages, producer="tma", consumer_count=256,
                        init_thread=wg * 128 + tid == 0)
        role = WarpgroupRole(wg, producer=0, consumer=[1, 2],
                             regs={"producer": 40, "consumer": 232})
        bh = T.meta_var(bx // k_blocks)  # batch * hkv + kv head
        kb = T.meta_var(bx % k_blocks)
        k0 = T.meta_var(bh * sk + kb * KEYS)
        # query blocks from the causal diagonal on, for each query head of the group
        i0 = T.meta_var(T.min(kb * KEYS // QROWS, q_blocks) if causal else 0)
        n_it = T.meta_var(group * (q_blocks - i0))
        if role.producer:
            role.setmaxnreg("producer")
            if tid == 0:
                kv_bar.arrive(0, 2 * KEYS * d * 2)
                _tma_rows(Ks, 0, K, k0, KEYS, dc, kv_bar[0])
                _tma_rows(Vs, 0, V, k0, KEYS, dc, kv_bar[0])
                ps = PipelineState(stages)
                for it in T.serial(n_it):
                    q0 = T.meta_var(((bh // hkv * hq) + bh % hkv * group + it // (q_blocks - i0))
                                    * sq + (i0 + it % (q_blocks - i0)) * QROWS)
                    pipe.producer_acquire(ps)
                    pipe.producer_commit(ps, 2 * QROWS * d * 2)
                    _tma_rows(Qs, ps.index * dc, Q, q0, QROWS, dc, pipe.full[ps.index])
                    _tma_rows(dOs, ps.index * dc, dO, q0, QROWS, dc, pipe.full[ps.index])
                    ps.advance()
        else:
            role.setmaxnreg("consumer")
            cw = role.index("consumer")
            S = T.alloc_buffer((64, QROWS), "float32", scope="local", layout=s_layout)
            sf = T.decl_buffer((n_s,), "float32", data=S.data, scope="local")
            dP = T.alloc_buffer((64, QROWS), "float32", scope="local", layout=s_layout)
            df = T.decl_buffer((n_s,), "float32", data=dP.data, scope="local")
            P16 = T.alloc_buffer((64, QROWS), dtype, scope="local", layout=s_layout)
            pf = T.decl_buffer((n_s,), dtype, data=P16.data, scope="local")
            dS16 = T.alloc_buffer((64, QROWS), dtype, scope="local", layout=s_layout)
            dsf = T.decl_buffer((n_s,), dtype, data=dS16.data, scope="local")
            dV0 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dv0 = T.decl_buffer((CHUNK // 2,), "float32", data=dV0.data, scope="local")
            dV1 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dv1 = T.decl_buffer((CHUNK // 2,), "float32", data=dV1.data, scope="local")
            dK0 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dk0 = T.decl_buffer((CHUNK // 2,), "float32", data=dK0.data, scope="local")
            dK1 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dk1 = T.decl_buffer((CHUNK // 2,), "float32", data=dK1.data, scope="local")
            lse2 = T.alloc_buffer((n_s // 2,), "float32", scope="local")
            dl = T.alloc_buffer((n_s // 2,), "float32", scope="local")
            # this thread's key (h = 0; h = 1 is 8 below) within the sequence
            key = T.meta_var(kb * KEYS + cw * 64 + tid // 32 * 16 + tid % 32 // 4)
            _zero([dv0, dv1][:dc] + [dk0, dk1][:dc])
            cs = PipelineState(stages)
            kv_bar.wait(0, 0)
            for it in T.serial(n_it):
                qi = T.meta_var(i0 + it % (q_blocks - i0))
                qrow = T.meta_var(((bh // hkv * hq) + bh % hkv * group + it // (q_blocks - i0))
                                  * sq)
                # this thread's columns' (queries') log-sum-exp (base 2) and D; past seq_q: 0
                for c2 in T.unroll(n_s // 2):
                    lse2[c2] = T.if_then_else(
                        qi * QROWS + c2 // 2 * 8 + tid % 4 * 2 + c2 % 2 < sq,
                        LSE[qrow + T.min(qi * QROWS + c2 // 2 * 8 + tid % 4 * 2 + c2 % 2, sq - 1)]
                        * T.float32(LOG2E), T.float32(0))
                    dl[c2] = Dl[qrow + T.min(qi * QROWS + c2 // 2 * 8 + tid % 4 * 2 + c2 % 2,
                                             sq - 1)]
                pipe.consumer_wait(cs)
                _qk(S, Ks, Qs, cs.index, cw, dc, QROWS)
                _qk(dP, Vs, dOs, cs.index, cw, dc, QROWS)
                _wait(0, [(sf, n_s), (df, n_s)])
                _p_ds(sf, df, n_s, lambda i: lse2[i // 4 * 2 + i % 2],
                      lambda i: dl[i // 4 * 2 + i % 2],
                      lambda i, qi=qi: _kv_valid(i, key, qi, tid, sq, sk, causal), sl2)
                _to16(sf, pf, n_s, dtype)
                _to16(df, dsf, n_s, dtype)
                _mma_rs([dV0, dV1], P16, dOs, cs.index, dc, QROWS)
                _mma_rs([dK0, dK1], dS16, Qs, cs.index, dc, QROWS)
                _wait(0, [(o, CHUNK // 2) for o in [dv0, dv1][:dc] + [dk0, dk1][:dc]])
                pipe.consumer_release(cs)
                cs.advance()
            for h in T.unroll(2):
                if key + h * 8 < sk:
                    _store_rows(dV_w, bh * sk + key + h * 8, [dv0, dv1][:dc], h, T.float32(1.0), tid,
                                dtype)
                    _store_rows(dK_w, bh * sk + key + h * 8, [dk0, dk1][:dc], h, T.float32(scale), tid,
                                dtype)
    # fmt: on
    return attention_bwd_dkdv


def _kv_valid(i: int, key: Any, qi: Any, tid: Any, sq: int, sk: int, causal: bool) -> Any:
    """Whether element ``i`` of this thread's ``S^T`` (row: its key, ``h = (i // 2) % 2``;
    column: a query of block ``qi``) counts: key and query inside their sequences and, causal,
    the key at or before the query."""
    k = key + (i // 2) % 2 * 8
    q = qi * QROWS + _col(i, tid)
    ok = E.And(k < sk, q < sq)
    if causal:
        ok = E.And(ok, k <= q)
    return ok


# -- dQ ----------------------------------------------------------------------------------------------
@no_type_check  # TVMScript: the parser gives the annotations their meaning
def _dq(batch: int, hq: int, hkv: int, sq: int, sk: int, d: int, dtype: str, causal: bool,
        scale: float) -> Any:
    dc = d // CHUNK
    rq, rk = batch * hq * sq, batch * hkv * sk
    q_blocks = -(-sq // QBLOCK)
    k_blocks = -(-sk // KSTEP)
    group = hq // hkv
    sl2 = scale * LOG2E
    stages = 2
    s_layout = wgmma_accumulator_layout(64, KSTEP)
    o_layout = wgmma_accumulator_layout(64, CHUNK)
    n_s = KSTEP // 2

    # fmt: off
    @T.prim_func
    def attention_bwd_dq(Q: T.Buffer((rq, d), dtype), K: T.Buffer((rk, d), dtype),
                         V: T.Buffer((rk, d), dtype), dO: T.Buffer((rq, d), dtype),
                         LSE: T.Buffer((rq,), "float32"), Dl: T.Buffer((rq,), "float32"),
                         dQ: T.Buffer((rq, d), dtype)):
        T.device_entry()
        dQ_w = T.decl_buffer((rq, d // 2), "uint32", data=dQ.data)
        bx = T.cta_id([q_blocks * hq * batch])
        wg = T.warpgroup_id([3])
        tid = T.thread_id_in_wg([128])
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        pool = SMEMPool()
        Qs = pool.alloc_mma((dc, QBLOCK, CHUNK), dtype)
        dOs = pool.alloc_mma((dc, QBLOCK, CHUNK), dtype)
        Ks = pool.alloc_mma((stages * dc, KSTEP, CHUNK), dtype)
        Vs = pool.alloc_mma((stages * dc, KSTEP, CHUNK), dtype)
        q_bar = TMABar(pool, 1, 1, init_thread=wg * 128 + tid == 0)
        pipe = Pipeline(pool, stages, producer="tma", consumer_count=256,
                        init_thread=wg * 128 + tid == 0)
        role = WarpgroupRole(wg, producer=0, consumer=[1, 2],
                             regs={"producer": 40, "consumer": 232})
        bh = T.meta_var(bx // q_blocks)
        qb = T.meta_var(q_blocks - 1 - bx % q_blocks)
        kv0 = T.meta_var((bh // hq * hkv + bh % hq // group) * sk)
        q0 = T.meta_var(bh * sq + qb * QBLOCK)
        n_blk = T.meta_var(T.min(k_blocks, ((qb + 1) * QBLOCK + KSTEP - 1) // KSTEP) if causal
                           else k_blocks)
        if role.producer:
            role.setmaxnreg("producer")
            if tid == 0:
                q_bar.arrive(0, 2 * QBLOCK * d * 2)
                _tma_rows(Qs, 0, Q, q0, QBLOCK, dc, q_bar[0])
                _tma_rows(dOs, 0, dO, q0, QBLOCK, dc, q_bar[0])
                ps = PipelineState(stages)
                for j in T.serial(n_blk):
                    pipe.producer_acquire(ps)
                    pipe.producer_commit(ps, 2 * KSTEP * d * 2)
                    _tma_rows(Ks, ps.index * dc, K, kv0 + j * KSTEP, KSTEP, dc, pipe.full[ps.index])
                    _tma_rows(Vs, ps.index * dc, V, kv0 + j * KSTEP, KSTEP, dc, pipe.full[ps.index])
                    ps.advance()
        else:
            role.setmaxnreg("consumer")
            cw = role.index("consumer")
            S = T.alloc_buffer((64, KSTEP), "float32", scope="local", layout=s_layout)
            sf = T.decl_buffer((n_s,), "float32", data=S.data, scope="local")
            dP = T.alloc_buffer((64, KSTEP), "float32", scope="local", layout=s_layout)
            df = T.decl_buffer((n_s,), "float32", data=dP.data, scope="local")
            dS16 = T.alloc_buffer((64, KSTEP), dtype, scope="local", layout=s_layout)
            dsf = T.decl_buffer((n_s,), dtype, data=dS16.data, scope="local")
            dQ0 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dq0 = T.decl_buffer((CHUNK // 2,), "float32", data=dQ0.data, scope="local")
            dQ1 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dq1 = T.decl_buffer((CHUNK // 2,), "float32", data=dQ1.data, scope="local")
            lse2 = T.alloc_buffer((2,), "float32", scope="local")
            dl = T.alloc_buffer((2,), "float32", scope="local")
            row = T.meta_var(cw * 64 + tid // 32 * 16 + tid % 32 // 4)
            for h in T.unroll(2):
                lse2[h] = LSE[q0 + T.min(qb * QBLOCK + row + h * 8, sq - 1) - qb * QBLOCK] \
                    * T.float32(LOG2E)
                dl[h] = Dl[q0 + T.min(qb * QBLOCK + row + h * 8, sq - 1) - qb * QBLOCK]
            _zero([dq0, dq1][:dc])
            cs = PipelineState(stages)
            q_bar.wait(0, 0)
            for j in T.serial(n_blk):
                pipe.consumer_wait(cs)
                _qk(S, Qs, Ks, cs.index, cw, dc, KSTEP)
                _qk(dP, dOs, Vs, cs.index, cw, dc, KSTEP)
                _wait(0, [(sf, n_s), (df, n_s)])
                _p_ds(sf, df, n_s, lambda i: lse2[(i // 2) % 2], lambda i: dl[(i // 2) % 2],
                      lambda i, j=j: _q_valid(i, j, qb, row, tid, sk, causal), sl2)
                _to16(df, dsf, n_s, dtype)
                _mma_rs([dQ0, dQ1], dS16, Ks, cs.index, dc, KSTEP)
                _wait(0, [(o, CHUNK // 2) for o in [dq0, dq1][:dc]])
                pipe.consumer_release(cs)
                cs.advance()
            for h in T.unroll(2):
                if qb * QBLOCK + row + h * 8 < sq:
                    _store_rows(dQ_w, q0 + row + h * 8, [dq0, dq1][:dc], h, T.float32(scale), tid,
                                dtype)
    # fmt: on
    return attention_bwd_dq


def _q_valid(i: int, j: Any, qb: Any, row: Any, tid: Any, sk: int, causal: bool) -> Any:
    """Whether element ``i`` of this thread's ``S`` (its query row, key block ``j``) counts."""
    k = j * KSTEP + _col(i, tid)
    ok = k < sk
    if causal:
        ok = E.And(ok, k <= qb * QBLOCK + row + (i // 2) % 2 * 8)
    return ok
