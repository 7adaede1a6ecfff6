"""``gemm_async`` on Hopper's warpgroup MMA: ``wgmma.mma_async`` (sm_90a).

Variant ``wgmma`` (priority 10) for ``Tx.wg.gemm_async(D, A, B, transpose_A, transpose_B,
accum)``: ``D[M, N] (+)= A @ B^T``, A ``[M, K]`` and B ``[N, K]`` (``transpose_*``: ``[K, M]`` /
``[K, N]``), at warpgroup scope (the 128 threads of 4 consecutive warps).

- **D** is a ``local`` float32 buffer ``[M, N]`` with the layout
  :func:`wgmma_accumulator_layout` (M a multiple of 64, N of 8): each thread holds ``M * N / 128``
  registers, the fragments of ``M / 64`` x ``ceil(N / 256)`` instructions.
- **A** is a shared-memory region (read through a descriptor) or, for float16/bfloat16, a
  ``local`` buffer ``[M, K]`` with the same fragment layout (``wgmma_accumulator_layout(M, K)``:
  the accumulators of an earlier product, converted, feed the next one).
- **B** is a shared-memory region.
- Shared-memory operands may use any layout that tiles the 128-, 64- or 32-byte swizzle atoms
  or the no-swizzle core matrices, K-major or MN-major (``mma_desc``: descriptors derived
  from the layout, the seed's contiguous-axis slicing rule and errors). float8 (e4m3, e5m2;
  K steps of 32) must be K-major, as wgmma requires.
- ``accum`` is a constant or a run-time boolean: false zeroes D (the first K step's scale-d is
  0, so D's old contents are never read).

What the call emits: ``wgmma.fence`` (D and A's registers are ready), one ``wgmma.mma_async``
per (K step, 64-row tile, N tile), then ``wgmma.commit_group``. It does **not** wait, so
several groups stay in flight: the caller waits with ``T.ptx.wgmma.wait_group(n)`` (n groups
may remain pending) before reading D or overwriting the operands. ``config={"wait": n}``
emits that wait after the commit, followed by a register barrier on D's registers (an empty
``asm`` that keeps the compiler from moving D's reads above the wait).

Declines with a reason for: another scope, a target other than sm_90a, D not a whole float32
``local`` buffer with the fragment layout, mismatched shapes or dtypes, operands elsewhere than
shared memory (A: or registers), shapes not whole 64 x 8 x 16 (x 32 for float8) tiles.
Layouts that no descriptor can address raise ``ValueError`` (reported in the dispatch table).
"""

from __future__ import annotations

from typing import Any

from tvm import ir
from tvm.backend.sdk import DispatchContext, fail, gemm_args, predicate, register_dispatch
from tvm.error import DispatchFail
from tvm.ir.layout import Iter, TileLayout

from . import mma_desc
from .common import needs_arch
from .gemm_mma import _layout_key

__all__ = ["PRIORITY", "VARIANT", "gemm_wgmma", "register", "wgmma_accumulator_layout",
           "wgmma_fragment_index"]

VARIANT = "wgmma"
PRIORITY = 10
_SMEM = ("shared", "shared.dyn")
_IN = {"float16": ("f16", 16), "bfloat16": ("bf16", 16), "float8_e4m3fn": ("e4m3", 32),
       "float8_e5m2": ("e5m2", 32)}
_OPS = ("tirx.ptx.wgmma_mma_async_ss", "tirx.ptx.wgmma_mma_async_rs", "tirx.ptx.wgmma_fence",
        "tirx.ptx.wgmma_commit_group", "tirx.ptx.wgmma_wait_group",
        "tirx.ptx.wgmma_noop_barrier", "tirx.cuda.cvta_generic_to_shared")
_U64 = "uint64"


