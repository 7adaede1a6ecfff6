"""``gemm`` over register fragments: ``mma.sync.aligned.m16n8k16`` / ``m16n8k8`` straight on the
registers a warp holds (the register form of the ``mma.m16n8k*`` variant, :mod:`.gemm_mma`).

A, B, C and D are whole ``local`` buffers whose layouts spread them over the 32 lanes of the warp
(``laneid`` and memory iterators only). The layout decides which register of which lane holds each
logical element; the variant takes any layout whose every 16x8 (D, C), 16xk (A) and kx8 (B) tile
puts its elements where PTX's m16n8 fragments want them (lane ``4 * g + t``, PTX ISA "Matrix
Fragments for mma.m16n8k16"), the same register in every lane, and A's and B's two 16-bit halves
of a 32-bit register next to each other at an even offset:

    D/C[M, N]: M = 16 mt + 8 rM + g,  N = 8 nt + 2 t + rN            register 2 rM + rN
    A[M, K]:   M = 16 mt + 8 rM + g,  K = k kt + 8 kHi + 2 t + p     b32 rM + 2 kHi, half p
    B[K, N]:   N = 8 nt + g,          K = k kt + 8 kHi + 2 t + p     b32 kHi, half p

``k`` is 16 when it divides K (``m16n8k16``), else 8 (``m16n8k8``). ``transpose_A`` means A is
stored ``[K, M]``, ``transpose_B`` that B is stored ``[N, K]``: only the indexing changes, the
registers and the ``.row.col`` mma are the same. D is cleared (``beta == 0`` or no C) or
copied from C (``beta == 1``; nothing when C is D), then one mma per (mt, nt, kt) tile accumulates
into D's registers in place; everything is unrolled, so every register index is a constant.

Declines with a reason: inputs other than float16/float16 or bfloat16/bfloat16 with float32 C and
D (the f16 accumulator, mixed inputs, tf32 and the integer mmas are not generated), alpha != 1,
beta other than 0 or 1, a scope other than one warp, parts of buffers, layouts that are not such
fragments, shapes that are not multiples of 16 x 8 x 8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import ir
from tvm.backend.sdk import DispatchContext, fail, region_of, static_float
from tvm.ir.layout import TileLayout

__all__ = ["gemm_fragments", "is_fragment"]

_IN_DTYPES = {"float16": "fp16", "bfloat16": "bf16"}
_I32 = "int32"
_LANE = "laneid"


def is_fragment(arg: Any) -> bool:
    """Whether ``arg`` is a ``local`` buffer (region) laid out over lanes: a register fragment."""
    if not isinstance(arg, (ir.Buffer, ir.BufferRegion)):
        return False
    buf = region_of(arg).buffer
    lay = buf.layout
    return buf.scope == "local" and isinstance(lay, TileLayout) and \
        any(it.axis.is_thread for it in lay.shard)


@dataclass
class _Frag:
    """One operand: its buffer, a flat view of this thread's registers, and the logical shape."""

    name: str
    buf: ir.Buffer
    view: ir.Buffer
    iters: list[tuple[int, int, str]]  # (extent, stride, axis) of the layout's shard
    transposed: bool

    def offset(self, row: int, col: int, lane: int) -> int:
        """This lane's register offset of logical element ``(row, col)`` of op(X); a mismatch of
        the owning lane is a decline naming the element."""
        r, c = (col, row) if self.transposed else (row, col)
        rows, cols = (int(s) for s in self.buf.shape)  # type: ignore[call-overload]
        flat = r * cols + c
        coords: dict[str, int] = {}
        for pos in range(len(self.iters) - 1, -1, -1):
            ext, stride, axis = self.iters[pos]
            digit = flat % ext if pos > 0 else flat
            flat //= ext
            coords[axis] = coords.get(axis, 0) + digit * stride
        if coords.get(_LANE, 0) != lane:
            fail(f"{self.name}'s layout {self.buf.layout} puts element [{r}, {c}] in lane "
                 f"{coords.get(_LANE, 0)}; the mma fragment has it in lane {lane} (lay {self.name} "
                 "out as PTX's m16n8 fragments, tile by tile)")
        return coords.get("m", 0)


