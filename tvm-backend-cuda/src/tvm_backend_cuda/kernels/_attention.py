"""FlashAttention forward: ``O = softmax(Q K^T * scale [+ causal mask]) V`` and the log-sum-exp
of each row, written with the tile primitives and the ``tvm_backend_cuda.lang`` helpers.

``attention_func(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, *, causal, scale)``
returns the PrimFunc. Its parameters are the operands flattened to rows: ``Q`` ``[batch *
heads_q * seq_q, d]``, ``K`` and ``V`` ``[batch * heads_kv * seq_k, d]`` (each a contiguous
``[batch, heads, seq, d]`` tensor viewed 2-d), ``O`` like ``Q`` and ``LSE`` ``[batch * heads_q *
seq_q]`` float32 (natural log of each row's softmax denominator, of the scaled scores). heads_q
is a multiple of heads_kv (query head ``h`` reads key/value head ``h // (heads_q //
heads_kv)``: GQA, MQA). The causal mask is torch's (``is_causal=True``): query ``i`` sees keys
``j <= i``. Any sequence lengths: a tail block of keys is masked, a tail block of queries is
computed and not stored.

**sm_90a** (Hopper): one CTA per (batch, head, block of 128 queries), the query blocks of a head
next to each other (their K and V stay in L2) and, causal, the longest blocks first; 384
threads:

- warpgroup 0, the *producer* (40 registers): one thread loads Q's ``128 x d`` tile once
  (TMA, 128-byte swizzle, ``d / 64`` column chunks of one swizzle atom row each), then for
  each block of 128 keys (64 at d = 256) K's tile into the *K* ring and V's into the *V* ring
  (``stages`` slots each), so the V copy of a block overlaps the scores of the same block;
- warpgroups 1 and 2, the *consumers* (232 registers), 64 query rows each. Per key block j:
  issue ``S = Q K_j^T`` (``Tx.wg.gemm_async``, wgmma with both operands in shared memory, 64
  float32 registers a thread), then issue the previous block's ``O += P V_{j-1}``
  (``Tx.wg.gemm_async`` taking P from registers: the accumulator fragment converted to 16
  bits is wgmma's A fragment; V read MN-major), wait for S only and run block j's online
  softmax while ``P V_{j-1}`` is on the tensor cores (FA3's intra-warpgroup overlap): the row
  max over the thread's fragment and its quad of lanes by two shuffles, ``exp2(s * scale *
  log2(e) - m)`` (one FFMA and one MUFU an element), the row sum kept per thread and summed
  over the quad once at the end. Then wait for ``P V_{j-1}``, rescale O by ``exp2(m_old -
  m_new)`` and convert the new P. Masks are applied only to the blocks that need them (the
  causal diagonal, the key tail);
- the epilogue divides by the row sum and stores O (two 16-bit values per 32-bit store, rows
  past ``seq_q`` skipped) and the log-sum-exp.

d = 256 takes blocks of 64 keys (:func:`block_n`): its output is 128 registers a thread.

Not yet: the consumers' explicit ping-pong (named barriers ordering one warpgroup's softmax
against the other's GEMMs; the hardware interleaves them as it is), the backward.
"""

from __future__ import annotations

import math
from typing import Any, no_type_check

from tvm.ir import BufferStore, Stmt, const, seq
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.target import Target
from tvm.tirx.op import all_of, any_of
from tvm_backend_cuda.dispatch.gemm_wgmma import register_barrier, wgmma_accumulator_layout
from tvm_backend_cuda.executable import default_arch
from tvm_backend_cuda.lang import Pipeline, PipelineState, SMEMPool, TMABar, WarpgroupRole
from tvm_backend_cuda.lang.alloc_pool import MAX_DYN_SMEM_BYTES as SMEM_BYTES

from ._gemm import _pack

__all__ = ["BM", "DTYPES", "HEAD_DIMS", "attention_func", "block_n"]

BM = 128  # query rows per CTA: two consumer warpgroups of 64
HEAD_DIMS = (64, 128, 256)
DTYPES = ("bfloat16", "float16")
CHUNK = 64  # columns of d per swizzle-atom row (128 bytes of a 16-bit type)
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
_FULL = 0xFFFFFFFF


