"""FlashAttention backward on Hopper: dQ, dK, dV from Q, K, V, dO, the forward's log-sum-exp
and ``D = rowsum(dO * O)``, written with the tile primitives and ``lang`` helpers.

The kernels recompute ``P = exp(S * scale - lse)`` from the saved log-sum-exp, with ``dS = P *
(dP - D)`` and ``dP = dO V^T``:

- :func:`attention_bwd_pre_func`: D (float32) and the log-sum-exp times ``log2(e)``, as rows
  padded for whole-block loads (a warp a row).
- :func:`attention_bwd_dkdv_func`: one CTA per (batch, key/value head, block of 128 keys), two
  consumer warpgroups of 64 keys each, a producer warpgroup that loads the CTA's K and V once
  and then, for every query head of the group and every block of 64 queries (from the causal
  diagonal on), Q's and dO's tiles and the queries' LSE and D into a ring (TMA). Per query block
  a consumer computes ``S^T = K Q^T`` and ``dP^T = V dO^T`` (wgmma, both operands in shared
  memory), ``P^T`` and ``dS^T`` in registers, then ``dV += P^T dO`` and ``dK += dS^T Q``
  (wgmma with the 16-bit ``P^T`` and ``dS^T`` fragments as the A operand from registers, dO and
  Q read MN-major). With ``dq_atomic`` (the default) it also writes ``dS^T`` to shared memory
  and computes ``dS K`` (one more wgmma; at d 128 each consumer one 64-column chunk of d over
  all 128 keys), added into a float32 buffer in fragment order with 16-byte vector atomics
  (:func:`dqa_layout`); :func:`attention_bwd_post_func` then writes dQ's rows. Five products a
  step instead of seven.
- :func:`attention_bwd_dq_func`, the deterministic way to dQ: one CTA per (batch, query head,
  block of 128 queries), two consumers of 64 queries; per block of 64 keys ``S = Q K^T``, ``dP
  = dO V^T``, ``dS``, and ``dQ += dS K`` (dS from registers, K MN-major).

Only the steps that cross the causal diagonal or hold a tail mask elements; causal CTAs run
longest first (``lpt``). Each warpgroup still runs its products one after another (the
elementwise work does not overlap its own tensor-core work; the two consumers overlap each
other). Parameters are the operands as rows, like the forward's (``[batch * heads * seq, d]``),
and ``LSE2`` and ``Dl``, float32 ``[batch * heads_q, padded_seq(seq_q)]``: the forward's
log-sum-exp times ``log2(e)`` and D, each query head's row padded to a multiple of 128
(:func:`padded_seq`). d 64 or 128.
"""

from __future__ import annotations

import math
from typing import Any, no_type_check

from tvm.ir import BufferStore, Stmt, seq
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.target import Target
from tvm.tirx.op import all_of, any_of
from tvm_backend_cuda.dispatch.gemm_wgmma import wgmma_accumulator_layout
from tvm_backend_cuda.executable import default_arch
from tvm_backend_cuda.lang import Pipeline, PipelineState, SMEMPool, TMABar, WarpgroupRole

from ._attention import CHUNK, LOG2E, _check, _qk, _store_rows, _tma_rows, _wait, _zero

__all__ = ["BWD_HEAD_DIMS", "attention_bwd_dkdv_func", "attention_bwd_dq_func", "padded_seq"]

BWD_HEAD_DIMS = (64, 128)
KEYS = 128  # keys per dK/dV CTA (two consumer warpgroups of 64)
QROWS = 64  # queries per step of the dK/dV kernel
QBLOCK = 128  # queries per dQ CTA
KSTEP = 64  # keys per step of the dQ kernel