def _operand(arg: Any, name: str, transposed: bool, tag: str) -> _Frag:
    if not is_fragment(arg):
        fail(f"{name} is not a register fragment (a local buffer laid out over lanes); the "
             "register form of mma.sync needs A, B, C and D all in registers")
    region = region_of(arg)
    buf = region.buffer
    if len(buf.shape) != 2 or not all(isinstance(s, ir.IntImm) for s in buf.shape):
        fail(f"{name} must be a 2-D fragment of constant shape, got {list(buf.shape)}")
    if any(not (isinstance(r.min, ir.IntImm) and r.min.value == 0) or str(r.extent) != str(s)
           for r, s in zip(region.region, buf.shape)):
        fail(f"{name} must be the whole fragment buffer, not a part of it")
    lay = buf.layout
    assert isinstance(lay, TileLayout)  # is_fragment
    iters = []
    for it in lay.shard:
        if not isinstance(it.extent, ir.IntImm) or not isinstance(it.stride, ir.IntImm):
            fail(f"{name}'s layout {lay} has non-constant iterators")
        if it.axis.name not in ("m", _LANE):
            fail(f"{name}'s layout {lay} uses axis {it.axis.name}; a warp's fragment has "
                 "laneid and register iterators only")
        iters.append((it.extent.value, it.stride.value, it.axis.name))
    if lay.replica:
        fail(f"{name}'s layout {lay} replicates over threads; a fragment is held once")
    numel = int(buf.shape[0]) * int(buf.shape[1])  # type: ignore[call-overload]
    size = 1
    for ext, _, _ in iters:
        size *= ext
    if size != numel:
        fail(f"{name}'s layout {lay} covers {size} elements, the buffer has {numel}")
    span = 1 + sum((e - 1) * s for e, s, a in iters if a == "m")
    view = ir.Buffer(f"{tag}_local", [span], buf.dtype, scope="local", data=buf.data,
                     elem_offset=buf.elem_offset, align=buf.align)
    return _Frag(name, buf, view, iters, transposed)


def _same_lanes(frag: _Frag, r0: int, c0: int, lanes: list[tuple[int, int, int]]) -> int:
    """The register offset of element ``(r0, c0)`` (lane 0's) and of its counterparts
    ``(r0 + dr, c0 + dc)`` in the other lanes, ``lanes`` = (lane, dr, dc): all must agree."""
    off = None
    for lane, dr, dc in lanes:
        o = frag.offset(r0 + dr, c0 + dc, lane)
        if off is None:
            off = o
        elif o != off:
            fail(f"{frag.name}'s layout {frag.buf.layout} keeps element [{r0 + dr}, {c0 + dc}] "
                 f"in register {o} of lane {lane} but its lane-0 counterpart in register {off}; "
                 "an mma operand register is the same in every lane")
    assert off is not None
    return off


_ROW_LANES = [(4 * g + t, g, 2 * t) for g in range(8) for t in range(4)]  # D/C and A: (g, 2t)
_COL_LANES = [(4 * g + t, 2 * t, g) for g in range(8) for t in range(4)]  # B [K, N]: (2t, g)


