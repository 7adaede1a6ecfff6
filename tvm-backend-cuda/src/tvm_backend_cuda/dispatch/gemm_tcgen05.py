"""``gemm_async`` on Blackwell's ``tcgen05.mma`` (sm_100a), accumulators in tensor memory.

Variant ``tcgen05`` (priority 10, as in the seed) for ``Tx.gemm_async(D, A, B, transpose_A,
transpose_B, accum)`` at thread scope (the calling thread issues) or warp scope (one elected
lane issues): ``D[M, N] (+)= A @ B^T``.

- **D** is a float32 tile of tensor memory (scope ``tmem``, ``TMEMPool.alloc``): lane ``r`` holds
  row ``r``, column ``c`` of the tile its 32-bit column ``c``; its TMEM address is the buffer's
  ``elem_offset`` (lane in bits 16-31, column in 0-15). ``M`` is 128 rows per CTA (the
  instruction's M is 128, or 256 with ``config={"cta_group": 2}``, where the CTA pair's two
  128-row halves make one MMA and each CTA holds half of B's N rows), or 64 rows of a tile
  laid out ``tmem_datapath_layout("F", 64, N)`` (an M = 64 MMA, cta_group 1).
- **A** and **B** are shared-memory regions, A ``[M, K]`` and B ``[N, K]`` (``transpose_*``:
  ``[K, M]`` / ``[K, N]``), addressed through descriptors derived from their layouts
  (:mod:`.mma_desc`: the seed's contiguous-axis slicing rule and its errors), float16 / bfloat16
  (K steps of 16) or float8 e4m3 / e5m2 (K steps of 32).
- ``accum``: false overwrites D (``enable_input_d`` is off for the first K step).

The call issues ``K / MMA_K`` x ``N / N_inst`` MMAs and nothing else: completion is the
caller's ``T.ptx.tcgen05.commit`` to an mbarrier (the seed's contract).
"""

from __future__ import annotations

from typing import Any

from tvm import ir
from tvm.backend.sdk import (
    Analyzer,
    DispatchContext,
    fail,
    gemm_args,
    predicate,
    register_dispatch,
)
from tvm.error import DispatchFail
from tvm.ir.structural import structural_equal

from ..layout import tmem_datapath_layout
from . import mma_desc
from .common import needs_arch

__all__ = ["PRIORITY", "VARIANT", "gemm_tcgen05", "instr_descriptor", "register"]

VARIANT = "tcgen05"
PRIORITY = 10
_SMEM = ("shared", "shared.dyn")
# (the ptx type name, the A/B format code of the instruction descriptor, MMA K)
_IN = {"float16": ("f16", 0, 16), "bfloat16": ("bf16", 1, 16), "float8_e4m3fn": ("e4m3", 0, 32),
       "float8_e5m2": ("e5m2", 1, 32)}
_OPS = ("tirx.ptx.tcgen05_mma", "tirx.cuda.cvta_generic_to_shared", "tirx.ptx.elect_sync")
_U64 = "uint64"


def instr_descriptor(in_dtype: str, m: int, n: int, mn_major_a: bool, mn_major_b: bool) -> int:
    """The 32-bit instruction descriptor of a dense ``tcgen05.mma`` with float32 accumulators:
    D format (1 = f32) in bits 4-5, A and B formats in 7-9 and 10-12, A/B transpose (MN-major)
    in bits 15/16, N >> 3 in 17-22, M >> 4 in 24-28."""
    fmt = _IN[in_dtype][1]
    return ((1 << 4) | (fmt << 7) | (fmt << 10) | (int(mn_major_a) << 15) |
            (int(mn_major_b) << 16) | ((n >> 3) << 17) | ((m >> 4) << 24))


