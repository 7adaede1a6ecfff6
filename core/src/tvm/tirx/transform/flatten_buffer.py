"""``FlattenBuffer``: make every buffer access one-dimensional (lowering.md section 3).

The flat index of ``A[i, j, ...]`` comes from, in this order of precedence, the buffer's
``TileLayout`` (its memory axis ``m``, via ``layout.apply``), its explicit ``strides``, or
row-major order; ``elem_offset`` is added. Allocations become 1-D; parameter buffers keep their
N-D shape in ``buffer_map`` and the body reaches them through a flat ``DeclBuffer`` sharing
their ``data`` variable (a parameter that is already flat is used directly).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from ...arith import Analyzer
from ...error import LoweringValueError, located
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.buffer import (
    Buffer,
    BufferRegion,
    Range,
    as_int64,
    const_span,
    promote_int64,
    wide_index,
)
from ...ir.function import IRModule, PrimFunc
from ...ir.layout import default_strides
from ...ir.visitor import Mutator
from ...transform import PassContext, PrimFuncPass
from ._util import flatten_seq

__all__ = ["FlattenBuffer", "flat_index", "flatten_buffer", "needs_int64"]

# A buffer that may hold this many elements or more is indexed in 64 bits.
_WIDE_ELEMENTS = 2**31


@dataclasses.dataclass(frozen=True)
class FlattenBuffer(PrimFuncPass):
    """Flatten N-D buffers to 1-D (see the module docstring)."""

    name = "FlattenBuffer"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        flattener = _Flattener()
        with contextlib.ExitStack() as facts:
            for cond in _assumptions(func.body):
                facts.enter_context(flattener.ana.constraint_scope(cond))
            return self._flatten(func, flattener)

    @staticmethod
    def _flatten(func: PrimFunc, flattener: _Flattener) -> PrimFunc:
        decls: list[S.Stmt] = []
        for param in func.params:
            buf = func.buffer_map.get(param)
            if buf is None or is_flat(buf):
                continue
            flat = flattener.flat_of(buf)
            decls.append(S.DeclBuffer(flat))
        body = flattener.visit(func.body)
        used = flattener.used
        decls = [d for d in decls if id(d.buffer) in used]  # type: ignore[attr-defined]
        if decls:
            body = flatten_seq([*decls, body])
        return func if body is func.body else func.with_body(body)


def _assumptions(body: S.Stmt) -> list[E.PrimExpr]:
    """The conditions of the ``T.assume(...)`` statements that open the function's body: they
    hold everywhere in it (bounds of shape variables, for the choice of index width)."""
    out: list[E.PrimExpr] = []
    for stmt in body.seq if isinstance(body, S.SeqStmt) else [body]:
        if not (isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.Call)
                and stmt.value.op.name == "tirx.assume"):
            break
        out.append(stmt.value.args[0])
    return out


def is_flat(buf: Buffer) -> bool:
    """A 1-D buffer with no layout, no strides (or stride 1) and no offset needs no rewrite."""
    if len(buf.shape) != 1 or buf.layout is not None:
        return False
    if buf.strides and not (isinstance(buf.strides[0], E.IntImm) and buf.strides[0].value == 1):
        return False
    return isinstance(buf.elem_offset, E.IntImm) and buf.elem_offset.value == 0


def needs_int64(buf: Buffer, indices: Sequence[E.PrimExpr], analyzer: Analyzer | None = None) -> bool:
    """Whether offsets into ``buf`` must be computed in 64 bits: an index or a symbolic extent
    is 64-bit, or ``analyzer`` cannot prove from the bounds of the shape (its variables'
    types, ``T.assume`` facts) that the buffer holds fewer than 2**31 elements."""
    if wide_index(buf, indices):
        return True
    if const_span(buf) is not None:
        return False  # decided exactly by wide_index
    return span_bound(buf, analyzer or Analyzer()) >= _WIDE_ELEMENTS


def span_bound(buf: Buffer, analyzer: Analyzer) -> float:
    """An upper bound of how many elements ``buf`` spans (its last reachable offset + 1),
    computed in 64 bits from the bounds ``analyzer`` knows; ``inf`` when unbounded. Extents
    count as non-negative (the argument check refuses other shapes)."""
    total = _abs_max(analyzer, buf.elem_offset) + 1
    if buf.layout is not None:
        return total + _abs_max(analyzer, buf.layout.span("m"))
    longest = [max(analyzer.const_int_bound(promote_int64(E.convert(ext))).max_value, 0)
               for ext in buf.shape]
    if not buf.strides:  # row-major: the product of the extents
        return total - 1 + math.prod(longest)
    for ext, stride in zip(longest, buf.strides):
        total += max(ext - 1, 0) * _abs_max(analyzer, E.convert(stride))
    return total


def _abs_max(analyzer: Analyzer, e: E.PrimExpr) -> float:
    bound = analyzer.const_int_bound(promote_int64(e))
    return max(abs(bound.min_value), abs(bound.max_value))


def flat_index(buf: Buffer, indices: Sequence[E.PrimExpr], analyzer: Analyzer | None = None) -> E.PrimExpr:
    """The 1-D element index of ``buf[indices]`` (simplified with ``analyzer``'s bounds),
    in 64 bits where :func:`needs_int64` says so."""
    wide = needs_int64(buf, indices, analyzer)
    if wide:  # offsets may pass 2**31 - 1: compute them in 64 bits
        indices = [promote_int64(i) for i in indices]
    if buf.layout is not None:
        coords = buf.layout.apply(indices, buf.shape)
        index = coords.get("m", E.IntImm("int32", 0))
    else:
        strides = buf.strides or default_strides(buf.shape)
        index = E.IntImm(_index_dtype(indices), 0)
        for i, s in zip(indices, strides):
            stride = as_int64(E.convert(s)) if wide else E.convert(s)
            index = E.Add(index, E.Mul(i, stride))
    if not (isinstance(buf.elem_offset, E.IntImm) and buf.elem_offset.value == 0):
        index = E.Add(index, as_int64(buf.elem_offset) if wide else buf.elem_offset)
    return (analyzer or Analyzer()).simplify(index)


def flat_size(buf: Buffer) -> E.PrimExpr:
    """How many elements the flat view spans."""
    elements = const_span(buf)
    if elements is not None:  # folded in Python: an int64 immediate when past 2**31 - 1
        return E.const(elements - _const_offset(buf))
    if buf.layout is not None:
        return Analyzer().simplify(buf.layout.span("m"))
    if buf.strides:
        span: E.PrimExpr = E.IntImm("int32", 1)
        for ext, s in zip(buf.shape, buf.strides):
            span = E.Add(span, E.Mul(E.Sub(ext, 1), s))
        return Analyzer().simplify(span)
    size: E.PrimExpr = E.IntImm("int32", 1)
    for ext in buf.shape:
        size = E.Mul(size, ext)
    return Analyzer().simplify(size)


def flatten_buffer(buf: Buffer) -> Buffer:
    """The flat (1-D, row-major) view of ``buf``, sharing its ``data`` variable."""
    return Buffer(buf.name, [flat_size(buf)], buf.dtype, scope=buf.scope, data=buf.data,
                  align=buf.align)


def _const_offset(buf: Buffer) -> int:
    return buf.elem_offset.value if isinstance(buf.elem_offset, E.IntImm) else 0


def _index_dtype(indices: Sequence[E.PrimExpr]) -> str:
    return "int64" if any(i.dtype.bits == 64 for i in indices) else "int32"


def _spanned(new: S.Stmt, old: S.Stmt) -> S.Stmt:
    """``new`` at ``old``'s place in the script (for located errors after lowering)."""
    new.span = old.span
    return new


class _Flattener(Mutator):
    def __init__(self) -> None:
        self.ana = Analyzer()
        self.flat: dict[int, Buffer] = {}
        self.originals: dict[int, Buffer] = {}
        self.used: set[int] = set()

    def visit(self, node: Any) -> Any:
        if isinstance(node, S.Stmt) and node.span is not None:
            with located(node.span):  # an error flattening it: at the statement's line
                return super().visit(node)
        return super().visit(node)

    def flat_of(self, buf: Buffer) -> Buffer:
        if buf.axis_separators:
            raise LoweringValueError(
                f"buffer {buf.name} has axis_separators {buf.axis_separators}, which ask for a "
                f"physical buffer of {len(buf.axis_separators) + 1} dimensions; the codegens "
                f"here take 1-D (flat) buffers only: drop axis_separators", buf.span)
        if is_flat(buf):
            return buf
        found = self.flat.get(id(buf))
        if found is None:
            found = flatten_buffer(buf)
            self.flat[id(buf)] = found
            self.originals[id(buf)] = buf
        return found

    def _use(self, buf: Buffer) -> Buffer:
        flat = self.flat_of(buf)
        self.used.add(id(flat))
        return flat

    def visit_Buffer(self, b: Buffer) -> Buffer:
        return self._use(b)

    def visit_For(self, s: S.For) -> S.Stmt:
        with self.ana.bound_scope(s.loop_var, Range(s.min, s.extent)):
            return self.generic_visit(s)  # type: ignore[return-value]

    def visit_AllocBuffer(self, s: S.AllocBuffer) -> S.Stmt:
        flat = self.flat_of(s.buffer)
        return s if flat is s.buffer else _spanned(S.AllocBuffer(flat, s.annotations), s)

    def visit_DeclBuffer(self, s: S.DeclBuffer) -> S.Stmt:
        flat = self.flat_of(s.buffer)
        return s if flat is s.buffer else _spanned(S.DeclBuffer(flat), s)

    def visit_BufferLoad(self, e: E.BufferLoad) -> E.PrimExpr:
        indices = [self.visit(i) for i in e.indices]
        buf = e.buffer
        if is_flat(buf):
            self.used.add(id(buf))
            indices = self._flat_indices(buf, indices)
            if all(a is b for a, b in zip(indices, e.indices)):
                return e
            return E.BufferLoad(buf, indices, e.dtype)
        return E.BufferLoad(self._use(buf), [self._flat_access(buf, indices)], e.dtype)

    def visit_BufferStore(self, s: S.BufferStore) -> S.Stmt:
        value = self.visit(s.value)
        indices = [self.visit(i) for i in s.indices]
        buf = s.buffer
        if is_flat(buf):
            self.used.add(id(buf))
            indices = self._flat_indices(buf, indices)
            if value is s.value and all(a is b for a, b in zip(indices, s.indices)):
                return s
            return _spanned(S.BufferStore(buf, value, indices), s)
        return _spanned(S.BufferStore(self._use(buf), value, [self._flat_access(buf, indices)]), s)

    def _flat_indices(self, buf: Buffer, indices: list[E.PrimExpr]) -> list[E.PrimExpr]:
        """The index of an already flat buffer, in 64 bits when the buffer may need it."""
        if all(i.dtype.bits == 64 or not i.dtype.is_integer for i in indices):
            return indices
        if not needs_int64(buf, indices, self.ana):
            return indices
        return [self.ana.simplify(promote_int64(i)) for i in indices]

    def _flat_access(self, buf: Buffer, indices: list[E.PrimExpr]) -> E.PrimExpr:
        if len(indices) == 1 and len(buf.shape) != 1 and buf.layout is None:
            return indices[0]  # already a flat index into a strided view
        if len(indices) != len(buf.shape) and not (buf.layout is not None and len(indices) == 1):
            raise LoweringValueError(f"access to `{buf.name}` has {len(indices)} indices but "
                                     f"the buffer has {len(buf.shape)} dimensions")
        if buf.layout is not None and len(indices) == 1 and len(buf.shape) != 1:
            return indices[0]  # a layout buffer accessed by its memory offset
        return flat_index(buf, indices, self.ana)

    def visit_BufferRegion(self, r: BufferRegion) -> BufferRegion:
        """A region becomes the flat range from its first to its last element."""
        buf = r.buffer
        mins = [self.visit(rg.min) for rg in r.region]
        if is_flat(buf):
            self.used.add(id(buf))
            return r
        lasts = [E.Sub(E.Add(m, rg.extent), 1) for m, rg in zip(mins, r.region)]
        start = flat_index(buf, mins, self.ana)
        stop = flat_index(buf, lasts, self.ana)
        extent = self.ana.simplify(E.Add(E.Sub(stop, start), 1))
        return BufferRegion(self._use(buf), [Range(start, extent)])


