"""``gemm`` on the tensor cores: ``mma.sync.aligned.m16n8k16`` / ``m16n8k8`` (sm_80+).

Variant ``mma.m16n8k*`` (priority 10, above core's ``fallback`` at -100) for
``Tx.warp.gemm`` and ``Tx.cta.gemm``: ``D = op(A) @ op(B)`` (``+ C`` with ``beta == 1``), alpha 1.
Two operand forms:

- register fragments: A, B, C and D ``local`` buffers laid out over the warp's lanes as PTX's
  m16n8 fragments, any tiling (``m16n8k16``, or ``m16n8k8`` when 16 does not divide K): the mma
  runs straight on the registers, see :mod:`._mma_fragments`;
- A and B in shared memory, read with ``ldmatrix`` (below).

The shared-memory form:

- A and B: ``float16`` or ``bfloat16`` (the same type), plain row-major 2-D regions of ``shared``
  / ``shared.dyn`` buffers (no layout, rows a multiple of 8 elements so every ``ldmatrix`` row
  address is 16-byte aligned). A is ``[M, K]`` (``transpose_A``: ``[K, M]``), B is ``[K, N]``
  (``transpose_B``: ``[N, K]``); the transposed forms use ``ldmatrix .trans``.
- Accumulation in float32 registers. D is either
  - in ``local`` memory with the accumulator layout :func:`mma_accumulator_layout` (the
    registers of the warp, or of every warp of the CTA, that ``mma.sync`` writes); ``C`` is then
    ``None`` / ``beta == 0`` (D is zeroed first) or D itself with ``beta == 1`` (D += A @ B, the
    K loop of a tiled GEMM);
  - or in ``shared`` / ``global`` memory (float32, or A's type: cast when stored), ``C`` any
    readable region broadcastable to D; a barrier of the scope follows, as after the fallback.
- M a multiple of 16, N of 8, K of 16 (per warp). At CTA scope the D tile is split over the
  CTA's warps (``warps_m x warps_n``, the most square per-warp tile that divides evenly; for a
  local D the split is the one its layout says).

Per warp and per 16-wide K step: one ``ldmatrix.x4`` per 16 rows of A, one ``ldmatrix.x4``
(``.x2`` for an odd last one) per 16 columns of B, then one ``mma.sync`` per 16x8 tile of D.
The loops over the tiles are unrolled so the fragments stay in registers; the K loop is not.

Declines (the fallback runs) with a reason for anything else: thread/warpgroup/cluster scope,
a CTA whose thread count is not a constant multiple of 32, other dtypes, operands outside
shared memory, shapes that are not multiples of 16x8x16, alpha != 1, beta other than 0 or 1, an
architecture below sm_80, the intrinsics not registered.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from tvm import ir
from tvm.backend.sdk import (
    DispatchContext,
    Operand,
    cast_to,
    fail,
    fold_add,
    fold_mul,
    gemm_args,
    is_one,
    predicate,
    region_of,
    register_dispatch,
    static_float,
)
from tvm.error import DispatchFail
from tvm.ir.layout import Iter, TileLayout

from ._mma_fragments import gemm_fragments, is_fragment
from .common import sm_version

__all__ = ["PRIORITY", "VARIANT", "gemm_mma", "mma_accumulator_layout", "register",
           "warp_split"]

VARIANT = "mma.m16n8k*"
PRIORITY = 10
MMA_OP = "tirx.ptx.mma"
LDMATRIX_OP = "tirx.ptx.ldmatrix"
_IN_DTYPES = {"float16": "fp16", "bfloat16": "bf16"}
_SMEM = ("shared", "shared.dyn")
_I32 = "int32"


# -- the accumulator layout --------------------------------------------------------------------
def mma_accumulator_layout(m: int, n: int, warps_m: int = 1, warps_n: int = 1) -> TileLayout:
    """Layout of a float32 ``local`` D ``[m, n]`` held by ``mma.m16n8k16`` accumulators.

    The ``(warps_m, warps_n)`` warps each hold a ``(m / warps_m) x (n / warps_n)`` tile (warp
    ``wm * warps_n + wn`` the tile ``(wm, wn)``); inside it, 16x8 tile ``(mt, nt)`` element
    ``(8 * rh + r, 2 * c + e)`` is in lane ``4 * r + c``, register ``4 * (mt * NT + nt) + 2 * rh
    + e`` (PTX's m16n8 C/D fragment). Each thread allocates ``m * n / (32 * warps)`` floats.
    """
    if m % (16 * warps_m) or n % (8 * warps_n):
        raise ValueError(f"mma_accumulator_layout: [{m}, {n}] does not split into "
                         f"{warps_m}x{warps_n} warp tiles of whole 16x8 mma tiles")
    mt, nt = m // (16 * warps_m), n // (8 * warps_n)
    iters = []
    if warps_m > 1:
        iters.append(Iter(warps_m, warps_n, "warpid"))
    iters += [Iter(mt, nt * 4, "m"), Iter(2, 2, "m"), Iter(8, 4, "laneid")]
    if warps_n > 1:
        iters.append(Iter(warps_n, 1, "warpid"))
    iters += [Iter(nt, 4, "m"), Iter(4, 1, "laneid"), Iter(2, 1, "m")]
    return TileLayout(iters)


def _layout_key(layout: Any) -> tuple[Any, ...] | None:
    if not isinstance(layout, TileLayout):  # none, or swizzled: not an accumulator layout
        return None
    out = []
    for it in layout.shard:
        if not isinstance(it.extent, ir.IntImm) or not isinstance(it.stride, ir.IntImm):
            return None
        if it.extent.value == 1:
            continue  # unit iterators do not change the mapping
        out.append((it.extent.value, it.stride.value, it.axis.name))
    return (tuple(out), tuple((str(r.extent), str(r.stride), r.axis.name) for r in layout.replica))


# -- predicates ----------------------------------------------------------------------------------
def full_active_lanes(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    """mma.sync and ldmatrix are warp-collective: every lane of every warp of the scope runs
    them, so the scope must be whole warps."""
    if sctx.scope_kind not in ("warp", "cta"):
        return False, f"scope {sctx.scope_kind} (needs warp or cta)"
    n = sctx.thread_extent()
    if not isinstance(n, ir.IntImm) or n.value % 32:
        return False, f"the scope has {n} threads, not a constant multiple of 32 (whole warps)"
    return True, ""


def _arch_ok(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    sm = sm_version(sctx.target)
    if sm is not None and sm < 80:
        return False, f"mma.sync.m16n8k16 with f32 accumulators needs sm_80 or newer; target is sm_{sm}"
    return True, ""


def _intrinsics(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    missing = [o for o in (MMA_OP, LDMATRIX_OP) if not ir.Op.exists(o)]
    return (not missing, f"{', '.join(missing)} not registered" if missing else "")


# -- operands -------------------------------------------------------------------------------------
def _ints(region: ir.BufferRegion, name: str) -> tuple[int, int]:
    ext = region.region[-2:]
    if not all(isinstance(r.extent, ir.IntImm) for r in ext):
        fail(f"{name} extents {[str(r.extent) for r in ext]} are not constant")
    return ext[0].extent.value, ext[1].extent.value  # type: ignore[attr-defined]


def _matrix(arg: Any, name: str) -> ir.BufferRegion:
    if not isinstance(arg, (ir.Buffer, ir.BufferRegion)):
        fail(f"{name} must be a buffer or a buffer region")
    region = region_of(arg)
    if len(region.region) < 2:
        fail(f"{name} must have at least 2 dimensions, got {len(region.region)}")
    if not all(is_one(r.extent) for r in region.region[:-2]):
        fail(f"{name}: batched gemm is not supported (leading extents must be 1)")
    return region


def _smem_operand(arg: Any, name: str, dtype: str) -> ir.BufferRegion:
    region = _matrix(arg, name)
    buf = region.buffer
    if buf.scope not in _SMEM:
        fail(f"{name} is in '{buf.scope}' memory; ldmatrix reads shared or shared.dyn")
    if str(buf.dtype) != dtype:
        fail(f"{name} is {buf.dtype}, A is {dtype}; both must be float16 or both bfloat16")
    if buf.layout is not None or (buf.strides and len(buf.strides) > 0):
        fail(f"{name} has a layout or strides; only plain row-major shared buffers are read with "
             "ldmatrix")
    row = buf.shape[-1]
    if not isinstance(row, ir.IntImm) or row.value % 8:
        fail(f"{name}'s rows are {row} elements; ldmatrix needs a constant multiple of 8 "
             "(16-byte aligned rows)")
    col0 = region.region[-1].min
    if isinstance(col0, ir.IntImm) and col0.value % 8:
        fail(f"{name} region starts at column {col0}; ldmatrix needs a multiple of 8")
    return region


def _whole_tile_splits(m: int, n: int, warps: int) -> Iterator[tuple[int, int]]:
    """Each ``(warps_m, warps_n)`` of ``warps`` warps that gives every warp whole 16x8 tiles,
    ``warps_m`` ascending."""
    for wm in range(1, warps + 1):
        wn = warps // wm
        if not warps % wm and not m % (16 * wm) and not n % (8 * wn):
            yield wm, wn


def warp_split(m: int, n: int, warps: int) -> tuple[int, int] | None:
    """``(warps_m, warps_n)`` with whole 16x8 tiles per warp and the most square warp tile."""
    best: tuple[int, tuple[int, int]] | None = None
    for wm, wn in _whole_tile_splits(m, n, warps):
        cost = m // wm + n // wn  # ldmatrix traffic per k step grows with the tile's perimeter
        if best is None or cost < best[0]:
            best = (cost, (wm, wn))
    return None if best is None else best[1]


def _local_split(d: ir.BufferRegion, m: int, n: int, warps: int) -> tuple[int, int]:
    buf = d.buffer
    if str(buf.dtype) != "float32":
        fail(f"a local D holds the float32 accumulators; D is {buf.dtype}")
    if not all(isinstance(r.min, ir.IntImm) and r.min.value == 0 for r in d.region) or \
            [int(s) for s in buf.shape[-2:]] != [m, n]:  # type: ignore[call-overload]
        fail("a local D must be the whole accumulator buffer, not a part of it")
    key = _layout_key(buf.layout)
    for wm, wn in _whole_tile_splits(m, n, warps):
        if key is not None and key == _layout_key(mma_accumulator_layout(m, n, wm, wn)):
            return wm, wn
    raise DispatchFail(f"a local D needs the layout mma_accumulator_layout({m}, {n}, warps_m, "
                       f"warps_n) with warps_m * warps_n = {warps}; D's layout is {buf.layout}")


# -- the variant ----------------------------------------------------------------------------------
def gemm_mma(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    x, ta, tb = gemm_args(call)
    if is_fragment(x["A"]) or is_fragment(x["B"]):
        return gemm_fragments(x, ta, tb, sctx, MMA_OP)
    a_arg = x["A"]
    if not isinstance(a_arg, (ir.Buffer, ir.BufferRegion)):
        fail("A must be a buffer or a buffer region")
    in_dt = str(region_of(a_arg).buffer.dtype)
    if in_dt not in _IN_DTYPES:
        fail(f"A is {in_dt}; mma.m16n8k16 takes float16 or bfloat16")
    a = _smem_operand(a_arg, "A", in_dt)
    b = _smem_operand(x["B"], "B", in_dt)
    d = _matrix(x["D"], "D")
    am, ak = _ints(a, "A")
    bk, bn = _ints(b, "B")
    M, K = (ak, am) if ta else (am, ak)
    Kb, N = (bn, bk) if tb else (bk, bn)
    dm, dn = _ints(d, "D")
    if Kb != K or (dm, dn) != (M, N):
        fail(f"gemm shapes do not match: op(A) {M}x{K}, op(B) {Kb}x{N}, D {dm}x{dn}")
    alpha = static_float(x["alpha"])
    beta = static_float(x["beta"])
    if alpha != 1.0:
        fail(f"alpha is {x['alpha']}; only alpha = 1 is generated")
    C = x["C"]
    if C is not None and beta not in (0.0, 1.0):
        fail(f"beta is {x['beta']}; only beta = 0 or 1 (a constant) is generated")
    use_c = C is not None and beta == 1.0
    if K % 16:
        fail(f"K = {K} is not a multiple of 16")

    warps = sctx.thread_extent().value // 32  # type: ignore[attr-defined]
    local_d = d.buffer.scope == "local"
    if local_d:
        if sctx.scope_kind == "warp":
            warps = 1
        wm, wn = _local_split(d, M, N, warps)
        if use_c and not _same_region(region_of(C) if isinstance(C, (ir.Buffer, ir.BufferRegion))
                                      else None, d):
            fail("with a local D, C must be D itself (D += A @ B) or None / beta = 0")
    else:
        if d.buffer.scope not in ("shared", "shared.dyn", "global"):
            fail(f"D is in '{d.buffer.scope}' memory; expected local, shared or global")
        if str(d.buffer.dtype) not in ("float32", in_dt):
            fail(f"D is {d.buffer.dtype}; expected float32 or {in_dt}")
        if sctx.scope_kind == "warp":
            warps = 1
        split = warp_split(M, N, warps)
        if split is None:
            raise DispatchFail(f"D {M}x{N} does not split into whole 16x8 mma tiles over "
                               f"{warps} warp(s)")
        wm, wn = split
    c_op = None
    if use_c and not local_d:
        if isinstance(C, (ir.Buffer, ir.BufferRegion)) and region_of(C).buffer.scope == "local":
            fail("C is in local memory; with a shared/global D, C must be readable by all lanes")
        c_op = Operand(C, "C").bind([M, N])

    g = _Gen(sctx, a, b, d, ta, tb, M, N, K, wm, wn, in_dt, local_d, use_c, c_op)
    body = g.build()
    barrier = None if local_d else sctx.barrier()
    return ir.PrimFunc([], body if barrier is None else ir.seq([body, barrier]))


def _same_region(c: ir.BufferRegion | None, d: ir.BufferRegion) -> bool:
    if c is None or c.buffer is not d.buffer or len(c.region) != len(d.region):
        return False
    return all(str(x.min) == str(y.min) and str(x.extent) == str(y.extent)
               for x, y in zip(c.region, d.region))


class _Gen:
    """The statements of one call (per warp: wm, wn from the warp index)."""

    def __init__(self, sctx: DispatchContext, a: ir.BufferRegion, b: ir.BufferRegion,
                 d: ir.BufferRegion, ta: bool, tb: bool, M: int, N: int, K: int, wm: int, wn: int, in_dt: str,
                 local_d: bool, use_c: bool, c_op: Operand | None) -> None:
        self.sctx, self.a, self.b, self.d = sctx, a, b, d
        self.ta, self.tb, self.K = ta, tb, K
        self.TM, self.TN = M // wm, N // wn
        self.MT, self.NT = self.TM // 16, self.TN // 8
        self.wm, self.wn, self.in_dt = wm, wn, in_dt
        self.local_d, self.use_c, self.c_op = local_d, use_c, c_op
        tid = sctx.thread_index()
        self.lane: ir.PrimExpr = tid if sctx.scope_kind == "warp" else tid % 32
        self.warp = ir.Var("mma_warp", _I32)
        self.wi = ir.Var("mma_wm", _I32)
        self.wj = ir.Var("mma_wn", _I32)
        n = self.MT * self.NT * 4
        self.acc = d.buffer if local_d else ir.Buffer("mma_acc", [n], "float32", scope="local")
        self.ra = ir.Buffer("mma_a", [self.MT * 4], "uint32", scope="local")
        self.rb = ir.Buffer("mma_b", [self.NT * 2], "uint32", scope="local")

    def _frag(self, mt: ir.PrimExpr, nt: ir.PrimExpr, e: int
              ) -> tuple[ir.PrimExpr, ir.PrimExpr, ir.PrimExpr]:
        """Row and column (relative to D's region) of accumulator ``e`` of 16x8 tile ``(mt,
        nt)`` of this lane, and its register index (PTX's m16n8 C/D fragment)."""
        row = fold_add(fold_add(fold_mul(self.wi, self.TM), fold_mul(mt, 16)),
                       fold_add(ir.const((e // 2) * 8, _I32), self.lane // 4))
        col = fold_add(fold_add(fold_mul(self.wj, self.TN), fold_mul(nt, 8)),
                       fold_add(fold_mul(self.lane % 4, 2), ir.const(e % 2, _I32)))
        idx = fold_add(fold_mul(fold_add(fold_mul(mt, self.NT), nt), 4), ir.const(e, _I32))
        return row, col, idx

    def _tiles(self, body_fn: Any) -> ir.Stmt:
        return _unrolled("mma_mt", self.MT,
                         lambda mt: _unrolled("mma_nt", self.NT, lambda nt: body_fn(mt, nt)))

    def _init(self) -> ir.Stmt | None:
        if self.local_d and self.use_c:
            return None  # accumulate into D's registers

        def per_tile(mt: ir.PrimExpr, nt: ir.PrimExpr) -> ir.Stmt:
            stores = []
            for e in range(4):
                row, col, idx = self._frag(mt, nt, e)
                if self.c_op is not None:
                    val = cast_to(self.c_op.load([row, col]), self.acc.dtype)
                else:
                    val = ir.const(0.0, "float32")
                stores.append(ir.BufferStore(self.acc, val, [idx]))
            return ir.seq(stores)

        return self._tiles(per_tile)

    def _store(self) -> ir.Stmt | None:
        if self.local_d:
            return None
        d = self.d
        lead = [r.min for r in d.region[:-2]]

        def per_tile(mt: ir.PrimExpr, nt: ir.PrimExpr) -> ir.Stmt:
            stores = []
            for e in range(4):
                row, col, idx = self._frag(mt, nt, e)
                val = cast_to(ir.BufferLoad(self.acc, [idx]), d.buffer.dtype)
                stores.append(ir.BufferStore(d.buffer, val, [*lead, fold_add(d.region[-2].min, row),
                                                             fold_add(d.region[-1].min, col)]))
            return ir.seq(stores)

        return self._tiles(per_tile)

    def _addr(self, reg: ir.BufferRegion, r: ir.PrimExpr, c: ir.PrimExpr) -> ir.BufferLoad:
        lead = [x.min for x in reg.region[:-2]]
        return ir.BufferLoad(reg.buffer, [*lead, fold_add(reg.region[-2].min, r),
                                          fold_add(reg.region[-1].min, c)])

    def _ldmatrix(self, trans: bool, num: int, addr: ir.BufferLoad, regs: Sequence[ir.PrimExpr]
                  ) -> ir.Stmt:
        op = ir.Op.get(LDMATRIX_OP)
        return ir.Evaluate(op(ir.IntImm("bool", int(trans)), ir.const(num, _I32),
                              ir.StringImm(".b16"), addr, *regs))

    def _load_a(self, kk: ir.PrimExpr) -> ir.Stmt:
        return _unrolled("mma_mt", self.MT, lambda mt: self._load_a_tile(kk, mt))

    def _load_a_tile(self, kk: ir.PrimExpr, mt: ir.PrimExpr) -> ir.Stmt:
        lane = self.lane
        m0 = fold_add(fold_mul(self.wi, self.TM), fold_mul(mt, 16))
        k0 = fold_mul(kk, 16)
        if not self.ta:  # stored [M, K]: lanes 0-15 rows at k0, 16-31 rows at k0 + 8
            addr = self._addr(self.a, fold_add(m0, lane % 16), fold_add(k0, (lane // 16) * 8))
        else:  # stored [K, M]: matrix j = lane // 8 is (m half j % 2, k half j // 2)
            j = lane // 8
            addr = self._addr(self.a, fold_add(k0, fold_add((j // 2) * 8, lane % 8)),
                              fold_add(m0, (j % 2) * 8))
        regs = [ir.BufferLoad(self.ra, [fold_add(fold_mul(mt, 4), ir.const(i, _I32))])
                for i in range(4)]
        return self._ldmatrix(self.ta, 4, addr, regs)

    def _load_b(self, kk: ir.PrimExpr) -> ir.Stmt:
        k0 = fold_mul(kk, 16)
        stmts: list[ir.Stmt] = []
        pairs = self.NT // 2
        if pairs:
            stmts.append(_unrolled("mma_np", pairs, lambda np_: self._load_b_pair(k0, np_)))
        if self.NT % 2:
            stmts.append(self._load_b_tail(k0))
        return ir.seq(stmts)

    def _load_b_pair(self, k0: ir.PrimExpr, np_: ir.PrimExpr) -> ir.Stmt:
        """ldmatrix.x4 of two 8-column tiles: registers b0, b1 of tiles 2 * np_ and 2 * np_ + 1."""
        lane = self.lane
        n0 = fold_add(fold_mul(self.wj, self.TN), fold_mul(np_, 16))
        j = lane // 8
        if self.tb:  # stored [N, K]: matrix j is (n half j // 2, k half j % 2), no .trans
            addr = self._addr(self.b, fold_add(n0, fold_add((j // 2) * 8, lane % 8)),
                              fold_add(k0, (j % 2) * 8))
        else:  # stored [K, N]: the same matrices, read transposed
            addr = self._addr(self.b, fold_add(k0, fold_add((j % 2) * 8, lane % 8)),
                              fold_add(n0, (j // 2) * 8))
        regs = [ir.BufferLoad(self.rb, [fold_add(fold_mul(np_, 4), ir.const(i, _I32))])
                for i in range(4)]
        return self._ldmatrix(not self.tb, 4, addr, regs)

    def _load_b_tail(self, k0: ir.PrimExpr) -> ir.Stmt:
        """ldmatrix.x2 of the last 8-column tile when there is an odd number of them."""
        lane = self.lane
        n0 = fold_add(fold_mul(self.wj, self.TN), ir.const((self.NT - 1) * 8, _I32))
        h = (lane // 8) % 2  # lanes 0-15 give the addresses (16-31 repeat them, unused)
        if self.tb:
            addr = self._addr(self.b, fold_add(n0, lane % 8), fold_add(k0, h * 8))
        else:
            addr = self._addr(self.b, fold_add(k0, fold_add(h * 8, lane % 8)), n0)
        regs = [ir.BufferLoad(self.rb, [ir.const((self.NT - 1) * 2 + i, _I32)]) for i in range(2)]
        return self._ldmatrix(not self.tb, 2, addr, regs)

    def _mma(self) -> ir.Stmt:
        op = ir.Op.get(MMA_OP)
        ab = _IN_DTYPES[self.in_dt]

        def per_tile(mt: ir.PrimExpr, nt: ir.PrimExpr) -> ir.Stmt:
            base = fold_mul(fold_add(fold_mul(mt, self.NT), nt), 4)
            acc = [ir.BufferLoad(self.acc, [fold_add(base, ir.const(i, _I32))]) for i in range(4)]
            ra = [ir.BufferLoad(self.ra, [fold_add(fold_mul(mt, 4), ir.const(i, _I32))])
                  for i in range(4)]
            rb = [ir.BufferLoad(self.rb, [fold_add(fold_mul(nt, 2), ir.const(i, _I32))])
                  for i in range(2)]
            return ir.Evaluate(op(
                ir.StringImm("m16n8k16"), ir.StringImm("row"), ir.StringImm("col"),
                ir.StringImm("fp32"), ir.StringImm(ab), ir.StringImm(ab), ir.StringImm("fp32"),
                ir.const(4, _I32), ir.const(4, _I32), ir.const(2, _I32), ir.const(4, _I32),
                ir.IntImm("bool", 0), *acc, *ra, *rb, *acc, ir.IntImm("bool", 0)))

        return self._tiles(per_tile)

    def build(self) -> ir.Stmt:
        kk = ir.Var("mma_k", _I32)
        steps = self.K // 16
        k_body = ir.seq([self._load_a(kk), self._load_b(kk), self._mma()])
        k_loop: ir.Stmt = ir.For(kk, ir.const(0, _I32), ir.const(steps, _I32), ir.ForKind.SERIAL,
                                 k_body)
        if steps == 1:
            k_loop = ir.LetStmt(kk, ir.const(0, _I32), k_body)
        parts: list[ir.Stmt] = []
        if not self.local_d:
            parts.append(ir.AllocBuffer(self.acc))
        parts += [ir.AllocBuffer(self.ra), ir.AllocBuffer(self.rb)]
        init = self._init()
        if init is not None:
            parts.append(init)
        parts.append(k_loop)
        store = self._store()
        if store is not None:
            parts.append(store)
        body = ir.seq(parts)
        # the warp's tile (wi, wj) of the (wm x wn) split; a single warp is tile (0, 0)
        nwarps = self.wm * self.wn
        warp: ir.PrimExpr = ir.const(0, _I32) if nwarps == 1 or self.sctx.scope_kind == "warp" \
            else self.sctx.thread_index() // 32
        return ir.LetStmt(self.warp, warp,
                          ir.LetStmt(self.wi, self.warp // self.wn if self.wn > 1 else self.warp,
                                     ir.LetStmt(self.wj, self.warp % self.wn if self.wn > 1
                                                else ir.const(0, _I32), body)))


def _unrolled(name: str, extent: int, body_fn: Any) -> ir.Stmt:
    """An unrolled loop (register indices become constants); no loop for one trip, so an
    outer unrolled loop's body stays free of ``let``s (which would keep it rolled)."""
    if extent == 1:
        return body_fn(ir.const(0, _I32))
    var = ir.Var(name, _I32)
    return ir.For(var, ir.const(0, _I32), ir.const(extent, _I32), ir.ForKind.UNROLLED, body_fn(var))


def register() -> None:
    when: list[Any] = [predicate("full_active_lanes", full_active_lanes),
                       predicate("sm_80", _arch_ok), predicate("intrinsics", _intrinsics)]
    register_dispatch("gemm", "cuda", variant=VARIANT, priority=PRIORITY, when=when)(gemm_mma)
