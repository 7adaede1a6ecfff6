"""GEMM: ``C[m, n] = act(A[m, k] @ B[n, k]^T * scale_a * scale_b + bias) + residual`` (B
K-major, like a Linear layer's weight), float32 accumulation, written with the tile primitives
and the ``tvm_backend_cuda.lang`` helpers.

``gemm_func(m, n, k, dtype="bfloat16", out_dtype=None, ...)`` returns the PrimFunc. Its
parameters are ``A, B``, then those of the epilogue it was asked for, in this order: ``bias``
``[n]`` and ``residual`` ``[m, n]`` (both of ``out_dtype``), ``scale_a`` and ``scale_b`` (each a
one-element float32 array, as ``torch._scaled_mm`` takes them; always there for float8), then
``C``. Every global access of A, B and C is a TMA copy whose tensor map the executable derives
from the array at launch, so a call is ``ex(A, B, C)``. Any ``m >= 1``; ``n`` a multiple of 8 and
``k`` a multiple of 16 (TMA rows are whole 16-byte units; an MMA K step is 16 or 32). dtype
``bfloat16``/``float16`` (out: the same by default, or bfloat16), or ``float8_e4m3fn`` (out:
bfloat16).

**sm_90a** (Hopper): one CTA per SM, persistent over output tiles of ``128 x block_n``
(``block_n`` 128 or 256; accurate float8: 192 or 128) taken in grouped order (``group_m`` tile
rows share L2), 384 threads:

- warpgroup 0, the *producer* (``setmaxnreg`` down to 40 registers): one thread waits for a
  free stage of the ``stages``-deep ring, announces its bytes on the stage's *full* mbarrier and
  issues two TMA copies (128-byte swizzle): A's ``128 x BK`` and B's ``block_n x BK`` tiles,
  ``BK`` = one 128-byte atom row of K (64 bf16, 128 fp8);
- warpgroups 1 and 2, the *consumers* (up to 232 registers): each owns 64 rows of the tile and
  its ``64 x block_n`` float32 accumulators. Per stage: wait *full*, ``Tx.wg.gemm_async``
  (``wgmma.m64n<block_n>k16``, k32 for fp8), ``wgmma.wait_group(1)`` (one group in flight),
  release the previous stage on *empty*;
- *accurate* float8 (``accurate=True``): the tensor cores accumulate float8 products with fewer
  mantissa bits than float32, so over a long K the error grows. Each consumer then lets the
  wgmma accumulate only ``promote_every`` stages (``promote_every * 128`` of K) into a scratch
  accumulator, waits for it, and adds it into float32 registers of its own (DeepGEMM's
  promotion). A consumer has two scratch accumulators that take turns, so that its next
  group's MMAs run while the previous group is added, in blocks of stages that wait for their
  last group (:func:`_accurate_block`: no scratch is read across a loop's back edge, where
  ptxas would serialize every wgmma); the two consumers' MMAs overlap each other's additions
  too. The tile is ``128 x 192`` by default: 96 float32 sums a thread beside two scratch
  accumulators of half the tile's columns (48 registers each; every stage is two groups, one a
  half, and the consumers take 240 registers), or ``128 x 128`` with two scratch accumulators
  of the whole tile (which alone allows ``promote_every > 1``);
- the epilogue, per tile and consumer, in registers: scale, bias, activation, residual
  (:func:`epilogue_pair`), then pairs of outputs packed into a 128B-swizzled ``64 x block_n``
  shared tile (conflict-free 4-byte stores) once the previous TMA store has read it, and
  ``Tx.wg.copy_async`` to C with TMA (clipped at the edges); the store drains while the next
  tile's main loop runs.
- *clusters* (``cluster=(cluster_m, cluster_n)``, each 1 or 2): the CTAs of a cluster take a
  ``cluster_m x cluster_n`` block of tiles each step. The CTAs of a cluster row need the same A
  tile, those of a cluster column the same B tile: each CTA loads its ``1/cluster_n`` of A's
  rows and ``1/cluster_m`` of B's and multicasts them (``.multicast::cluster``) into the same
  stage of every CTA that needs them, so each stage still completes on each CTA's own *full*
  barrier with the whole stage's bytes. A stage is loaded again only when every CTA that reads
  it released it: lane 0 of warp ``w`` of each consumer warpgroup arrives on the *empty*
  barrier of peer ``w`` (``mapa``; the barriers count 2 warpgroups x peers). The tile grid is
  padded to whole clusters: a tile past C's edge is computed from zero-filled loads and its
  store clipped away, its CTA still loading its share for its peers.

**sm_100a** (Blackwell, compiled on CI only): the same tiles and ring with ``tcgen05``: warp 0
issues the TMA loads, warp 1 issues ``Tx.gemm_async`` (``tcgen05.mma``, accumulators in tensor
memory, committed to the stage's *empty* barrier and, at the end of a tile, to an accumulator
barrier), warps 4-7 read the accumulators (``tcgen05.ld``), apply the same epilogue and store C.
tcgen05 accumulates float8 products in float32, so ``accurate`` changes nothing there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, no_type_check

from tvm.ir import BufferStore, DataType, SeqStmt, seq
from tvm.ir.stmt import DeclBuffer
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.target import Target
from tvm_backend_cuda.dispatch.gemm_wgmma import register_barrier, wgmma_accumulator_layout
from tvm_backend_cuda.dispatch.tma_utils import mma_shared_layout
from tvm_backend_cuda.executable import default_arch
from tvm_backend_cuda.lang import (
    ClusterPersistentScheduler2D,
    MBarrier,
    PersistentTileScheduler2D,
    Pipeline,
    PipelineState,
    SMEMPool,
    TCGen05Bar,
    TMEMPool,
    WarpgroupRole,
)
from tvm_backend_cuda.lang.alloc_pool import MAX_DYN_SMEM_BYTES as SMEM_BYTES

__all__ = ["ACTIVATIONS", "BM", "BLOCK_NS", "Epilogue", "epilogue_pair", "gemm_func", "tile_k"]

BM = 128
BLOCK_NS = (128, 256)
IN_DTYPES = ("bfloat16", "float16", "float8_e4m3fn")
ACTIVATIONS = ("relu", "gelu", "silu")
#: accurate float8 tile widths: 128 keeps two scratch accumulators of the tile, 192 two of half
#: its columns (:func:`_accurate_block`)
ACCURATE_BLOCK_NS = (128, 192)
#: stages per block of the 192-wide accurate main loop. 4 is the block measured on the H200
#: (docs/decisions.md); ptxas then spills 132 bytes, once a tile, outside the K loop (at 8: 480
#: bytes, some between the MMAs)
HALVES_BLOCK = 4
H200_SMS = 132
# gelu(x) = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3) = x (K0 + K1 x^2)
_GELU_K0 = 0.7978845608028654
_GELU_K1 = _GELU_K0 * 0.044715


@dataclass(frozen=True)
class Epilogue:
    """What the GEMM does to each accumulator before it stores C: ``act(acc * scale_a *
    scale_b + bias) + residual``, each part optional."""

    bias: bool = False
    activation: str | None = None
    residual: bool = False
    scaled: bool = False

    def __post_init__(self) -> None:
        if self.activation is not None and self.activation not in ACTIVATIONS:
            raise ValueError(f"gemm: activation {self.activation!r} is not one of "
                             f"{ACTIVATIONS} (or None); 'gelu' is the tanh approximation")


def tile_k(dtype: str) -> int:
    """K of one stage: one 128-byte swizzle-atom row."""
    return 128 // DataType(dtype).bytes


def _check(m: int, n: int, k: int, dtype: str, out_dtype: str) -> None:
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"gemm: {name} must be a positive int, got {v!r}")
    if dtype not in IN_DTYPES:
        raise ValueError(f"gemm: dtype {dtype!r} is not one of {IN_DTYPES}")
    outs = ("bfloat16", "float16") if dtype == "float16" else ("bfloat16",)
    if out_dtype not in outs:
        raise ValueError(f"gemm: out_dtype {out_dtype!r}: a {dtype} GEMM writes "
                         f"{' or '.join(outs)}")
    if k % 16:
        raise ValueError(f"gemm: k = {k} must be a multiple of 16 (TMA rows are 16-byte "
                         f"multiples; an MMA K step is 16 or 32); pad K with zeros")
    if n % 8:
        raise ValueError(f"gemm: n = {n} must be a multiple of 8 (C's rows are TMA rows of a "
                         f"16-byte multiple); pad N")


def _stages(dtype: str, out_dtype: str, want: int | None, block_n: int,
            store_n: int | None = None) -> int:
    bk = tile_k(dtype)
    stage = (BM + block_n) * bk * DataType(dtype).bytes
    staging = BM * (store_n or block_n) * DataType(out_dtype).bytes
    fit = (SMEM_BYTES - staging - 1024) // stage
    if want is None:
        return min(fit, 4 if block_n == 256 else 6)
    if not isinstance(want, int) or want < 2 or want > fit:
        raise ValueError(f"gemm: stages={want!r}: between 2 and {fit} stages of {stage} bytes "
                         f"fit the {SMEM_BYTES} bytes of shared memory beside the "
                         f"{staging}-byte C tile")
    return want


@dataclass(frozen=True)
class _Config:
    block_n: int
    stages: int
    group_m: int
    num_ctas: int
    accurate: bool
    promote_every: int
    store_n: int
    cluster: tuple[int, int] = (1, 1)


def gemm_func(m: int, n: int, k: int, dtype: str = "bfloat16", out_dtype: str | None = None, *,
              arch: str | None = None, bias: bool = False, activation: str | None = None,
              residual: bool = False, scaled: bool | None = None, accurate: bool = False,
              block_n: int | None = None, stages: int | None = None, group_m: int = 8,
              num_ctas: int | None = None, promote_every: int = 1,
              store_n: int | None = None, cluster: tuple[int, int] = (1, 1)) -> Any:
    """The GEMM PrimFunc (module docstring) for ``arch`` ``"sm_90a"`` or ``"sm_100a"`` (default:
    this machine's GPU, :func:`~tvm_backend_cuda.executable.default_arch`).

    Epilogue: ``bias``, ``residual`` (take those arrays), ``activation`` (``"relu"``,
    ``"gelu"`` (tanh), ``"silu"``), ``scaled`` (take ``scale_a``, ``scale_b``; always for
    float8). ``accurate``: float8 accumulation promoted to float32 every ``promote_every``
    stages (``block_n`` 192, the default, promotes every stage). Tuning: ``block_n`` (128 or
    256; accurate on sm_90a: 128 or 192), ``stages``, ``group_m``,
    ``num_ctas`` (the persistent grid; default the H200's 132 SMs), ``store_n`` (sm_90a: the
    columns of C staged in shared memory per TMA store, a multiple of 64 dividing ``block_n``;
    default ``block_n``: narrower parts leave room for more stages), ``cluster`` (sm_90a:
    ``(cluster_m, cluster_n)``, each 1 or 2: the CTAs of a cluster share their A and B tiles
    by TMA multicast, :func:`_multicast_parts`)."""
    out_dtype = out_dtype or ("float16" if dtype == "float16" else "bfloat16")
    _check(m, n, k, dtype, out_dtype)
    fp8 = dtype.startswith("float8")
    ep = Epilogue(bias, activation, residual, True if fp8 else bool(scaled))
    if fp8 and scaled is False:
        raise ValueError("gemm: a float8 GEMM takes scale_a and scale_b (scaled=False)")
    accurate = bool(accurate) and fp8
    arch = arch or _default_arch()
    # Hopper's accurate tiles keep float32 sums beside the scratch accumulators; tcgen05
    # accumulates in float32, so there ``accurate`` builds the plain kernel
    hopper_accurate = accurate and arch == "sm_90a"
    if block_n is None:
        block_n = 192 if hopper_accurate else 128 if accurate else 256
    if hopper_accurate and block_n not in ACCURATE_BLOCK_NS:
        raise ValueError(f"gemm: accurate=True keeps float32 sums beside two scratch "
                         f"accumulators in registers: block_n must be one of "
                         f"{ACCURATE_BLOCK_NS}, got {block_n!r}")
    if not hopper_accurate and block_n not in BLOCK_NS:
        raise ValueError(f"gemm: block_n={block_n!r} is not one of {BLOCK_NS}")
    if hopper_accurate and block_n == 192 and promote_every != 1:
        raise ValueError(f"gemm: accurate=True with block_n=192 promotes every stage (its "
                         f"scratch accumulators hold half a tile each): promote_every="
                         f"{promote_every} needs block_n=128")
    if not isinstance(promote_every, int) or promote_every < 1:
        raise ValueError(f"gemm: promote_every={promote_every!r} must be a positive int")
    if not isinstance(group_m, int) or group_m < 1:
        raise ValueError(f"gemm: group_m={group_m!r} must be a positive int")
    store_n = block_n if store_n is None else store_n
    if store_n != block_n and (arch != "sm_90a" or not isinstance(store_n, int)
                               or store_n % 64 or block_n % store_n or store_n < 64):
        raise ValueError(f"gemm: store_n={store_n!r}: the columns of C a TMA store takes from "
                         f"shared memory must be a multiple of 64 that divides block_n="
                         f"{block_n} (sm_90a only)")
    cluster = _check_cluster(cluster, arch)
    cfg = _Config(block_n, _stages(dtype, out_dtype, stages, block_n, store_n), group_m,
                  H200_SMS if num_ctas is None else int(num_ctas), accurate, promote_every,
                  store_n, cluster)
    if arch == "sm_90a":
        func = _hopper(m, n, k, dtype, out_dtype, ep, cfg)
    elif arch.startswith("sm_10") and arch.endswith("a"):
        func = _blackwell(m, n, k, dtype, out_dtype, ep, cfg)
    else:
        raise ValueError(f"gemm: arch {arch!r}: the kernel is written for sm_90a (wgmma) and "
                         f"sm_100a (tcgen05); on a machine without such a GPU pass "
                         f"arch='sm_90a'")
    keep = ["A", "B", *(["bias"] if ep.bias else []), *(["residual"] if ep.residual else []),
            *(["scale_a", "scale_b"] if ep.scaled else []), "C"]
    return _keep_params(func, keep)


def _default_arch() -> str:
    return default_arch(Target("cuda"))


def _keep_params(func: Any, names: list[str]) -> Any:
    """``func`` with only the parameters named (the others' views declared at the top of the
    body go too: the body reads neither when the epilogue does not ask for them)."""
    kept = [p for p in func.params if p.name in names]
    dropped = {id(b.data) for p, b in func.buffer_map.items() if p.name not in names}
    body = func.body
    if isinstance(body, SeqStmt):
        body = SeqStmt([s for s in body.seq
                        if not (isinstance(s, DeclBuffer) and id(s.buffer.data) in dropped)])
    bmap = {p: b for p, b in func.buffer_map.items() if p.name in names}
    return func.with_fields(params=kept, buffer_map=bmap, body=body)


# -- the epilogue ---------------------------------------------------------------------------------


def _unpack(word: Any, dtype: str) -> tuple[Any, Any]:
    """Two float32 values from 32 bits holding two ``dtype`` values (the low one first)."""
    packed = (T.cuda.bfloat1622float2(word) if dtype == "bfloat16"
              else T.cuda.half22float2(word))
    return T.cuda.float2_x(packed), T.cuda.float2_y(packed)


def _pack(v0: Any, v1: Any, dtype: str) -> Any:
    """32 bits holding ``v0`` and ``v1`` (float32) rounded to ``dtype`` (the low one first); the
    attention kernels store their rows with it too."""
    return (T.cuda.float22bfloat162_rn(v0, v1) if dtype == "bfloat16"
            else T.cuda.float22half2_rn(v0, v1))


def _activate(v: Any, activation: str | None) -> Any:
    if activation is None:
        return v
    if activation == "relu":
        return T.max(v, T.float32(0))
    # one MUFU operation an element (tanh.approx) rather than two (ex2 and rcp): the
    # epilogue of a wide tile is bound by them
    h = v * T.float32(0.5)
    if activation == "silu":  # x sigmoid(x) = x/2 (1 + tanh(x/2))
        return h + h * T.ptx.tanh(h)
    # gelu, tanh form
    return h + h * T.ptx.tanh(v * (T.float32(_GELU_K0) + T.float32(_GELU_K1) * v * v))


def epilogue_pair(ep: Epilogue, v0: Any, v1: Any, row: Any, col: Any, *, shape: tuple[int, int],
                  out_dtype: str, bias_w: Any = None, residual_w: Any = None,
                  scale: Any = None) -> Any:
    """The 32-bit word of C's elements ``(row, col)`` and ``(row, col + 1)`` from their float32
    accumulators ``v0, v1``: ``act(v * scale + bias) + residual`` rounded to ``out_dtype``.
    ``bias_w`` / ``residual_w`` are uint32 views of the bias and residual (two elements a word);
    ``col`` is even. Rows and columns past C's edge (a partial tile, which the TMA store clips)
    read the last row / word instead, so that no load leaves the arrays."""
    m, n = shape
    vals = [v0, v1]
    if ep.scaled:
        vals = [v * scale for v in vals]
    cw = T.min(col, n - 2) // 2
    if ep.bias:
        b = _unpack(bias_w[cw], out_dtype)
        vals = [v + bv for v, bv in zip(vals, b)]
    vals = [_activate(v, ep.activation) for v in vals]
    if ep.residual:
        r = _unpack(residual_w[T.min(row, m - 1), cw], out_dtype)
        vals = [v + rv for v, rv in zip(vals, r)]
    return _pack(vals[0], vals[1], out_dtype)


def _load_stage(pipe: Any, state: Any, smem: tuple[Any, Any], glob: tuple[Any, Any],
                origin: tuple[Any, Any], kb: Any, nbytes: int, parts: Any = None) -> Any:
    """The producer's work for K block ``kb``: wait for a free stage, announce its bytes on the
    stage's full barrier, and issue the TMA loads of A's and B's tiles into it. ``parts`` (a
    cluster's, :func:`_multicast_parts`): per operand, the rows of the tile this CTA loads and
    the CTAs it multicasts them to."""
    (As, Bs), (A, B) = smem, glob
    bk = As.shape[2].value
    k0 = kb * bk
    full = pipe.full[state.index]
    parts = parts or ((0, As.shape[1].value, 0), (0, Bs.shape[1].value, 0))
    loads = [Tx.copy_async(S[state.index, at:at + rows, 0:bk],
                           G[o + at:o + at + rows, k0:k0 + bk], dispatch="tma",
                           config={"mbar": full, **({} if _no_mask(mask) else
                                                    {"cta_mask": mask})})
             for S, G, o, (at, rows, mask) in zip((As, Bs), (A, B), origin, parts)]
    return seq([pipe.producer_acquire(state), pipe.producer_commit(state, nbytes), *loads,
                state.advance()])


# -- clusters: A and B tiles shared by TMA multicast ---------------------------------------------


def _check_cluster(cluster: Any, arch: str) -> tuple[int, int]:
    ok = (isinstance(cluster, tuple | list) and len(cluster) == 2
          and all(type(c) is int and c in (1, 2) for c in cluster))
    if not ok:
        raise ValueError(f"gemm: cluster={cluster!r} must be (cluster_m, cluster_n), each 1 or "
                         f"2")
    cm, cn = cluster
    if cm * cn > 1 and arch != "sm_90a":
        raise ValueError(f"gemm: cluster={tuple(cluster)} (TMA multicast) is built for sm_90a; "
                         f"on {arch} use cluster=(1, 1)")
    return cm, cn


def _no_mask(mask: Any) -> bool:
    return isinstance(mask, int) and mask == 0


def _cluster_coords(cid: Any, cluster: tuple[int, int]) -> tuple[Any, Any]:
    """CTA ``cid``'s row and column in its cluster (Python 0 along a dimension of 1)."""
    cm, cn = cluster
    return (cid // cn if cm > 1 else 0), (cid % cn if cn > 1 else 0)


def _multicast_parts(cid: Any, cluster: tuple[int, int], bm: int, bn: int) -> Any:
    """What CTA ``cid`` of a ``cluster_m x cluster_n`` cluster loads (row-major ranks, as
    :class:`~tvm_backend_cuda.lang.ClusterPersistentScheduler2D` places the tiles): the
    ``cluster_n`` CTAs of a cluster row compute the same rows of C, so each loads
    ``1/cluster_n`` of their A tile and multicasts it to the row; likewise B down a cluster
    column. Per operand ``(first row in the tile, rows, CTA mask)``; mask 0: a plain load."""
    rm, rn = _cluster_coords(cid, cluster)
    cm, cn = cluster
    row_mask = ((1 << cn) - 1) << (rm * cn)  # the CTAs of my cluster row
    col_mask = sum(1 << (i * cn) for i in range(cm)) << rn  # those of my cluster column
    a = (rn * (bm // cn), bm // cn, row_mask) if cn > 1 else (0, bm, 0)
    b = (rm * (bn // cm), bn // cm, col_mask) if cm > 1 else (0, bn, 0)
    return a, b


def _peers(cid: Any, cluster: tuple[int, int]) -> list[Any]:
    """The CTAs whose multicasts write into CTA ``cid``'s stages (its cluster row and column,
    itself included): all of them must have read a stage before it is loaded again."""
    rm, rn = _cluster_coords(cid, cluster)
    cm, cn = cluster
    return [rm * cn + j for j in range(cn)] + [(rm + i) % cm * cn + rn for i in range(1, cm)]


def _release(pipe: Any, state: Any, signal: Any) -> Any:
    """Hand stage ``state.index`` back: every consumer thread arrives on its own CTA's empty
    barrier, or (``signal = (tid, peers)``, in a cluster) lane 0 of warp ``w`` of each consumer
    warpgroup arrives on that of peer ``w``, once the warpgroup's MMAs reading the stage are
    complete (wgmma is one operation of the warpgroup)."""
    if signal is None:
        return pipe.consumer_release(state)
    tid, peers = signal
    return seq([pipe.empty.arrive(state.index, cta_id=p, pred=tid == 32 * w)
                for w, p in enumerate(peers)])


def _u32_view_layout(shape: tuple[int, ...]) -> Any:
    return mma_shared_layout("uint32", "128B", shape)


def _promote(fin: Any, acc: Any, count: int, at: int = 0) -> Any:
    """``fin[at:at + count] += acc[:count]`` (the accurate mode's promotion)."""
    return seq([BufferStore(fin, fin[at + i] + acc[i], [at + i]) for i in range(count)])


def _accurate_block(pipe: Any, states: tuple[Any, Any], accs: tuple[Any, ...], fin: Any,
                    count: int, P: int, tiles: tuple[Any, Any], cw: Any, regs: int,
                    signal: Any = None) -> Any:
    """``count`` K stages of the accurate float8 main loop, complete in themselves (every stage
    released and every product added into ``fin`` at the end). ``accs`` are the two scratch
    accumulators and their register views; they take turns, a *group* of MMAs each. Once a
    group's first MMA is issued, waiting for all but it (``wait_group(1)``) completes the
    previous group, whose scratch is then added into ``fin`` while this group runs on the
    tensor cores; the block's last group is waited for with nothing behind it. No scratch is
    read across blocks, so the blocks can be a loop (ptxas serializes every wgmma when a
    scratch read crosses a loop's back edge: its C7514). ``signal``: :func:`_release`'s.

    Scratch accumulators as wide as the tile (``regs`` registers each): a group is ``P``
    stages. Half as wide (the 192-wide tile, whose 96 float32 sums leave room for two of 48):
    a group is one stage's MMAs for one half of the tile's columns, so every stage is two
    groups, and a stage is released once its second half is complete."""
    (cons, rel), (As, Bs), (acc0, acc1, view0, view1) = states, tiles, accs
    bk, BN = As.shape[2].value, Bs.shape[1].value
    halves = view0.shape[0].value * 2 == regs
    width, part = (BN // 2, regs // 2) if halves else (BN, regs)
    # (stage, first MMA of the group, group's scratch, columns, where its sums go in fin)
    groups = ([(j, True, h, h, h * part) for j in range(count) for h in range(2)] if halves
              else [(j, j % P == 0, j // P % 2, 0, 0) for j in range(count)])
    body: list[Any] = []
    prev_done: tuple[Any, int] | None = None  # (scratch, fin offset) the next wait completes
    for idx, (j, first, g, h, at) in enumerate(groups):
        last = idx == len(groups) - 1
        if h == 0:
            body.append(pipe.consumer_wait(cons))
        accum = not halves and j % P > 0
        body.append(Tx.wg.gemm_async((acc0, acc1)[g], As[cons.index, cw * 64:cw * 64 + 64, 0:bk],
                                     Bs[cons.index, h * width:h * width + width, 0:bk],
                                     accum=accum, config={"wait": 0 if last else 1}))
        ends_stage = not halves or h == 1
        if ends_stage:
            body.append(cons.advance())
        # the stage before this one is read (with halves: once its second half is added)
        release = [_release(pipe, rel, signal), rel.advance()] if j > 0 and h == 0 else []
        if first and prev_done is not None:  # the previous group is complete: add it
            view, pat = prev_done
            add = [*register_barrier(view, part), _promote(fin, view, part, pat)]
            body += add + release if halves else release + add
        else:
            body += release
        if first or halves:
            prev_done = ((view0, view1)[g], at)
    assert prev_done is not None  # count >= 1
    view, pat = prev_done
    release = [_release(pipe, rel, signal), rel.advance()]
    add = [*register_barrier(view, part), _promote(fin, view, part, pat)]
    return seq(body + (add + release if halves else release + add))


# -- Hopper: wgmma -------------------------------------------------------------------------------
@no_type_check  # TVMScript: the parser gives the annotations their meaning
def _hopper(m: int, n: int, k: int, dtype: str, out_dtype: str, ep: Epilogue, cfg: _Config
            ) -> Any:
    BN, stages = cfg.block_n, cfg.stages
    bk = tile_k(dtype)
    kb_count = -(-k // bk)
    cm, cn = cfg.cluster
    cs = cm * cn  # CTAs a cluster
    # a cluster's tiles: the grid of tiles padded to whole clusters (a tile past C's edge is
    # computed from zeros and its store clipped away: its CTA still loads its share of the
    # tiles its cluster multicasts)
    m_tiles, n_tiles = -(-m // (BM * cm)) * cm, -(-n // (BN * cn)) * cn
    ctas = max(cs, min(cfg.num_ctas, m_tiles * n_tiles) // cs * cs)
    stage_bytes = (BM + BN) * bk * DataType(dtype).bytes
    regs = BN // 2  # accumulator registers per thread
    pairs = regs // 2
    SN = cfg.store_n  # columns of C per TMA store: the tile's in BN // SN parts
    parts = BN // SN
    part_pairs = pairs // parts
    accurate, P = cfg.accurate, cfg.promote_every
    # accurate: stages per block of _accurate_block
    U = HALVES_BLOCK if accurate and BN == 192 else P * max(2, 8 // P)
    # accurate: two scratch accumulators, each as wide as the tile (128) or half of it (192,
    # whose consumers then take 240 registers: 96 sums and 2 x 48 scratch a thread)
    halves = accurate and BN == 192
    scratch_n = BN // 2 if halves else BN
    scratch_layout = wgmma_accumulator_layout(64, scratch_n)
    nregs = {"producer": 24, "consumer": 240} if halves else {"producer": 40, "consumer": 232}
    epi = dict(shape=(m, n), out_dtype=out_dtype)

    # fmt: off
    @T.prim_func
    def gemm_sm90(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype),
                  bias: T.Buffer((n,), out_dtype), residual: T.Buffer((m, n), out_dtype),
                  scale_a: T.Buffer((1,), "float32"), scale_b: T.Buffer((1,), "float32"),
                  C: T.Buffer((m, n), out_dtype)):
        T.device_entry()
        bias_w = T.decl_buffer((n // 2,), "uint32", data=bias.data)
        residual_w = T.decl_buffer((m, n // 2), "uint32", data=residual.data)
        cl = T.cluster_id([ctas // cs])
        cid = T.cta_id_in_cluster([cs])
        wg = T.warpgroup_id([3])
        tid = T.thread_id_in_wg([128])
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        pool = SMEMPool()
        As = pool.alloc_mma((stages, BM, bk), dtype)
        Bs = pool.alloc_mma((stages, BN, bk), dtype)
        Cs = pool.alloc_mma((2, 64, SN), out_dtype)
        Cw = T.decl_buffer((2, 64, SN // 2), "uint32", data=Cs.data, scope="shared.dyn",
                           layout=_u32_view_layout((2, 64, SN // 2)),
                           elem_offset=Cs.elem_offset // 2)
        # in a cluster, each consumer warpgroup arrives once on each peer's empty barrier
        pipe = Pipeline(pool, stages, producer="tma",
                        consumer_count=256 if cs == 1 else 2 * (cm + cn - 1),
                        init_thread=wg * 128 + tid == 0)
        role = WarpgroupRole(wg, producer=0, consumer=[1, 2], regs=nregs)
        sched = _scheduler(cfg, m_tiles, n_tiles, ctas, cl, cid)
        shares = T.meta_var(_multicast_parts(cid, cfg.cluster, BM, BN) if cs > 1 else None)
        signal = T.meta_var((tid, _peers(cid, cfg.cluster)) if cs > 1 else None)
        if cs > 1:
            T.cuda.cluster_sync()  # every barrier of the cluster is initialised
        if role.producer:
            role.setmaxnreg("producer")
            if tid == 0:
                prod = PipelineState(stages)
                for _it in T.serial(sched.max_iters):
                    if sched.valid:
                        for kb in T.serial(kb_count):
                            _load_stage(pipe, prod, (As, Bs), (A, B),
                                        (sched.m_idx * BM, sched.n_idx * BN), kb, stage_bytes,
                                        shares)
                    sched.advance()
        else:
            role.setmaxnreg("consumer")
            cw = role.index("consumer")
            acc = T.alloc_buffer((64, scratch_n), "float32", scope="local",
                                 layout=scratch_layout)
            accv = T.decl_buffer((scratch_n // 2,), "float32", data=acc.data, scope="local")
            # accurate: a second scratch accumulator, so that one group's MMAs run while the
            # other's result is added into ``fin``
            acc2 = T.alloc_buffer((64, scratch_n) if accurate else (1,), "float32",
                                  scope="local", layout=scratch_layout if accurate else None)
            acc2v = T.decl_buffer((scratch_n // 2 if accurate else 1,), "float32",
                                  data=acc2.data, scope="local")
            fin = T.alloc_buffer((regs if accurate else 1,), "float32", scope="local")
            sc = T.alloc_buffer((1,), "float32", scope="local")
            sc[0] = T.float32(1)
            if ep.scaled:
                sc[0] = scale_a[0] * scale_b[0]
            cons = PipelineState(stages)
            rel = PipelineState(stages)
            for _it in T.serial(sched.max_iters):
                if sched.valid:
                    m0 = T.meta_var(sched.m_idx * BM)
                    n0 = T.meta_var(sched.n_idx * BN)
                    if accurate:
                        for i in T.unroll(regs):
                            fin[i] = T.float32(0)
                        # two scratch accumulators in turn, in blocks of U stages
                        for _kbb in T.serial(kb_count // U):
                            _accurate_block(pipe, (cons, rel), (acc, acc2, accv, acc2v), fin, U,
                                            P, (As, Bs), cw, regs, signal)
                        if kb_count % U:
                            _accurate_block(pipe, (cons, rel), (acc, acc2, accv, acc2v), fin,
                                            kb_count % U, P, (As, Bs), cw, regs, signal)
                    else:
                        for kb in T.serial(kb_count):
                            pipe.consumer_wait(cons)
                            Tx.wg.gemm_async(acc, As[cons.index, cw * 64:cw * 64 + 64, 0:bk],
                                             Bs[cons.index, 0:BN, 0:bk], accum=kb > 0,
                                             config={"wait": 1})
                            if kb > 0:
                                _release(pipe, rel, signal)
                                rel.advance()
                            cons.advance()
                        T.ptx.wgmma.wait_group(0)
                        _release(pipe, rel, signal)
                        rel.advance()
                    src = T.meta_var(fin if accurate else accv)
                    for j in T.unroll(parts):
                        # the previous store must have read the staging tile
                        if tid == 0:
                            T.ptx.cp_async.bulk.wait_group(0, True)
                        T.cuda.warpgroup_sync(wg + 1)
                        for p in T.unroll(part_pairs):
                            q = T.meta_var(j * part_pairs + p)
                            Cw[cw, tid // 32 * 16 + q % 2 * 8 + tid % 32 // 4,
                               (q // 2 - j * (SN // 8)) * 4 + tid % 4] = epilogue_pair(
                                ep, src[q * 2], src[q * 2 + 1],
                                m0 + cw * 64 + tid // 32 * 16 + q % 2 * 8 + tid % 32 // 4,
                                n0 + q // 2 * 8 + tid % 4 * 2, bias_w=bias_w,
                                residual_w=residual_w, scale=sc[0], **epi)
                        Tx.wg.copy_async(C[m0 + cw * 64:m0 + cw * 64 + 64,
                                           n0 + j * SN:n0 + j * SN + SN],
                                         Cs[cw, 0:64, 0:SN], dispatch="tma",
                                         config={"wait": False})
                sched.advance()
            if tid == 0:
                T.ptx.cp_async.bulk.wait_group(0, False)
        if cs > 1:
            # no CTA leaves while a peer may still arrive on its barriers
            T.cuda.cluster_sync()
    # fmt: on
    return gemm_sm90


def _scheduler(cfg: _Config, m_tiles: int, n_tiles: int, ctas: int, cluster_id: Any,
               cid: Any) -> Any:
    cm, cn = cfg.cluster
    if cm * cn == 1:
        return PersistentTileScheduler2D(m_tiles, n_tiles, num_ctas=ctas, cta_id=cluster_id,
                                         group_m=cfg.group_m)
    return ClusterPersistentScheduler2D(m_tiles, n_tiles, num_clusters=ctas // (cm * cn),
                                        cluster_id=cluster_id, cta_in_cluster=cid,
                                        cluster_m=cm, cluster_n=cn,
                                        group_m=max(1, cfg.group_m // cm))


def _tmem_load(addr: Any, lane: Any, col: Any, regs: Any, count: int) -> Any:
    """``tcgen05.ld.32x32b.x<count>``: ``count`` consecutive 32-bit columns of each thread's
    TMEM lane into ``regs``."""
    return T.ptx.tcgen05.ld(addr, lane, col, "32x32b", count, False,
                            *[regs[i] for i in range(count)])


# -- Blackwell: tcgen05 ---------------------------------------------------------------------------
@no_type_check  # TVMScript: the parser gives the annotations their meaning
def _blackwell(m: int, n: int, k: int, dtype: str, out_dtype: str, ep: Epilogue, cfg: _Config
               ) -> Any:
    BN, stages = cfg.block_n, cfg.stages
    bk = tile_k(dtype)
    kb_count = -(-k // bk)
    m_tiles, n_tiles = -(-m // BM), -(-n // BN)
    ctas = min(cfg.num_ctas, m_tiles * n_tiles)
    group_m = cfg.group_m
    stage_bytes = (BM + BN) * bk * DataType(dtype).bytes
    chunk = 64  # accumulator columns per tcgen05.ld (32x32b.x64: 64 registers)
    epi = dict(shape=(m, n), out_dtype=out_dtype)

    # fmt: off
    @T.prim_func
    def gemm_sm100(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype),
                   bias: T.Buffer((n,), out_dtype), residual: T.Buffer((m, n), out_dtype),
                   scale_a: T.Buffer((1,), "float32"), scale_b: T.Buffer((1,), "float32"),
                   C: T.Buffer((m, n), out_dtype)):
        T.device_entry()
        bias_w = T.decl_buffer((n // 2,), "uint32", data=bias.data)
        residual_w = T.decl_buffer((m, n // 2), "uint32", data=residual.data)
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
        tmem = TMEMPool(pool, BN, warp=wg * 4 + tid // 32 == 1)
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
            sc = T.alloc_buffer((1,), "float32", scope="local")
            sc[0] = T.float32(1)
            if ep.scaled:
                sc[0] = scale_a[0] * scale_b[0]
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
                            Cw[row, c * chunk // 2 + p] = epilogue_pair(
                                ep, regs[2 * p], regs[2 * p + 1], m0 + row,
                                n0 + c * chunk + 2 * p, bias_w=bias_w, residual_w=residual_w,
                                scale=sc[0], **epi)
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
    return gemm_sm100