#: dQa's order, the one definition that :func:`dqa_layout`, :func:`_add_dq` and
#: :func:`attention_bwd_post_func` read: the digits of a float's offset in its 64 x 64 tile,
#: outermost first, as (digit, extent): register quad ``k``, the thread ``32 w + 4 i + q``, the
#: quad's element ``2 h + e``. The float is the tile's row ``16 w + 8 h + i``, column ``8 k + 2
#: q + e``: register ``4 k + 2 h + e`` of the thread's wgmma accumulator fragment, so that a
#: quad is one 16-byte vector and each warp's vector adds of quad ``k`` cover 512 contiguous
#: bytes.
DQA_QUADS = CHUNK // 8  # register quads a thread holds of a tile
DQA_DIGITS = (("k", DQA_QUADS), ("w", 4), ("i", 8), ("q", 4), ("h", 2), ("e", 2))
DQA_ROW = ("w", "h", "i")  # the digits of the row, outermost first
DQA_COL = ("k", "q", "e")  # and of the column
DQA_QUAD = 4  # floats of a register quad: digits h and e
DQ_TILE = math.prod(n for _, n in DQA_DIGITS)  # floats of one dQa tile (64 x CHUNK)


def _dqa_stride(digit: str) -> int:
    """Floats between neighbouring values of ``digit`` (:data:`DQA_DIGITS`)."""
    names = [name for name, _ in DQA_DIGITS]
    return math.prod(n for _, n in DQA_DIGITS[names.index(digit) + 1:])


def _dqa_quad(tile: Any, k: Any, tid: Any) -> Any:
    """The offset in ``dQa`` of register quad ``k`` of thread ``tid`` (``32 w + 4 i + q``, the
    order of the thread's digits) in tile ``tile``; the quad's :data:`DQA_QUAD` floats
    follow."""
    return tile * DQ_TILE + k * _dqa_stride("k") + tid * _dqa_stride("q")


def padded_seq(seq_q: int) -> int:
    """The row length of ``LSE2`` and ``Dl``: ``seq_q`` rounded up to a multiple of 128."""
    return -(-seq_q // QBLOCK) * QBLOCK


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
                            scale: float | None = None, arch: str | None = None,
                            dq_atomic: bool = True, lpt: bool | None = None) -> Any:
    """The dK/dV kernel (module docstring): parameters ``Q, K, V, dO, LSE2, Dl, dK, dV, dQa``.

    With ``dq_atomic`` it also adds each step's ``dS K`` into ``dQa`` (float32, ``batch *
    heads_q * padded_seq(seq_q) * d`` elements, zero on entry; read as rows through
    :func:`dqa_layout`; dQ is that times the scale) with vector atomic adds, so that the backward is this one kernel; without it
    ``dQa`` has one element and is unused, and dQ comes from :func:`attention_bwd_dq_func`
    (deterministic). ``lpt`` (default: when causal) orders the CTAs longest first
    (:func:`_lpt_order`)."""
    sc = _common(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, scale, arch)
    return _dkdv(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, bool(causal), sc,
                 bool(dq_atomic), bool(causal) if lpt is None else bool(lpt))


def attention_bwd_dq_func(batch: int, heads_q: int, heads_kv: int, seq_q: int, seq_k: int,
                          head_dim: int, dtype: str = "bfloat16", *, causal: bool = False,
                          scale: float | None = None, arch: str | None = None,
                          lpt: bool | None = None) -> Any:
    """The dQ kernel (module docstring): parameters ``Q, K, V, dO, LSE2, Dl, dQ``; ``lpt`` as
    for :func:`attention_bwd_dkdv_func`."""
    sc = _common(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, scale, arch)
    return _dq(batch, heads_q, heads_kv, seq_q, seq_k, head_dim, dtype, bool(causal), sc,
               bool(causal) if lpt is None else bool(lpt))


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


def _lpt_order(bx: Any, blocks: int, heads: int, lpt: bool) -> tuple[Any, Any]:
    """``(head, block)`` of CTA ``bx`` over ``heads x blocks`` CTAs. Plain: head-major (the
    CTAs running together share their head's operands in L2). ``lpt``: under a causal mask
    block 0 does the most steps, so within groups of up to 16 heads (a group's operands still
    fit in L2) the CTAs go block by block, longest first (LPT), and the grid ends on short
    ones instead of a few long ones."""
    if not lpt:
        return bx // blocks, bx % blocks
    g = max(x for x in range(1, min(heads, 16) + 1) if heads % x == 0)
    rem = bx % (g * blocks)
    return bx // (g * blocks) * g + rem % g, rem // g