def _check(batch: int, heads_q: int, heads_kv: int, seq_q: int, seq_k: int, d: int,
           dtype: str) -> None:
    for name, v in (("batch", batch), ("heads_q", heads_q), ("heads_kv", heads_kv),
                    ("seq_q", seq_q), ("seq_k", seq_k), ("head_dim", d)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"attention: {name} must be a positive int, got {v!r}")
    if heads_q % heads_kv:
        raise ValueError(f"attention: heads_q = {heads_q} must be a multiple of heads_kv = "
                         f"{heads_kv} (each key/value head serves heads_q // heads_kv query "
                         f"heads)")
    if d not in HEAD_DIMS:
        raise ValueError(f"attention: head_dim {d} is not one of {HEAD_DIMS}; pad the head "
                         f"dimension with zeros to the next one")
    if dtype not in DTYPES:
        raise ValueError(f"attention: dtype {dtype!r} is not one of {DTYPES}")


def block_n(d: int) -> int:
    """Keys per block: 128, or 64 at d = 256 (whose output takes 128 registers a thread)."""
    return 128 if d <= 128 else 64


def _stages(d: int, want: int | None) -> int:
    tile = block_n(d) * d * 2  # one K or V tile of a 16-bit type
    fit = (SMEM_BYTES - BM * d * 2 - 1024) // (2 * tile)
    if want is None:
        return min(fit, 2)
    if not isinstance(want, int) or isinstance(want, bool) or not 1 <= want <= fit:
        raise ValueError(f"attention: stages={want!r}: between 1 and {fit} stages of K and V "
                         f"tiles ({2 * tile} bytes) fit beside Q's tile at head_dim {d}")
    return want


def attention_func(batch: int, heads_q: int, heads_kv: int, seq_q: int, seq_k: int,
                   head_dim: int, dtype: str = "bfloat16", *, causal: bool = False,
                   scale: float | None = None, arch: str | None = None,
                   stages: int | None = None) -> Any:
    """The attention forward PrimFunc (module docstring) for ``arch`` ``"sm_90a"`` (default:
    this machine's GPU). ``scale`` defaults to ``1 / sqrt(head_dim)``; ``stages``: slots of
    each of the K and V rings (default 2)."""
    _check(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype)
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(f"attention: scale must be a positive float, got {scale!r}")
    nst = _stages(head_dim, stages)
    arch = arch or default_arch(Target("cuda"))
    if arch != "sm_90a":
        raise ValueError(f"attention: arch {arch!r}: the kernel is written for sm_90a (wgmma, "
                         f"TMA); on a machine without such a GPU pass arch='sm_90a'")
    return _hopper(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, bool(causal),
                   float(scale), nst)


# -- statement builders (Python loops unrolled at build time) -----------------------------------


def _tma_rows(S: Any, first: Any, G: Any, r0: Any, rows: int, dc: int, mbar: Any) -> Stmt:
    """TMA copies of ``G``'s rows ``r0 .. r0 + rows``, one per 64-column chunk ``c`` of d, into
    ``S[first + c]``, completing on ``mbar``."""
    return seq([Tx.copy_async(S[first + c, 0:rows, 0:CHUNK],
                              G[r0:r0 + rows, c * CHUNK:c * CHUNK + CHUNK], dispatch="tma",
                              config={"mbar": mbar}) for c in range(dc)])


def _qk(S: Any, Qs: Any, Ks: Any, stage: Any, cw: Any, dc: int, bn: int) -> Stmt:
    """Issue ``S = Q K^T`` over the ``dc`` column chunks of d (``dc`` wgmma groups)."""
    return seq([Tx.wg.gemm_async(S, Qs[c, cw * 64:cw * 64 + 64, 0:CHUNK],
                                 Ks[stage * dc + c, 0:bn, 0:CHUNK], accum=c > 0)
                for c in range(dc)])


def _pv(Os: list[Any], P: Any, Vs: Any, stage: Any, dc: int, bn: int) -> Stmt:
    """Issue ``O_c += P V_c`` for each chunk ``c`` of d (V MN-major; ``dc`` wgmma groups)."""
    return seq([Tx.wg.gemm_async(Os[c], P, Vs[stage * dc + c, 0:bn, 0:CHUNK],
                                 transpose_B=True, accum=True) for c in range(dc)])


def _wait(pending: int, regs: list[tuple[Any, int]]) -> Stmt:
    """``wgmma.wait_group(pending)``, then a register barrier on the first ``n`` registers of
    each ``(flat buffer, n)`` the finished groups wrote, so that no read moves above the
    wait."""
    out: list[Any] = [T.evaluate(T.ptx.wgmma.wait_group(pending))]
    for buf, n in regs:
        out += register_barrier(buf, n)
    return seq(out)