# -- the fragment layout ------------------------------------------------------------------------
def wgmma_accumulator_layout(m: int, n: int) -> TileLayout:
    """Layout of a ``local`` buffer ``[m, n]`` held in wgmma fragments by one warpgroup.

    Element ``(row, col)``, with ``row = 64 * mt + 16 * w + 8 * h + g`` and ``col = 8 * c + 2 * t
    + e`` (g < 8, t < 4, h, e < 2), is in warp ``w`` of the warpgroup, lane ``4 * g + t``,
    register ``mt * n / 2 + 4 * c + 2 * h + e`` (PTX's m64nN accumulator fragment; for
    ``n = 16`` also the 16-bit A fragment of a K step). Each thread holds ``m * n / 128``.
    """
    if m % 64 or n % 8 or m <= 0 or n <= 0:
        raise ValueError(f"wgmma_accumulator_layout: [{m}, {n}] is not whole 64 x 8 fragments "
                         f"(m a multiple of 64, n of 8)")
    return TileLayout([Iter(m // 64, n // 2, "m"), Iter(4, 1, "wid_in_wg"), Iter(2, 2, "m"),
                       Iter(8, 4, "laneid"), Iter(n // 8, 4, "m"), Iter(4, 1, "laneid"),
                       Iter(2, 1, "m")])


def wgmma_fragment_index(n: int, mt: int, nb: int, h: int, e: int) -> int:
    """Register index of 64-row tile ``mt``, 8-column block ``nb``, half ``h``, element ``e``."""
    return mt * n // 2 + 4 * nb + 2 * h + e


# -- predicates ----------------------------------------------------------------------------------
def _scope_ok(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    if sctx.scope_kind != "warpgroup":
        return False, f"scope {sctx.scope_kind} (wgmma is issued by a warpgroup: Tx.wg.gemm_async)"
    return True, ""


def _arch_ok(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    arch = mma_desc.target_arch(sctx)
    if arch != "sm_90a":
        return False, f"wgmma {needs_arch('sm_90a', arch)}"
    return True, ""


# -- the variant ----------------------------------------------------------------------------------
def _accumulators(d: ir.BufferRegion) -> tuple[int, int]:
    buf = d.buffer
    if buf.scope != "local" or str(buf.dtype) != "float32":
        fail(f"D is a {buf.dtype} buffer in '{buf.scope}' memory; wgmma accumulates into a local "
             f"float32 buffer with wgmma_accumulator_layout(M, N)")
    shape = buf.static_shape()
    if shape is None or len(shape) != 2:
        fail(f"D must be a 2-d local buffer [M, N] of constant shape, got {buf.shape}")
    m, n = shape  # type: ignore[misc]
    whole = all(isinstance(r.min, ir.IntImm) and r.min.value == 0
                and isinstance(r.extent, ir.IntImm) and r.extent.value == e for r, e in zip(d.region, shape))  # type: ignore[arg-type]
    if not whole:
        fail("D must be the whole accumulator buffer, not a part of it")
    if m % 64 or n % 8:
        fail(f"D is [{m}, {n}]; wgmma tiles D in 64 x 8 fragments")
    if _layout_key(buf.layout) != _layout_key(wgmma_accumulator_layout(m, n)):
        fail(f"D needs the layout wgmma_accumulator_layout({m}, {n}); D's layout is {buf.layout}")
    return m, n


def _n_inst(n: int) -> int:
    """The widest instruction N (a multiple of 8, at most 256) that divides N."""
    return next(w for w in range(min(n, 256), 7, -8) if n % w == 0)


def gemm_wgmma(call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    x, ta, tb = gemm_args(call)
    d = mma_desc.operand_region(x["D"], "D")
    a = mma_desc.operand_region(x["A"], "A")
    b = mma_desc.operand_region(x["B"], "B")
    M, N = _accumulators(d)
    in_dt = str(a.buffer.dtype)
    if in_dt not in _IN or str(b.buffer.dtype) != in_dt:
        fail(f"A is {a.buffer.dtype} and B is {b.buffer.dtype}; wgmma takes float16, bfloat16, "
             f"float8_e4m3fn or float8_e5m2, the same for both")
    ptx_t, mma_k = _IN[in_dt]
    if b.buffer.scope not in _SMEM:
        fail(f"B is in '{b.buffer.scope}' memory; wgmma reads B from shared memory")
    a_regs = a.buffer.scope == "local"
    if not a_regs and a.buffer.scope not in _SMEM:
        fail(f"A is in '{a.buffer.scope}' memory; wgmma reads A from shared memory or registers")
    n_inst = _n_inst(N)
    pb = mma_desc.plan_operand(b, transposed=tb, mma_mn=n_inst, mma_k=mma_k, name="B")
    if pb.mn != N:
        fail(f"B has N = {pb.mn} but D is [{M}, {N}]")
    K = pb.k
    if a_regs:
        pa = None
        if ta or mma_k != 16:
            fail("A in registers must be float16/bfloat16 [M, K], not transposed")
        if _accumulator_key(a.buffer) != _layout_key(wgmma_accumulator_layout(M, K)):
            fail(f"A in registers needs the layout wgmma_accumulator_layout({M}, {K})")
    else:
        pa = mma_desc.plan_operand(a, transposed=ta, mma_mn=64, mma_k=mma_k, name="A")
        if (pa.mn, pa.k) != (M, K):
            fail(f"A is {pa.mn} x {pa.k} (M x K), B is {N} x {K} (N x K), D is [{M}, {N}]")
        if mma_k == 32 and pa.desc.mn_major:
            fail("float8 wgmma reads A K-major only; lay A out with K contiguous")
    if mma_k == 32 and pb.desc.mn_major:
        fail("float8 wgmma reads B K-major only; lay B out with K contiguous")
    gen = _Gen(call, d.buffer, a, b, pa, pb, M, N, K, n_inst, ptx_t, mma_k, x["accum"])
    return ir.PrimFunc([], gen.build())


def _accumulator_key(buf: ir.Buffer) -> Any:
    return _layout_key(buf.layout)


class _Gen:
    def __init__(self, call: ir.TilePrimitiveCall, acc: ir.Buffer, a: ir.BufferRegion,
                 b: ir.BufferRegion, pa: mma_desc.OperandPlan | None, pb: mma_desc.OperandPlan, M: int, N: int,
                 K: int, n_inst: int, ptx_t: str, mma_k: int, accum: Any) -> None:
        self.call, self.acc, self.a, self.b, self.pa, self.pb = call, acc, a, b, pa, pb
        self.M, self.N, self.K, self.n_inst, self.ptx_t, self.mma_k = M, N, K, n_inst, ptx_t, mma_k
        self.accum = accum
        self.wait = call.config.get("wait")
        if self.wait is not None and (isinstance(self.wait, bool) or
                                      not isinstance(self.wait, (int, ir.IntImm))):
            raise DispatchFail(f"config 'wait' must be an integer (groups left pending), "
                               f"got {self.wait!r}")

    def _scale_d(self, k_step: int) -> ir.PrimExpr:
        return mma_desc.accum_flag(self.accum) if k_step == 0 else ir.const(1, "int32")

    def _mma(self, k_step: int, mt: int, nt: int, da: ir.Var | None, db: ir.Var) -> ir.Stmt:
        n = self.n_inst
        pb, pa = self.pb, self.pa
        base = mt * self.N // 2 + nt * n // 2
        accs = [ir.BufferLoad(self.acc, [ir.const(base + i, "int32")]) for i in range(n // 2)]
        b_desc = db + ir.const(pb.start(nt, k_step) >> 4, _U64)
        flags = [ir.const(64, "int32"), ir.const(n, "int32"), ir.const(self.mma_k, "int32"),
                 ir.StringImm(self.ptx_t), ir.StringImm("f32"),
                 ir.IntImm("bool", int(pa.desc.mn_major) if pa is not None else 0),
                 ir.IntImm("bool", int(pb.desc.mn_major)), ir.FloatImm("float32", 1.0),
                 ir.FloatImm("float32", 1.0), self._scale_d(k_step)]
        if pa is None:
            first = mt * self.K // 2 + k_step * 8  # 8 halves = 4 registers per K step
            regs = [ir.BufferLoad(self.a.buffer, [ir.const(first + 2 * q, "int32")])
                    for q in range(4)]
            op = ir.Op.get("tirx.ptx.wgmma_mma_async_rs")
            return ir.Evaluate(op(*flags, b_desc, *regs, *accs))
        assert da is not None
        a_desc = da + ir.const(pa.start(mt, k_step) >> 4, _U64)
        op = ir.Op.get("tirx.ptx.wgmma_mma_async_ss")
        return ir.Evaluate(op(*flags, a_desc, b_desc, *accs))

    def build(self) -> ir.Stmt:
        da = ir.Var("wgmma_desc_a", _U64) if self.pa is not None else None
        db = ir.Var("wgmma_desc_b", _U64)
        body: list[ir.Stmt] = [ir.Evaluate(ir.Op.get("tirx.ptx.wgmma_fence")())]
        for k_step in range(self.K // self.mma_k):
            for mt in range(self.M // 64):
                for nt in range(self.N // self.n_inst):
                    body.append(self._mma(k_step, mt, nt, da, db))
        body.append(ir.Evaluate(ir.Op.get("tirx.ptx.wgmma_commit_group")()))
        if self.wait is not None:
            w = int(self.wait.value if isinstance(self.wait, ir.IntImm) else self.wait)
            body.append(ir.Evaluate(ir.Op.get("tirx.ptx.wgmma_wait_group")(ir.const(w, "int32"))))
            body += register_barrier(self.acc, self.M * self.N // 128)
        stmt: ir.Stmt = ir.seq(body)
        stmt = ir.LetStmt(db, self.pb.value(self.b, "wgmma"), stmt)
        if da is not None:
            assert self.pa is not None
            stmt = ir.LetStmt(da, self.pa.value(self.a, "wgmma"), stmt)
        return stmt


def register_barrier(buf: ir.Buffer, count: int) -> list[ir.Stmt]:
    """``T.ptx.wgmma.noop_barrier`` on each of the first ``count`` registers of ``buf``: after a
    ``wgmma.wait_group``, keeps the compiler from reading them above the wait."""
    op = ir.Op.get("tirx.ptx.wgmma_noop_barrier")
    return [ir.Evaluate(op(ir.BufferLoad(buf, [ir.const(i, "int32")]))) for i in range(count)]


def register() -> None:
    when: list[Any] = [predicate("warpgroup_scope", _scope_ok), predicate("sm_90a", _arch_ok),
                       predicate("intrinsics", mma_desc.intrinsics_present(_OPS))]
    register_dispatch("gemm_async", "cuda", variant=VARIANT, priority=PRIORITY,
                      when=when)(gemm_wgmma)