# -- predicates ----------------------------------------------------------------------------------
def _scope_ok(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.scope_kind not in ("thread", "warp"):
        return False, (f"scope {sctx.scope_kind} (tcgen05.mma is issued by one thread: "
                       f"Tx.gemm_async, or Tx.warp.gemm_async with an elected lane)")
    return True, ""


def _arch_ok(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    arch = mma_desc.target_arch(sctx)
    if not arch.startswith("sm_10") or not arch.endswith("a"):
        return False, f"tcgen05 {needs_arch('sm_100a', arch)}"
    return True, ""


# -- the variant ----------------------------------------------------------------------------------
def _is_datapath_f(buf: ir.Buffer) -> bool:
    """``buf`` is laid out as an M = 64 MMA writes its accumulator (datapath F)."""
    shape = buf.static_shape()
    if shape is None or len(shape) != 2 or shape[0] != 64 or buf.layout is None:
        return False
    return structural_equal(buf.layout, tmem_datapath_layout("F", 64, shape[1]))


def _tmem_tile(d: ir.BufferRegion) -> tuple[int, int, ir.PrimExpr]:
    """(rows, cols, TMEM address of the region's first element) of a float32 TMEM region:
    128 rows in lanes 0-127 (layout TLane x TCol, datapath D), or the 64 rows of a buffer laid
    out ``tmem_datapath_layout("F", 64, cols)`` (an M = 64 MMA's lanes)."""
    buf = d.buffer
    if buf.scope != "tmem" or str(buf.dtype) != "float32":
        fail(f"D is a {buf.dtype} buffer in '{buf.scope}' memory; tcgen05 accumulates into a "
             f"float32 tensor-memory tile (TMEMPool.alloc)")
    ext = [r.extent for r in d.region]
    if not all(isinstance(e, ir.IntImm) for e in ext):
        fail(f"D's extents {[str(e) for e in ext]} must be constant")
    row0, col0 = d.region[0].min, d.region[1].min
    if _is_datapath_f(buf):
        if not (isinstance(row0, ir.IntImm) and row0.value == 0 and ext[0].value == 64):  # type: ignore[attr-defined]
            fail("D laid out as datapath F (M = 64) must be all of its 64 rows")
        return 64, ext[1].value, buf.elem_offset + col0  # type: ignore[attr-defined]
    axes = [it.axis.name for it in (buf.layout.shard if buf.layout is not None else [])]
    if len(d.region) != 2 or axes != ["TLane", "TCol"]:
        fail(f"D must be a 2-d TMEM tile (layout TLane x TCol, or tmem_datapath_layout('F', "
             f"64, N) for M = 64), got layout {buf.layout}")
    addr = buf.elem_offset + (ir.Cast("uint32", row0) << 16) + col0 \
        if not (isinstance(row0, ir.IntImm) and row0.value == 0) else buf.elem_offset + col0
    return ext[0].value, ext[1].value, addr  # type: ignore[attr-defined]


#: the scale-factor format of a block-scaled instruction descriptor (bit 23), by SF dtype
_SF_FORMAT = {"float8_e8m0fnu": 1}
_BS_OP = "tirx.ptx.tcgen05_mma_block_scale"


def block_scaled_descriptor(in_dtype: str, m: int, n: int, mn_major_a: bool,
                            mn_major_b: bool) -> int:
    """The instruction descriptor of a block-scaled ``tcgen05.mma`` (kind mxf8f6f4, ue8m0
    factors) without its scale-factor ids: A/B formats in bits 7-9 / 10-12, the factor format
    in bit 23 (1 = ue8m0), transposes in 15/16, N >> 3 in 17-22, M >> 4 in 24-28. The ids (the
    byte of each factor's 32-bit column) go in bits 4-5 (B) and 29-30 (A) per MMA."""
    fmt = _IN[in_dtype][1]
    return ((fmt << 7) | (fmt << 10) | (_SF_FORMAT["float8_e8m0fnu"] << 23) |
            (int(mn_major_a) << 15) | (int(mn_major_b) << 16) | ((n >> 3) << 17) |
            ((m >> 4) << 24))


class _ScaleFactors:
    """The scale-factor operand ``SFA``/``SFB`` of a block-scaled call: a region of a tensor
    memory buffer of 8-bit factors laid out by ``sf_tmem_layout`` (``TCol`` in bytes), whose
    K extent is 1 (one factor a row for every MMA of the call) or the call's number of MMA K
    steps (the factor of step ``i`` is column ``i`` of the region)."""

    def __init__(self, region: Any, name: str, rows: int, k_steps: int) -> None:
        if not isinstance(region, ir.BufferRegion) or region.buffer.scope != "tmem":
            fail(f"{name} must be a region of a tensor-memory buffer of scale factors (the "
                 f"tcgen05.cp destination), got {region!r}")
        sf = region.buffer
        if str(sf.dtype) not in _SF_FORMAT:
            fail(f"{name} holds {sf.dtype}; block-scaled fp8 MMAs read float8_e8m0fnu factors")
        ext = [r.extent for r in region.region]
        if len(ext) != 2 or not all(isinstance(e, ir.IntImm) for e in ext):
            fail(f"{name} must be a 2-d region of constant extents, got {region.region}")
        if ext[0].value != rows or ext[1].value not in (1, k_steps):  # type: ignore[attr-defined]
            fail(f"{name} is {ext[0]} x {ext[1]}; it gives {rows} rows and 1 or {k_steps} (the "
                 f"MMA K steps) factors a row")
        self.region, self.steps = region, ext[1].value  # type: ignore[attr-defined]

    def address(self, k_step: int) -> tuple[ir.PrimExpr, int]:
        """(the factor address of MMA step ``k_step``, its scale-factor id): the buffer's TMEM
        address plus the 32-bit column of the region's factor, whose byte (the id) also goes
        in bits 30-31 of the address."""
        buf, region = self.region.buffer, self.region.region
        k = region[1].min + (k_step if self.steps > 1 else 0)
        coords = buf.layout.apply([region[0].min, k], buf.shape) if buf.layout is not None \
            else {"TCol": k}
        col = Analyzer().simplify(coords.get("TCol", ir.const(0, "int32")))
        if not isinstance(col, ir.IntImm):
            fail(f"the scale factors' column {col} must be constant")
        byte = col.value
        addr = ir.Cast("uint32", buf.elem_offset) + ir.const((byte // 4) | ((byte % 4) << 30),
                                                             "uint32")
        return addr, byte % 4


def gemm_tcgen05(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    x, ta, tb = gemm_args(call, block_scaled=True)
    cta_group = call.config.get("cta_group", 1)
    if cta_group not in (1, 2):
        raise DispatchFail(f"config 'cta_group' must be 1 or 2, got {cta_group!r}")
    d, a, b = (mma_desc.operand_region(x[name], name) for name in ("D", "A", "B"))
    M, N, d_addr = _tmem_tile(d)
    in_dt = str(a.buffer.dtype)
    if in_dt not in _IN or str(b.buffer.dtype) != in_dt:
        fail(f"A is {a.buffer.dtype} and B is {b.buffer.dtype}; tcgen05 (kind f16 / f8f6f4) "
             f"takes float16, bfloat16, float8_e4m3fn or float8_e5m2, the same for both")
    for name, r in (("A", a), ("B", b)):
        if r.buffer.scope not in _SMEM:
            fail(f"{name} is in '{r.buffer.scope}' memory; this variant reads A and B from "
                 f"shared memory")
    if M != 128 and not (M == 64 and cta_group == 1):
        fail(f"D has {M} rows; the variant issues M = 128 per CTA (cta_group {cta_group}), or "
             f"M = 64 into a datapath-F tile (cta_group 1)")
    n_local = N // cta_group
    step = 8 * cta_group
    if N % step or n_local % 8:
        fail(f"N = {N} must be a multiple of {step} for cta_group {cta_group}")
    n_inst = next(w for w in range(min(N, 256), step - 1, -step) if N % w == 0)
    ptx_t, _, mma_k = _IN[in_dt]
    pa = mma_desc.plan_operand(a, transposed=ta, mma_mn=M, mma_k=mma_k, name="A")
    pb = mma_desc.plan_operand(b, transposed=tb, mma_mn=n_inst // cta_group, mma_k=mma_k,
                               name="B")
    if pa.mn != M or pb.mn != n_local or pa.k != pb.k:
        fail(f"A is {pa.mn} x {pa.k} (M x K), B is {pb.mn} x {pb.k} (N x K), D is [{M}, {N}]"
             + (" (each CTA of the pair holds N / 2 rows of B)" if cta_group == 2 else ""))
    accum = x["accum"]
    k_steps = pa.k // mma_k
    scaled = x["SFA"] is not None
    if scaled and in_dt not in ("float8_e4m3fn", "float8_e5m2"):
        fail(f"a block-scaled call (SFA/SFB) takes float8_e4m3fn or float8_e5m2 A and B (kind "
             f"mxf8f6f4), got {in_dt}")
    sfa = _ScaleFactors(x["SFA"], "SFA", M, k_steps) if scaled else None
    sfb = _ScaleFactors(x["SFB"], "SFB", N, k_steps) if scaled else None
    descriptor = block_scaled_descriptor if scaled else instr_descriptor
    idesc = descriptor(in_dt, M * cta_group, n_inst, pa.desc.mn_major, pb.desc.mn_major)
    da, db = ir.Var("tcgen05_desc_a", _U64), ir.Var("tcgen05_desc_b", _U64)
    op = ir.Op.get(_BS_OP if scaled else "tirx.ptx.tcgen05_mma")
    mmas: list[ir.Stmt] = []
    for k_step in range(k_steps):
        enable = mma_desc.accum_flag(accum) if k_step == 0 else ir.const(1, "int32")
        for nt in range(N // n_inst):
            a_desc = da + ir.const(pa.start(0, k_step) >> 4, _U64)
            b_desc = db + ir.const(pb.start(nt, k_step) >> 4, _U64)
            tmem = d_addr + nt * n_inst if nt else d_addr
            types = [ir.StringImm("float32"), ir.StringImm(ptx_t), ir.StringImm(ptx_t)]
            if sfa is not None and sfb is not None:
                sf_t = [ir.StringImm(str(f.region.buffer.dtype)) for f in (sfa, sfb)]
                (a_sf, a_id), (b_sf, b_id) = sfa.address(k_step), sfb.address(k_step)
                mmas.append(ir.Evaluate(op(
                    *types, *sf_t, tmem, a_desc, b_desc, a_sf, b_sf,
                    ir.const(idesc | (b_id << 4) | (a_id << 29), "uint32"),
                    ir.IntImm("bool", 0), ir.const(cta_group, "int32"), enable)))
                continue
            mmas.append(ir.Evaluate(op(
                *types, tmem, a_desc,
                b_desc, ir.const(idesc, "uint32"), ir.IntImm("bool", 0),
                ir.const(cta_group, "int32"), enable,
                ir.const(0, "int32"), *[ir.const(0, "uint32")] * (4 * cta_group))))
    body: ir.Stmt = ir.seq(mmas)
    if sctx.scope_kind == "warp":
        elect = ir.Op.get("tirx.ptx.elect_sync")()
        body = ir.IfThenElse(elect != ir.const(0, "uint32"), body)
    body = ir.LetStmt(db, pb.value(b, "tcgen05"), body)
    body = ir.LetStmt(da, pa.value(a, "tcgen05"), body)
    return ir.PrimFunc([], body)


def register() -> None:
    when: list[Any] = [predicate("single_thread_or_warp", _scope_ok),
                       predicate("sm_100a", _arch_ok), predicate("intrinsics", mma_desc.intrinsics_present(_OPS))]
    register_dispatch("gemm_async", "cuda", variant=VARIANT, priority=PRIORITY,
                      when=when)(gemm_tcgen05)