def _ds_word(buf: Any, row: Any, pair: Any, tid: Any) -> Any:
    """The 32-bit word of ``dS^T`` buffer ``buf`` (``[KEYS, QROWS]`` 16-bit, the 128-byte
    swizzle of ``alloc_mma``) holding the element pair ``pair * 8 + tid % 4 * 2`` of ``row``
    (``row % 8 == tid % 32 // 4``). Each row is 32 words; the swizzle XORs word bits 2-4 with
    the row's low three bits, which here are ``tid % 32 // 4``: written out so that each word
    costs one operation instead of the general layout's arithmetic (and its registers).

    Still needed now that the simplifier folds the swizzle's ``(offset >> 5) & 7`` to the row's
    low bits: through a ``uint32`` view with the layout (``mma_shared_layout``) the index keeps
    ``floormod(row, 128)`` and ``floordiv(row, 128)`` (the analyzer cannot tell that ``cw = wg
    - 1`` is not negative in the consumers' branch) and XORs the whole offset, where this XORs
    two 3-bit values."""
    return buf * (KEYS * QROWS // 2) + row * (QROWS // 2) + tid % 4 + \
        T.bitwise_xor(pair, tid % 32 // 4) * 4


def _col(i: int, tid: Any) -> Any:
    """Column of accumulator register ``i`` of this thread (the fragment layout)."""
    return (i // 4) * 8 + tid % 4 * 2 + i % 2


# -- dK, dV ------------------------------------------------------------------------------------------
@no_type_check  # TVMScript: the parser gives the annotations their meaning
def _dkdv(batch: int, hq: int, hkv: int, sq: int, sk: int, d: int, dtype: str, causal: bool,
          scale: float, dq: bool, lpt: bool) -> Any:
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
    sqp = padded_seq(sq)
    dqa_shape = (batch * hq * sqp * d,) if dq else (1,)
    # dQ's product dS K: at d 128 consumer c takes d's chunk c over all 128 keys (the two
    # warpgroups' dS halves meet in shared memory); at d 64 each takes its own 64 keys
    dq_split_d = dc == 2
    dq_layout = wgmma_accumulator_layout(64, CHUNK)
    key_tail = sk % KEYS != 0
    q_tail = sq % QROWS != 0

    # fmt: off
    @T.prim_func
    def attention_bwd_dkdv(Q: T.Buffer((rq, d), dtype), K: T.Buffer((rk, d), dtype),
                           V: T.Buffer((rk, d), dtype), dO: T.Buffer((rq, d), dtype),
                           LSE2: T.Buffer((batch * hq, sqp), "float32"),
                           Dl: T.Buffer((batch * hq, sqp), "float32"),
                           dK: T.Buffer((rk, d), dtype), dV: T.Buffer((rk, d), dtype),
                           dQa: T.Buffer(dqa_shape, "float32")):
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
        # dS^T of the step (keys x queries), two buffers: the two consumers' steps may differ
        # by one
        dSs = pool.alloc_mma((2 if dq else 1, KEYS, QROWS), dtype)
        # its 32-bit words, flat: the 128-byte swizzle written out (_ds_word)
        dSw = T.decl_buffer(((2 if dq else 1) * KEYS * QROWS // 2,), "uint32", data=dSs.data,
                            scope="shared.dyn", elem_offset=dSs.elem_offset // 2)
        # the step's queries' log-sum-exp and D, beside their Q and dO tiles
        LSEs = pool.alloc((stages, QROWS), "float32", align=128)
        Ds = pool.alloc((stages, QROWS), "float32", align=128)
        kv_bar = TMABar(pool, 1, 1, init_thread=wg * 128 + tid == 0)
        pipe = Pipeline(pool, stages, producer="tma", consumer_count=256,
                        init_thread=wg * 128 + tid == 0)
        role = WarpgroupRole(wg, producer=0, consumer=[1, 2],
                             regs={"producer": 40, "consumer": 232})
        # (batch * hkv + kv head, key block); causal: longest first (_lpt_order)
        bh, kb = T.meta_var(_lpt_order(bx, k_blocks, batch * hkv, lpt))
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
                    pipe.producer_commit(ps, 2 * QROWS * d * 2 + 2 * QROWS * 4)
                    _tma_rows(Qs, ps.index * dc, Q, q0, QROWS, dc, pipe.full[ps.index])
                    _tma_rows(dOs, ps.index * dc, dO, q0, QROWS, dc, pipe.full[ps.index])
                    hrow = T.meta_var((bh // hkv * hq) + bh % hkv * group
                                      + it // (q_blocks - i0))
                    qc = T.meta_var((i0 + it % (q_blocks - i0)) * QROWS)
                    Tx.copy_async(LSEs[ps.index:ps.index + 1, 0:QROWS],
                                  LSE2[hrow:hrow + 1, qc:qc + QROWS], dispatch="tma",
                                  config={"mbar": pipe.full[ps.index]})
                    Tx.copy_async(Ds[ps.index:ps.index + 1, 0:QROWS],
                                  Dl[hrow:hrow + 1, qc:qc + QROWS], dispatch="tma",
                                  config={"mbar": pipe.full[ps.index]})
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
            ds32 = T.decl_buffer((n_s // 2,), "uint32", data=dS16.data, scope="local")
            dQ0 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=dq_layout)
            dq0 = T.decl_buffer((CHUNK // 2,), "float32", data=dQ0.data, scope="local")
            dV0 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dv0 = T.decl_buffer((CHUNK // 2,), "float32", data=dV0.data, scope="local")
            dV1 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dv1 = T.decl_buffer((CHUNK // 2,), "float32", data=dV1.data, scope="local")
            dK0 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dk0 = T.decl_buffer((CHUNK // 2,), "float32", data=dK0.data, scope="local")
            dK1 = T.alloc_buffer((64, CHUNK), "float32", scope="local", layout=o_layout)
            dk1 = T.decl_buffer((CHUNK // 2,), "float32", data=dK1.data, scope="local")
            # this thread's key (h = 0; h = 1 is 8 below) within the sequence
            key = T.meta_var(kb * KEYS + cw * 64 + tid // 32 * 16 + tid % 32 // 4)
            _zero([dv0, dv1][:dc] + [dk0, dk1][:dc])
            cs = PipelineState(stages)
            kv_bar.wait(0, 0)
            for it in T.serial(n_it):
                qi = T.meta_var(i0 + it % (q_blocks - i0))
                hrow_c = T.meta_var((bh // hkv * hq) + bh % hkv * group + it // (q_blocks - i0))
                pipe.consumer_wait(cs)
                _qk(S, Ks, Qs, cs.index, cw, dc, QROWS)
                _qk(dP, Vs, dOs, cs.index, cw, dc, QROWS)
                _wait(0, [(sf, n_s), (df, n_s)])
                if _step_masked(qi, kb, causal, key_tail, k_blocks, q_tail, q_blocks):
                    _p_ds(sf, df, n_s, lambda i: LSEs[cs.index, _col(i, tid)],
                          lambda i: Ds[cs.index, _col(i, tid)],
                          lambda i, qi=qi: _kv_valid(i, key, qi, tid, sq, sk, causal), sl2)
                else:
                    _p_ds(sf, df, n_s, lambda i: LSEs[cs.index, _col(i, tid)],
                          lambda i: Ds[cs.index, _col(i, tid)], lambda i: None, sl2)
                _to16(sf, pf, n_s, dtype)
                _to16(df, dsf, n_s, dtype)
                if dq:
                    # this consumer's dS^T rows into shared memory, for dQ += dS K
                    for j in T.unroll(n_s // 2):
                        dSw[_ds_word(it % 2, cw * 64 + tid // 32 * 16 + j % 2 * 8 + tid % 32 // 4,
                                     j // 2, tid)] = ds32[j]
                    T.ptx.fence.proxy_async("shared::cta")
                _mma_rs([dV0, dV1], P16, dOs, cs.index, dc, QROWS)
                _mma_rs([dK0, dK1], dS16, Qs, cs.index, dc, QROWS)
                if dq:
                    if dq_split_d:
                        T.ptx.bar.sync(4, 256)  # both halves of dS^T are written
                        Tx.wg.gemm_async(dQ0, dSs[it % 2, 0:KEYS, 0:QROWS],
                                         Ks[cw, 0:KEYS, 0:CHUNK], transpose_A=True,
                                         transpose_B=True, accum=False)
                    else:
                        T.cuda.warpgroup_sync(cw + 1)
                        Tx.wg.gemm_async(dQ0, dSs[it % 2, cw * 64:cw * 64 + 64, 0:QROWS],
                                         Ks[0, cw * 64:cw * 64 + 64, 0:CHUNK], transpose_A=True,
                                         transpose_B=True, accum=False)
                    _wait(0, [(o, CHUNK // 2) for o in [dv0, dv1][:dc] + [dk0, dk1][:dc]
                              + [dq0]])
                    pipe.consumer_release(cs)
                    _add_dq(dQa, dq0, (hrow_c * (sqp // QROWS) + qi) * dc
                            + (cw if dq_split_d else 0), tid)
                else:
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


def _step_masked(qi: Any, kb: Any, causal: bool, key_tail: bool, k_blocks: int, q_tail: bool,
                 q_blocks: int) -> Any:
    """Whether the step of query block ``qi`` in key block ``kb`` needs the mask: it crosses
    the causal diagonal, or it holds the key or the query tail."""
    return any_of(c for c, need in ((qi * QROWS < kb * KEYS + KEYS - 1, causal),
                                    (kb == k_blocks - 1, key_tail), (qi == q_blocks - 1, q_tail))
                  if need)


def _add_dq(dQa: Any, acc: Any, tile: Any, tid: Any) -> Stmt:
    """``dQa``'s 64 x 64 tile ``tile`` += this thread's accumulator fragment ``acc``: a 16-byte
    vector atomic add a register quad, in the order of :data:`DQA_DIGITS`."""
    return seq([T.evaluate(T.ptx.red_add_f32_vec(
        T.address_of(dQa[_dqa_quad(tile, k, tid)]),
        *(acc[DQA_QUAD * k + x] for x in range(DQA_QUAD)))) for k in range(DQA_QUADS)])


def _kv_valid(i: int, key: Any, qi: Any, tid: Any, sq: int, sk: int, causal: bool) -> Any:
    """Whether element ``i`` of this thread's ``S^T`` (row: its key, ``h = (i // 2) % 2``;
    column: a query of block ``qi``) counts: key and query inside their sequences and, causal,
    the key at or before the query."""
    k = key + (i // 2) % 2 * 8
    q = qi * QROWS + _col(i, tid)
    return all_of(c for c, need in ((k < sk, sk % KEYS), (q < sq, sq % QROWS), (k <= q, causal))
                  if need)


# -- dQ ----------------------------------------------------------------------------------------------
@no_type_check  # TVMScript: the parser gives the annotations their meaning
def _dq(batch: int, hq: int, hkv: int, sq: int, sk: int, d: int, dtype: str, causal: bool,
        scale: float, lpt: bool) -> Any:
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
    sqp = padded_seq(sq)

    # fmt: off
    @T.prim_func
    def attention_bwd_dq(Q: T.Buffer((rq, d), dtype), K: T.Buffer((rk, d), dtype),
                         V: T.Buffer((rk, d), dtype), dO: T.Buffer((rq, d), dtype),
                         LSE2: T.Buffer((batch * hq, sqp), "float32"),
                         Dl: T.Buffer((batch * hq, sqp), "float32"),
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
        # (batch * hq + query head, query block counted from the last): causal, the last (the
        # longest) first (_lpt_order)
        bh, lb = T.meta_var(_lpt_order(bx, q_blocks, batch * hq, lpt))
        qb = T.meta_var(q_blocks - 1 - lb)
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
                lse2[h] = LSE2[bh, qb * QBLOCK + row + h * 8]
                dl[h] = Dl[bh, qb * QBLOCK + row + h * 8]
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
    return all_of(c for c, need in ((k < sk, True),
                                    (k <= qb * QBLOCK + row + (i // 2) % 2 * 8, causal)) if need)
