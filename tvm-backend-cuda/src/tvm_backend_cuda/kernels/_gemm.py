"""GEMM: ``C[m, n] = A[m, k] @ B[n, k]^T`` (B K-major, like a Linear layer's weight), float32
accumulation, written with the tile primitives and the ``tvm_backend_cuda.lang`` helpers.

``gemm(m, n, k, dtype="bfloat16", out_dtype="bfloat16")`` returns the PrimFunc; its parameters
are ``A, B, C`` (``A, B, scale_a, scale_b, C`` for float8: two float32 per-tensor scales,
``C = (A @ B^T) * scale_a * scale_b``). Every global access is a TMA copy whose tensor map the
executable derives from the array at launch (``copy_async``'s ``tma`` variant), so a call is
``ex(A, B, C)``. Any ``m, n >= 1``; ``k`` a multiple of 16. dtype ``bfloat16``/``float16``, or ``float8_e4m3fn``
(then out_dtype ``bfloat16``).

**sm_90a** (Hopper, ``arch="sm_90a"``, the default): one CTA per SM, persistent over output
tiles of ``128 x 256`` taken in grouped order (``group_m`` tile rows share L2), 384 threads:

- warpgroup 0, the *producer* (``setmaxnreg`` down to 40 registers): one thread waits for a
  free stage of the ``stages``-deep ring, announces its bytes on the stage's *full* mbarrier and
  issues two TMA copies (``Tx.copy_async``, 128-byte swizzle): A's ``128 x BK`` and B's
  ``256 x BK`` tiles, ``BK`` = one 128-byte atom row of K (64 bf16, 128 fp8);
- warpgroups 1 and 2, the *consumers* (up to 232 registers): each owns 64 rows of the tile and
  its ``64 x 256`` float32 accumulators (128 registers a thread, ``wgmma_accumulator_layout``).
  Per stage: wait *full*, ``Tx.wg.gemm_async`` (4 ``wgmma.m64n256k16``, or k32 for fp8),
  ``wgmma.wait_group(1)`` (one group stays in flight), release the previous stage on *empty*;
- epilogue per tile and consumer: wait until its previous TMA store has read the staging
  buffer, convert (and scale) to bfloat16 pairs into a 128B-swizzled ``64 x 256`` shared tile
  (conflict-free 4-byte stores), and ``Tx.wg.copy_async`` it to C with TMA (clipped at the
  edges); the store drains while the next tile's main loop runs.

**sm_100a** (Blackwell, compiled on CI only): the same tiles and ring with ``tcgen05``: warp 0
issues the TMA loads, warp 1 issues ``Tx.gemm_async`` (``tcgen05.mma``, accumulators in tensor
memory, committed to the stage's *empty* barrier and, at the end of a tile, to an accumulator
barrier), warps 2-5 read the accumulators (``tcgen05.ld``) and store C as above.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm.ir import DataType
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_cuda.dispatch.gemm_wgmma import wgmma_accumulator_layout
from tvm_backend_cuda.dispatch.tma_utils import mma_shared_layout
from tvm_backend_cuda.lang import (
    MBarrier,
    PersistentTileScheduler2D,
    Pipeline,
    PipelineState,
    SMEMPool,
    TCGen05Bar,
    TMEMPool,
    WarpgroupRole,
)

__all__ = ["BM", "BN", "gemm", "tile_k"]

BM, BN = 128, 256
_IN_DTYPES = ("bfloat16", "float16", "float8_e4m3fn")
H200_SMS = 132
SMEM_BYTES = 232448


def tile_k(dtype: str) -> int:
    """K of one stage: one 128-byte swizzle-atom row."""
    return 128 // DataType(dtype).bytes


def _check(m: int, n: int, k: int, dtype: str, out_dtype: str) -> None:
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"gemm: {name} must be a positive int, got {v!r}")
    if dtype not in _IN_DTYPES:
        raise ValueError(f"gemm: dtype {dtype!r} is not one of {_IN_DTYPES}")
    if out_dtype != "bfloat16":
        raise ValueError(f"gemm: out_dtype {out_dtype!r}: only bfloat16 output is generated")
    if k % 16:
        raise ValueError(f"gemm: k = {k} must be a multiple of 16 (TMA rows are 16-byte "
                         f"multiples; an MMA K step is 16 or 32)")
    if n % 8:
        raise ValueError(f"gemm: n = {n} must be a multiple of 8 (C's rows are TMA rows of a "
                         f"16-byte multiple)")


def _stages(dtype: str, out_dtype: str, want: int | None) -> int:
    bk = tile_k(dtype)
    stage = (BM + BN) * bk * DataType(dtype).bytes
    staging = BM * BN * DataType(out_dtype).bytes
    fit = (SMEM_BYTES - staging - 1024) // stage
    if want is None:
        return min(fit, 4)
    if want > fit:
        raise ValueError(f"gemm: {want} stages of {stage} bytes and the {staging}-byte C tile do "
                         f"not fit the {SMEM_BYTES} bytes of shared memory (at most {fit})")
    return want


def gemm(m: int, n: int, k: int, dtype: str = "bfloat16", out_dtype: str = "bfloat16", *,
         arch: str = "sm_90a", num_ctas: int = H200_SMS, stages: int | None = None,
         group_m: int = 8) -> Any:
    """The GEMM PrimFunc (module docstring) for ``arch`` ``"sm_90a"`` or ``"sm_100a"``."""
    _check(m, n, k, dtype, out_dtype)
    n_stages = _stages(dtype, out_dtype, stages)
    if arch == "sm_90a":
        return _hopper(m, n, k, dtype, out_dtype, n_stages, num_ctas, group_m)
    if arch.startswith("sm_10") and arch.endswith("a"):
        return _blackwell(m, n, k, dtype, out_dtype, n_stages, num_ctas, group_m)
    raise ValueError(f"gemm: arch {arch!r}: the kernel is written for sm_90a (wgmma) and sm_100a "
                     f"(tcgen05)")


def _load_stage(pipe: Any, state: Any, smem: tuple[Any, Any], glob: tuple[Any, Any],
                origin: tuple[Any, Any], kb: Any, nbytes: int) -> Any:
    """The producer's work for K block ``kb``: wait for a free stage, announce its bytes on the
    stage's full barrier, and issue the TMA loads of A's and B's tiles into it."""
    from tvm.ir import seq

    (As, Bs), (A, B) = smem, glob
    bk = As.shape[2].value
    k0 = kb * bk
    full = pipe.full[state.index]
    loads = [Tx.copy_async(S[state.index, 0:S.shape[1].value, 0:bk],
                           G[o:o + S.shape[1].value, k0:k0 + bk], dispatch="tma",
                           config={"mbar": full})
             for S, G, o in ((As, A, origin[0]), (Bs, B, origin[1]))]
    return seq([pipe.producer_acquire(state), pipe.producer_commit(state, nbytes), *loads,
                state.advance()])