def _quad_max(red: Any, v: Any) -> list[Stmt]:
    """``red[0] = max of v over the 4 lanes of a quad`` (the lanes holding one row)."""
    out: list[Stmt] = [BufferStore(red, v, [0])]
    for lane_mask in (1, 2):
        out.append(BufferStore(red, T.max(red[0], T.cuda.__shfl_xor_sync(
            const(_FULL, "uint32"), red[0], lane_mask, 32)), [0]))
    return out


def _softmax(sf: Any, m_i: Any, l_i: Any, alpha: Any, red: Any, *, sl2: float, bn: int,
             mask: tuple[Any, ...] | None = None, sk: int = 0, causal: bool = False) -> Stmt:
    """One block of the online softmax for this thread's two rows (h = 0, 1), in place.

    ``sf``: the ``bn / 2`` score registers (element ``i`` in row half ``(i // 2) % 2``); ``mask``:
    ``(j, qb, row, tid)`` for a block that needs the mask (:func:`_valid`), else None. The row
    max ``m_i[h]`` (in units of ``scale * log2(e)``) is updated over the quad, ``alpha[h] =
    exp2(m_old - m_new)``, the scores become ``exp2(s * scale * log2(e) - m_new)`` (one FFMA
    and one MUFU each) and the row sum ``l_i[h]`` (this thread's part) is rescaled and
    grows."""
    n = bn // 2
    out: list[Stmt] = []
    if mask is not None:
        out += [BufferStore(sf, T.if_then_else(_valid(i, (i // 2) % 2, mask, sk, causal, bn),
                                               sf[i], T.float32(-math.inf)), [i])
                for i in range(n)]
    for h in range(2):
        regs = [i for i in range(n) if (i // 2) % 2 == h]
        out += _quad_max(red, T.max(*[sf[i] for i in regs]))
        # the new max (red[1]) and the one subtracted (red[2]: 0 while the row has seen only
        # masked keys, so that -inf - -inf never happens)
        out.append(BufferStore(red, T.max(m_i[h], red[0] * T.float32(sl2)), [1]))
        out.append(BufferStore(red, T.if_then_else(red[1] == T.float32(-math.inf),
                                                   T.float32(0), red[1]), [2]))
        out.append(BufferStore(alpha, T.ptx.exp2(m_i[h] - red[2]), [h]))
        out.append(BufferStore(m_i, red[1], [h]))
        total = None
        for i in regs:
            out.append(BufferStore(sf, T.ptx.exp2(sf[i] * T.float32(sl2) - red[2]), [i]))
            total = sf[i] if total is None else total + sf[i]
        out.append(BufferStore(l_i, l_i[h] * alpha[h] + total, [h]))
    return seq(out)


def _rescale_and_pack(sf: Any, pf: Any, ofs: list[Any], alpha: Any, dc: int, bn: int,
                      dtype: str) -> Stmt:
    """``O *= alpha`` per row and ``P = S`` in ``dtype`` (after the previous ``P V`` is done:
    it reads P's registers and writes O's)."""
    out: list[Stmt] = []
    for o in ofs[:dc]:
        out += [BufferStore(o, o[i] * alpha[(i // 2) % 2], [i]) for i in range(CHUNK // 2)]
    out += [BufferStore(pf, T.Cast(dtype, sf[i]), [i]) for i in range(bn // 2)]
    return seq(out)


# -- Hopper: wgmma -------------------------------------------------------------------------------
@no_type_check  # TVMScript: the parser gives the annotations their meaning
def _hopper(batch: int, hq: int, hkv: int, sq: int, sk: int, d: int, dtype: str, causal: bool,
            scale: float, stages: int) -> Any:
    dc = d // CHUNK
    BN = block_n(d)
    rq, rk = batch * hq * sq, batch * hkv * sk
    q_blocks = -(-sq // BM)
    k_blocks = -(-sk // BN)
    group = hq // hkv
    sl2 = scale * LOG2E
    tile_bytes = BN * d * 2
    q_bytes = BM * d * 2
    acc_layout = wgmma_accumulator_layout(64, BN)
    o_layout = wgmma_accumulator_layout(64, CHUNK)
    key_tail = sk % BN != 0

    # fmt: off
    @T.prim_func
    def attention_sm90(Q: T.Buffer((rq, d), dtype), K: T.Buffer((rk, d), dtype),
                       V: T.Buffer((rk, d), dtype), O: T.Buffer((rq, d), dtype),  # noqa: E741
                       LSE: T.Buffer((rq,), "float32")):
        T.device_entry()
        O_w = T.decl_buffer((rq, d // 2), "uint32", data=O.data)
        bx = T.cta_id([q_blocks * hq * batch])
        wg = T.warpgroup_id([3])
        tid = T.thread_id_in_wg([128])
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        pool = SMEMPool()
        Qs = pool.alloc_mma((dc, BM, CHUNK), dtype)
        Ks = pool.alloc_mma((stages * dc, BN, CHUNK), dtype)
        Vs = pool.alloc_mma((stages * dc, BN, CHUNK), dtype)
        q_bar = TMABar(pool, 1, 1, init_thread=wg * 128 + tid == 0)
        pipe_k = Pipeline(pool, stages, producer="tma", consumer_count=256,
                          init_thread=wg * 128 + tid == 0)
        pipe_v = Pipeline(pool, stages, producer="tma", consumer_count=256,
                          init_thread=wg * 128 + tid == 0)
        role = WarpgroupRole(wg, producer=0, consumer=[1, 2],
                             regs={"producer": 40, "consumer": 232})
        # query blocks of a head are neighbours (K, V shared in L2), the last (longest when
        # causal) first
        bh = T.meta_var(bx // q_blocks)
        qb = T.meta_var(q_blocks - 1 - bx % q_blocks)
        kv0 = T.meta_var((bh // hq * hkv + bh % hq // group) * sk)
        q0 = T.meta_var(bh * sq + qb * BM)
        n_blk = T.meta_var(T.min(k_blocks, ((qb + 1) * BM + BN - 1) // BN) if causal
                           else k_blocks)
        if role.producer:
            role.setmaxnreg("producer")
            if tid == 0:
                q_bar.arrive(0, q_bytes)
                _tma_rows(Qs, 0, Q, q0, BM, dc, q_bar[0])
                pk = PipelineState(stages)
                pv = PipelineState(stages)
                for j in T.serial(n_blk):
                    pipe_k.producer_acquire(pk)
                    pipe_k.producer_commit(pk, tile_bytes)
                    _tma_rows(Ks, pk.index * dc, K, kv0 + j * BN, BN, dc, pipe_k.full[pk.index])
                    pk.advance()
                    pipe_v.producer_acquire(pv)
                    pipe_v.producer_commit(pv, tile_bytes)
                    _tma_rows(Vs, pv.index * dc, V, kv0 + j * BN, BN, dc, pipe_v.full[pv.index])
                    pv.advance()
        else:
            role.setmaxnreg("consumer")
            cw = role.index("consumer")
            S = T.alloc_buffer((64, BN), "float32", scope="local", layout=acc_layout)
            sf = T.decl_buffer((BN // 2,), "float32", data=S.data, scope="local")
            P = T.alloc_buffer((64, BN), dtype, scope="local", layout=acc_layout)
            pf = T.decl_buffer((BN // 2,), dtype, data=P.data, scope="local")
            # O in 64-column chunks (one wgmma accumulator each; those past d stay unused)
            O0 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            of0 = T.decl_buffer((CHUNK // 2,), "float32", data=O0.data, scope="local")
            O1 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            of1 = T.decl_buffer((CHUNK // 2,), "float32", data=O1.data, scope="local")
            O2 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            of2 = T.decl_buffer((CHUNK // 2,), "float32", data=O2.data, scope="local")
            O3 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            of3 = T.decl_buffer((CHUNK // 2,), "float32", data=O3.data, scope="local")
            m_i = T.alloc_buffer((2,), "float32", scope="local")
            l_i = T.alloc_buffer((2,), "float32", scope="local")
            red = T.alloc_buffer((4,), "float32", scope="local")
            alpha = T.alloc_buffer((2,), "float32", scope="local")
            # this thread's row (h = 0; h = 1 is 8 below) in the CTA's block of queries
            row = T.meta_var(cw * 64 + tid // 32 * 16 + tid % 32 // 4)
            for h in T.unroll(2):
                m_i[h] = T.float32(-math.inf)
                l_i[h] = T.float32(0)
            _zero([of0, of1, of2, of3][:dc])
            ck = PipelineState(stages)
            cv = PipelineState(stages)
            q_bar.wait(0, 0)
            # block 0: its scores and softmax
            pipe_k.consumer_wait(ck)
            _qk(S, Qs, Ks, ck.index, cw, dc, BN)
            _wait(0, [(sf, BN // 2)])
            pipe_k.consumer_release(ck)
            ck.advance()
            if _needs_mask(0, qb, causal, key_tail, k_blocks, BN):
                _softmax(sf, m_i, l_i, alpha, red, sl2=sl2, bn=BN, mask=(0, qb, row, tid),
                         sk=sk, causal=causal)
            else:
                _softmax(sf, m_i, l_i, alpha, red, sl2=sl2, bn=BN)
            _rescale_and_pack(sf, pf, [of0, of1, of2, of3], alpha, dc, BN, dtype)
            # block j: its scores, then the previous block's P V, which runs while this
            # block's softmax does (FA3's intra-warpgroup overlap)
            for jj in T.serial(n_blk - 1):
                j = T.meta_var(jj + 1)
                pipe_k.consumer_wait(ck)
                _qk(S, Qs, Ks, ck.index, cw, dc, BN)
                pipe_v.consumer_wait(cv)
                _pv([O0, O1, O2, O3], P, Vs, cv.index, dc, BN)
                _wait(dc, [(sf, BN // 2)])
                pipe_k.consumer_release(ck)
                ck.advance()
                if _needs_mask(j, qb, causal, key_tail, k_blocks, BN):
                    _softmax(sf, m_i, l_i, alpha, red, sl2=sl2, bn=BN, mask=(j, qb, row, tid),
                             sk=sk, causal=causal)
                else:
                    _softmax(sf, m_i, l_i, alpha, red, sl2=sl2, bn=BN)
                _wait(0, [(o, CHUNK // 2) for o in [of0, of1, of2, of3][:dc]])
                pipe_v.consumer_release(cv)
                cv.advance()
                _rescale_and_pack(sf, pf, [of0, of1, of2, of3], alpha, dc, BN, dtype)
            # the last block's P V
            pipe_v.consumer_wait(cv)
            _pv([O0, O1, O2, O3], P, Vs, cv.index, dc, BN)
            _wait(0, [(o, CHUNK // 2) for o in [of0, of1, of2, of3][:dc]])
            pipe_v.consumer_release(cv)
            cv.advance()
            # the epilogue: row sums over the quad, O / l, the log-sum-exp
            for h in T.unroll(2):
                l_i[h] = l_i[h] + T.cuda.__shfl_xor_sync(T.uint32(_FULL), l_i[h], 1, 32)
                l_i[h] = l_i[h] + T.cuda.__shfl_xor_sync(T.uint32(_FULL), l_i[h], 2, 32)
                if qb * BM + row + h * 8 < sq:
                    if tid % 4 == 0:
                        LSE[q0 + row + h * 8] = (m_i[h] + T.log2(l_i[h])) * T.float32(LN2)
                    red[0] = T.float32(1) / l_i[h]
                    _store_rows(O_w, q0 + row + h * 8, [of0, of1, of2, of3][:dc], h, red[0],
                                tid, dtype)
    # fmt: on
    return attention_sm90


def _zero(ofs: list[Any]) -> Stmt:
    return seq([BufferStore(o, T.float32(0), [i]) for o in ofs for i in range(CHUNK // 2)])


def _store_rows(O_w: Any, r: Any, ofs: list[Any], h: Any, inv: Any, tid: Any,
                dtype: str) -> Stmt:
    """Row ``r`` of O (this thread's 2-element pieces of each chunk), times ``inv``."""
    return seq([BufferStore(O_w, _pack(o[p * 4 + h * 2] * inv, o[p * 4 + h * 2 + 1] * inv,
                                       dtype), [r, c * (CHUNK // 2) + p * 4 + tid % 4])
                for c, o in enumerate(ofs) for p in range(CHUNK // 8)])


def _needs_mask(j: Any, qb: Any, causal: bool, key_tail: bool, k_blocks: int, bn: int) -> Any:
    """Whether key block ``j`` of query block ``qb`` needs the mask: it crosses the causal
    diagonal, or it is the key tail."""
    return any_of(c for c, need in (((j + 1) * bn - 1 > qb * BM, causal),
                                    (j == k_blocks - 1, key_tail)) if need)


def _valid(i: int, h: int, mask: tuple[Any, ...], sk: int, causal: bool, bn: int) -> Any:
    """Whether score register ``i`` (row half ``h``) of key block ``j`` is kept (``mask`` is
    ``(j, qb, row, tid)``): its key is inside ``seq_k`` and, causal, at or before its query."""
    j, qb, row, tid = mask
    key = j * bn + (i // 4) * 8 + tid % 4 * 2 + i % 2
    return all_of(c for c, need in ((key < sk, True), (key <= qb * BM + row + h * 8, causal))
                  if need)