def _acc_regs(f: _Frag, mt: int, nt: int) -> list[int]:
    return [_same_lanes(f, 16 * mt + 8 * (e // 2), 8 * nt + e % 2, _ROW_LANES)
            for e in range(4)]


def _packed(f: _Frag, lo: int, hi: int, where: str) -> int:
    if hi != lo + 1 or lo % 2:
        fail(f"{f.name}'s layout {f.buf.layout} holds the two 16-bit halves of {where} in "
             f"registers {lo} and {hi}; mma reads them as one 32-bit register (an even offset "
             "and the next one)")
    return lo


def _a_regs(f: _Frag, mt: int, kt: int, k: int) -> list[int]:
    out = []
    for khi in range(k // 8):
        for rm in range(2):
            row, col = 16 * mt + 8 * rm, k * kt + 8 * khi
            lo = _same_lanes(f, row, col, _ROW_LANES)
            hi = _same_lanes(f, row, col + 1, _ROW_LANES)
            out.append(_packed(f, lo, hi, f"A[{row}, {col}:{col + 2}]"))
    return out


def _b_regs(f: _Frag, kt: int, nt: int, k: int) -> list[int]:
    out = []
    for khi in range(k // 8):
        row, col = k * kt + 8 * khi, 8 * nt
        lo = _same_lanes(f, row, col, _COL_LANES)
        hi = _same_lanes(f, row + 1, col, _COL_LANES)
        out.append(_packed(f, lo, hi, f"B[{row}:{row + 2}, {col}]"))
    return out


def _load(buf: ir.Buffer, off: int) -> ir.BufferLoad:
    return ir.BufferLoad(buf, [ir.const(off, _I32)])


def gemm_fragments(x: dict[str, Any], ta: bool, tb: bool, sctx: DispatchContext,
                   mma_op: str) -> ir.PrimFunc:
    """The register form (see the module's docstring); ``x`` the bound gemm arguments."""
    if sctx.scope_kind != "warp":
        fail(f"register fragments are a warp's: call Tx.warp.gemm (scope is {sctx.scope_kind})")
    a = _operand(x["A"], "A", ta, "a")
    b = _operand(x["B"], "B", tb, "b")
    d = _operand(x["D"], "D", False, "d")
    in_dt, b_dt, d_dt = str(a.buf.dtype), str(b.buf.dtype), str(d.buf.dtype)
    alpha, beta = static_float(x["alpha"]), static_float(x["beta"])
    C = x["C"]
    use_c = C is not None and beta != 0.0
    c_dt = str(region_of(C).buffer.dtype) if use_c else "float32"
    if in_dt not in _IN_DTYPES or b_dt != in_dt or d_dt != "float32" or c_dt != "float32":
        fail(f"dtypes A={in_dt}, B={b_dt}, C={c_dt}, D={d_dt}: the register mma.sync is "
             "generated for float16 x float16 or bfloat16 x bfloat16 with float32 C and D only")
    if alpha != 1.0:
        fail(f"alpha is {alpha}; mma.sync has no scale, only alpha = 1 is generated")
    if use_c and beta != 1.0:
        fail(f"beta is {beta}; mma.sync accumulates 1 * C, only beta = 0 or 1 is generated")
    am, ak = (int(s) for s in a.buf.shape)  # type: ignore[call-overload]
    bk, bn = (int(s) for s in b.buf.shape)  # type: ignore[call-overload]
    M, K = (ak, am) if ta else (am, ak)
    Kb, N = (bn, bk) if tb else (bk, bn)
    dm, dn = (int(s) for s in d.buf.shape)  # type: ignore[call-overload]
    if Kb != K or (dm, dn) != (M, N):
        fail(f"gemm shapes do not match: op(A) {M}x{K}, op(B) {Kb}x{N}, D {dm}x{dn}")
    if M % 16 or N % 8 or K % 8:
        fail(f"M x N x K = {M} x {N} x {K}: the m16n8k16/k8 tiles need M % 16, N % 8, K % 8 == 0")
    k = 16 if K % 16 == 0 else 8
    c = None
    if use_c:
        c_buf = region_of(C).buffer
        if c_buf is not d.buf:
            c = _operand(C, "C", False, "c")
            if [int(s) for s in c_buf.shape] != [M, N]:  # type: ignore[call-overload]
                fail(f"C is {list(c_buf.shape)}; with register fragments C is the whole [M, N]")
    MT, NT, KT = M // 16, N // 8, K // k
    acc = {(mt, nt): _acc_regs(d, mt, nt) for mt in range(MT) for nt in range(NT)}
    ra = {(mt, kt): _a_regs(a, mt, kt, k) for mt in range(MT) for kt in range(KT)}
    rb = {(kt, nt): _b_regs(b, kt, nt, k) for kt in range(KT) for nt in range(NT)}

    stmts: list[ir.Stmt] = []
    views = [d.view, a.view, b.view] + ([c.view] if c is not None else [])
    if not use_c:
        for regs in acc.values():
            stmts += [ir.BufferStore(d.view, ir.const(0.0, "float32"), [ir.const(r, _I32)])
                      for r in regs]
    elif c is not None:
        for (mt, nt), regs in acc.items():
            src = _acc_regs(c, mt, nt)
            stmts += [ir.BufferStore(d.view, _load(c.view, s), [ir.const(r, _I32)])
                      for r, s in zip(regs, src)]
    op = ir.Op.get(mma_op)
    ab = _IN_DTYPES[in_dt]
    for mt in range(MT):
        for nt in range(NT):
            dregs = [_load(d.view, r) for r in acc[mt, nt]]
            for kt in range(KT):
                aregs = [_load(a.view, r) for r in ra[mt, kt]]
                bregs = [_load(b.view, r) for r in rb[kt, nt]]
                stmts.append(ir.Evaluate(op(
                    ir.StringImm(f"m16n8k{k}"), ir.StringImm("row"), ir.StringImm("col"),
                    ir.StringImm("fp32"), ir.StringImm(ab), ir.StringImm(ab), ir.StringImm("fp32"),
                    ir.const(4, _I32), ir.const(len(aregs), _I32), ir.const(len(bregs), _I32),
                    ir.const(4, _I32), ir.IntImm("bool", 0), *dregs, *aregs, *bregs, *dregs,
                    ir.IntImm("bool", 0))))
    return ir.PrimFunc([], ir.seq([*(ir.DeclBuffer(v) for v in views), *stmts]))