def _u32_view_layout(shape: tuple[int, ...]) -> Any:
    return mma_shared_layout("uint32", "128B", shape)


# -- Hopper: wgmma -------------------------------------------------------------------------------
def _hopper(m: int, n: int, k: int, dtype: str, out_dtype: str, stages: int, num_ctas: int,
            group_m: int) -> Any:
    bk = tile_k(dtype)
    kb_count = -(-k // bk)
    m_tiles, n_tiles = -(-m // BM), -(-n // BN)
    ctas = min(num_ctas, m_tiles * n_tiles)
    stage_bytes = (BM + BN) * bk * DataType(dtype).bytes
    scaled = dtype.startswith("float8")
    acc_layout = wgmma_accumulator_layout(64, BN)
    regs = BN // 2  # accumulator registers per thread
    pairs = regs // 2

    # fmt: off
    @T.prim_func
    def gemm_sm90(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype),
                  scale_a: T.float32, scale_b: T.float32, C: T.Buffer((m, n), out_dtype)):
        T.device_entry()
        bx = T.cta_id([ctas])
        wg = T.warpgroup_id([3])
        tid = T.thread_id_in_wg([128])
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        pool = SMEMPool()
        As = pool.alloc_mma((stages, BM, bk), dtype)
        Bs = pool.alloc_mma((stages, BN, bk), dtype)
        Cs = pool.alloc_mma((2, 64, BN), out_dtype)
        Cw = T.decl_buffer((2, 64, BN // 2), "uint32", data=Cs.data, scope="shared.dyn",
                           layout=_u32_view_layout((2, 64, BN // 2)),
                           elem_offset=Cs.elem_offset // 2)
        pipe = Pipeline(pool, stages, producer="tma", consumer_count=256,
                        init_thread=wg * 128 + tid == 0)
        role = WarpgroupRole(wg, producer=0, consumer=[1, 2],
                             regs={"producer": 40, "consumer": 232})
        sched = PersistentTileScheduler2D(m_tiles, n_tiles, num_ctas=ctas, cta_id=bx,
                                          group_m=group_m)
        if role.producer:
            role.setmaxnreg("producer")
            if tid == 0:
                prod = PipelineState(stages)
                for _it in T.serial(sched.max_iters):
                    if sched.valid:
                        for kb in T.serial(kb_count):
                            _load_stage(pipe, prod, (As, Bs), (A, B),
                                        (sched.m_idx * BM, sched.n_idx * BN), kb, stage_bytes)
                    sched.advance()
        else:
            role.setmaxnreg("consumer")
            cw = role.index("consumer")
            acc = T.alloc_buffer((64, BN), "float32", scope="local", layout=acc_layout)
            regs_view = T.decl_buffer((regs,), "float32", data=acc.data, scope="local")
            cons = PipelineState(stages)
            rel = PipelineState(stages)
            for _it in T.serial(sched.max_iters):
                if sched.valid:
                    m0 = T.meta_var(sched.m_idx * BM)
                    n0 = T.meta_var(sched.n_idx * BN)
                    for kb in T.serial(kb_count):
                        pipe.consumer_wait(cons)
                        Tx.wg.gemm_async(acc, As[cons.index, cw * 64:cw * 64 + 64, 0:bk],
                                         Bs[cons.index, 0:BN, 0:bk], accum=kb > 0,
                                         config={"wait": 1})
                        if kb > 0:
                            pipe.consumer_release(rel)
                            rel.advance()
                        cons.advance()
                    T.ptx.wgmma.wait_group(0)
                    pipe.consumer_release(rel)
                    rel.advance()
                    # the previous tile's store must have read the staging tile
                    if tid == 0:
                        T.ptx.cp_async.bulk.wait_group(0, True)
                    T.cuda.warpgroup_sync(wg + 1)
                    for p in T.unroll(pairs):
                        if scaled:
                            Cw[cw, tid // 32 * 16 + p % 2 * 8 + tid % 32 // 4,
                               p // 2 * 4 + tid % 4] = T.cuda.float22bfloat162_rn(
                                regs_view[p * 2] * (scale_a * scale_b),
                                regs_view[p * 2 + 1] * (scale_a * scale_b))
                        else:
                            Cw[cw, tid // 32 * 16 + p % 2 * 8 + tid % 32 // 4,
                               p // 2 * 4 + tid % 4] = T.cuda.float22bfloat162_rn(
                                regs_view[p * 2], regs_view[p * 2 + 1])
                    Tx.wg.copy_async(C[m0 + cw * 64:m0 + cw * 64 + 64, n0:n0 + BN],
                                     Cs[cw, 0:64, 0:BN], dispatch="tma",
                                     config={"wait": False})
                sched.advance()
            if tid == 0:
                T.ptx.cp_async.bulk.wait_group(0, False)
    # fmt: on
    return _without_scales(gemm_sm90) if not scaled else gemm_sm90


def _without_scales(func: Any) -> Any:
    """The bf16/f16 kernel: the same function without the two scale parameters (its body does
    not read them)."""
    params = func.params[:2] + func.params[4:]
    return func.with_fields(params=params)


def _tmem_load(addr: Any, lane: Any, col: Any, regs: Any, count: int) -> Any:
    """``tcgen05.ld.32x32b.x<count>``: ``count`` consecutive 32-bit columns of each thread's
    TMEM lane into ``regs``."""
    return T.ptx.tcgen05.ld(addr, lane, col, "32x32b", count, False,
                            *[regs[i] for i in range(count)])


# -- Blackwell: tcgen05 ---------------------------------------------------------------------------
def _blackwell(m: int, n: int, k: int, dtype: str, out_dtype: str, stages: int, num_ctas: int,
               group_m: int) -> Any:
    bk = tile_k(dtype)
    kb_count = -(-k // bk)
    m_tiles, n_tiles = -(-m // BM), -(-n // BN)
    ctas = min(num_ctas, m_tiles * n_tiles)
    stage_bytes = (BM + BN) * bk * DataType(dtype).bytes
    scaled = dtype.startswith("float8")
    chunk = 64  # accumulator columns per tcgen05.ld (32x32b.x64: 64 registers)

    # fmt: off
    @T.prim_func
    def gemm_sm100(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype),
                   scale_a: T.float32, scale_b: T.float32, C: T.Buffer((m, n), out_dtype)):
        T.device_entry()
        bx = T.cta_id([ctas])
        wg = T.warpgroup_id([2])
        tid = T.thread_id_in_wg([128])
        pool = SMEMPool()
        As = pool.alloc_mma((stages, BM, bk), dtype)
        Bs = pool.alloc_mma((stages, BN, bk), dtype)
        Cs = pool.alloc_mma((BM, BN), out_dtype)
        Cw = T.decl_buffer((BM, BN // 2), "uint32", data=Cs.data, scope="shared.dyn",
                           layout=_u32_view_layout((BM, BN // 2)),
                           elem_offset=Cs.elem_offset // 2)
        pipe = Pipeline(pool, stages, producer="tma", consumer="tcgen05",
                        init_thread=wg * 128 + tid == 0)
        acc_full = TCGen05Bar(pool, 1, 1, init_thread=wg * 128 + tid == 0)
        acc_empty = MBarrier(pool, 1, 128, init_thread=wg * 128 + tid == 0)
        tmem = TMEMPool(pool, 256, warp=wg * 4 + tid // 32 == 1)
        D = tmem.alloc((BM, BN), "float32")
        sched = PersistentTileScheduler2D(m_tiles, n_tiles, num_ctas=ctas, cta_id=bx,
                                          group_m=group_m)
        if wg == 0:
            if tid == 0:  # warp 0: the TMA producer
                prod = PipelineState(stages)
                for _it in T.serial(sched.max_iters):
                    if sched.valid:
                        for kb in T.serial(kb_count):
                            _load_stage(pipe, prod, (As, Bs), (A, B),
                                        (sched.m_idx * BM, sched.n_idx * BN), kb, stage_bytes)
                    sched.advance()
            elif tid == 32:  # warp 1, one thread: the MMA issuer
                cons = PipelineState(stages)
                for it in T.serial(sched.max_iters):
                    if sched.valid:
                        acc_empty.wait(0, it % 2 ^ 1)
                        T.ptx.tcgen05.fence.after_thread_sync()
                        for kb in T.serial(kb_count):
                            pipe.consumer_wait(cons)
                            T.ptx.tcgen05.fence.after_thread_sync()
                            Tx.gemm_async(D[0:BM, 0:BN], As[cons.index, 0:BM, 0:bk],
                                          Bs[cons.index, 0:BN, 0:bk], accum=kb > 0,
                                          dispatch="tcgen05")
                            pipe.consumer_release(cons)
                            cons.advance()
                        acc_full.arrive(0)
                    sched.advance()
        else:  # warpgroup 1: the epilogue (warp w reads TMEM lanes 32 * (w % 4) ...)
            regs = T.alloc_buffer((chunk,), "float32", scope="local")
            row = T.meta_var(tid)
            for it in T.serial(sched.max_iters):
                if sched.valid:
                    m0 = T.meta_var(sched.m_idx * BM)
                    n0 = T.meta_var(sched.n_idx * BN)
                    if tid == 0:
                        T.ptx.cp_async.bulk.wait_group(0, True)
                    T.cuda.warpgroup_sync(wg + 1)
                    acc_full.wait(0, it % 2)
                    T.ptx.tcgen05.fence.after_thread_sync()
                    for c in T.unroll(BN // chunk):
                        _tmem_load(tmem.addr, tid // 32 * 32, c * chunk, regs, chunk)
                        T.ptx.tcgen05.wait.ld()
                        for p in T.unroll(chunk // 2):
                            if scaled:
                                Cw[row, c * chunk // 2 + p] = T.cuda.float22bfloat162_rn(
                                    regs[2 * p] * (scale_a * scale_b),
                                    regs[2 * p + 1] * (scale_a * scale_b))
                            else:
                                Cw[row, c * chunk // 2 + p] = T.cuda.float22bfloat162_rn(
                                    regs[2 * p], regs[2 * p + 1])
                    T.ptx.tcgen05.fence.before_thread_sync()
                    acc_empty.arrive(0)
                    Tx.wg.copy_async(C[m0:m0 + BM, n0:n0 + BN], Cs[0:BM, 0:BN], dispatch="tma",
                                     config={"wait": False})
                sched.advance()
            if tid == 0:
                T.ptx.cp_async.bulk.wait_group(0, False)
        T.cuda.cta_sync()
        tmem.dealloc()
    # fmt: on
    return _without_scales(gemm_sm100) if not scaled else gemm_sm100


def run(ex: Any, A: Any, B: Any, C: Any, scale_a: Any = None, scale_b: Any = None) -> Any:
    """Call a compiled GEMM on torch tensors: ``ex(A, B, C)``, or with the two float8 scales."""
    if scale_a is None:
        return ex(A, B, C)
    return ex(A, B, float(scale_a), float(scale_b), C)


del tvm
