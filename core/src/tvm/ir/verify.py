"""The IR verifier. Construction does not check; this does, and each error names the node and
the rule it breaks. ``tvm.compile`` runs it before any pass.

Statements and buffers read by the parser carry their source location (``span``); an error
inside one is reported at that file, line and column, with the source line.

Besides the type rules, the verifier rejects accesses it can *prove* out of bounds: an index
that is an affine function of loop variables (and kernel indices) with constant ranges, into a
dimension of constant extent, that leaves ``[0, extent)`` for some iteration. An access is not
judged when it may be skipped: under an ``if``, a ``T.Select``/``T.if_then_else`` branch, the
right side of ``and``/``or``, in a loop that can exit early (``T.break_loop``,
``T.continue_loop``, ``T.thread_return``, ``assert``), or after such an exit.
"""

from __future__ import annotations

from typing import Any

from ..error import IRVerifyError, format_location
from . import expr as E
from . import stmt as S
from .buffer import Buffer, BufferRegion
from .depth import depth_error
from .function import IRModule, PrimFunc
from .linear import affine_range
from .op import OpCategory
from .span import Span
from .visitor import Visitor

__all__ = ["verify", "verify_errors"]

# Calls after which the rest of a loop body (or of the function) may not run.
_EXITS = frozenset({"tirx.break_loop", "tirx.continue_loop", "tirx.thread_return", "tirx.ret"})


class _Verifier(Visitor):
    def __init__(self) -> None:
        self.errors: list[tuple[Span | None, str]] = []
        self.defined: set[int] = set()
        self.func: PrimFunc | None = None
        self.span: Span | None = None
        # bounds analysis: constant ranges [lo, hi] of loop and kernel index variables
        self.ranges: dict[int, tuple[int, int]] = {}
        self.guarded = 0  # > 0: the access may be skipped, so it proves nothing
        self.exited = False  # an exit was seen: later accesses may be skipped

    def err(self, msg: str, span: Span | None = None) -> None:
        self.errors.append((span or self.span, msg))

    def define(self, v: E.Var) -> None:
        self.defined.add(id(v))

    def define_buffer(self, b: Buffer) -> None:
        self.defined.add(id(b))
        self.define(b.data)

    def visit(self, node: Any) -> None:
        span = getattr(node, "span", None) if isinstance(node, S.Stmt) else None
        if span is None:
            super().visit(node)
            return
        saved, self.span = self.span, span
        try:
            super().visit(node)
        finally:
            self.span = saved

    # -- functions -------------------------------------------------------------------------
    def visit_PrimFunc(self, f: PrimFunc) -> None:
        self.func = f
        self.ranges = {}
        self.guarded, self.exited = 0, False
        for p in f.params:
            self.define(p)
        for p, b in f.buffer_map.items():
            if not any(p is q for q in f.params):
                self.err(f"function {f.name}: buffer_map key {p.name} is not a parameter")
            self.define_buffer(b)
            for dim in b.shape + b.strides + [b.elem_offset]:
                self._define_free_shape_vars(dim)
        for b in f.buffer_map.values():
            self._check_shape(b, b.span)
            self._check_param_span(b)
            for dim in b.shape + b.strides:
                self.visit(dim)
        self.visit(f.body)

    def _define_free_shape_vars(self, e: Any) -> None:
        # symbolic extents of parameter buffers (T.match_buffer(a, (n,))) define n
        if isinstance(e, E.Var):
            self.define(e)

    def visit_IRModule(self, m: IRModule) -> None:
        for f in m.functions.values():
            self.defined = set()
            self.visit(f)

    # -- statements ------------------------------------------------------------------------
    def visit_For(self, s: S.For) -> None:
        self.visit(s.min)
        self.visit(s.extent)
        for part, e in (("extent", s.extent), ("min", s.min)):
            if not e.dtype.is_integer:
                self.err(f"loop `{s.loop_var.name}` has a {e.dtype} {part}; loop bounds must be integers")
        if s.kind is S.ForKind.THREAD_BINDING and not s.thread_tag:
            self.err(f"loop `{s.loop_var.name}` is thread-bound but names no thread (e.g. threadIdx.x)")
        if s.kind is S.ForKind.VECTORIZED and not isinstance(s.extent, E.IntImm):
            self.err(f"vectorized loop `{s.loop_var.name}` needs a constant extent")
        self.define(s.loop_var)
        lo, ext = _const(s.min), _const(s.extent)
        never_runs = ext is not None and ext <= 0
        if lo is not None and ext is not None and ext > 0:
            self.ranges[id(s.loop_var)] = (lo, lo + ext - 1)
        skippable = never_runs or _has_exit(s.body)
        self.guarded += skippable
        try:
            self.visit(s.body)
        finally:
            self.guarded -= skippable

    def visit_LetStmt(self, s: S.LetStmt) -> None:
        self.visit(s.value)
        if s.value.dtype != s.var.dtype:
            self.err(f"let `{s.var.name}`: value is {s.value.dtype} but the variable is {s.var.dtype}")
        self.define(s.var)
        self.visit(s.body)

    def visit_IndexLambda(self, f: E.IndexLambda) -> None:
        for p in f.params:
            self.define(p)
        self.visit(f.body)

    def visit_Let(self, e: E.Let) -> None:
        self.visit(e.value)
        self.define(e.var)
        self.visit(e.body)

    def visit_ScopeIdDef(self, s: S.ScopeIdDef) -> None:
        for e in s.extents:
            self.visit(e)
            if not e.dtype.is_integer:
                self.err(f"T.{s.kind} has a {e.dtype} extent; extents must be integers")
            elif isinstance(e, E.IntImm) and e.value < 1:
                self.err(f"T.{s.kind} has extent {e.value}; extents must be at least 1")
        if s.deferred:  # T.thread_id(): the extent comes from the other ids
            self.define(s.vars[0])
        for v, e in zip(s.vars, s.extents):
            self.define(v)
            if isinstance(e, E.IntImm) and e.value >= 1:
                self.ranges[id(v)] = (0, e.value - 1)

    def visit_AllocBuffer(self, s: S.AllocBuffer) -> None:
        for dim in s.buffer.shape:
            self.visit(dim)
        self._check_shape(s.buffer, None)
        self.define_buffer(s.buffer)

    def visit_DeclBuffer(self, s: S.DeclBuffer) -> None:
        for dim in s.buffer.shape:
            self.visit(dim)
        self._check_shape(s.buffer, None)
        # a tensor-memory buffer is placed by its TMEM address (``allocated_addr``), not by a
        # pointer: its data variable is never read, so the declaration defines it
        if s.buffer.scope == "tmem":
            self.define(s.buffer.data)
        elif id(s.buffer.data) not in self.defined:
            self.err(f"DeclBuffer `{s.buffer.name}` views data `{s.buffer.data.name}` that is not defined")
        self.define_buffer(s.buffer)

    def visit_IfThenElse(self, s: S.IfThenElse) -> None:
        self.visit(s.condition)
        if not s.condition.dtype.is_bool:
            self.err(f"if condition is {s.condition.dtype}; it must be bool")
        self.guarded += 1
        try:
            self.visit(s.then_case)
            if s.else_case is not None:
                self.visit(s.else_case)
        finally:
            self.guarded -= 1

    def visit_AssertStmt(self, s: S.AssertStmt) -> None:
        self.visit(s.condition)
        if not s.condition.dtype.is_bool:
            self.err(f"assert condition is {s.condition.dtype}; it must be bool")
        self.exited = True

    def visit_BufferStore(self, s: S.BufferStore) -> None:
        self._check_access("BufferStore to", s.buffer, s.indices)
        self.visit(s.value)
        for i in s.indices:
            self.visit(i)
        value_t, buffer_t = s.value.dtype.element_of(), s.buffer.dtype.element_of()
        same_bits_int = value_t.is_integer and buffer_t.is_integer and value_t.bits == buffer_t.bits
        if value_t != buffer_t and not same_bits_int:  # int32 into uint32 is the same bits
            self.err(f"BufferStore to `{s.buffer.name}` stores a {s.value.dtype} value into a "
                     f"{s.buffer.dtype} buffer; cast it first")

    def visit_TilePrimitiveCall(self, s: S.TilePrimitiveCall) -> None:
        if s.op.category is not OpCategory.TILE_PRIMITIVE:
            self.err(f"TilePrimitiveCall of `{s.op.name}`: the op is a {s.op.category.value}, not a tile primitive")
        for a in s.args:
            self.visit(a)

    # -- expressions -----------------------------------------------------------------------
    def visit_Var(self, v: E.Var) -> None:
        if self.func is not None and id(v) not in self.defined:
            self.err(f"variable `{v.name}` is used before it is defined")

    def visit_IntImm(self, e: E.IntImm) -> None:
        if e.dtype.is_integer and e.dtype.lanes == 1:
            lo, hi = E.int_range(e.dtype)
            if not lo <= e.value <= hi:
                self.err(f"integer literal {e.value} does not fit in {e.dtype}")

    def visit_BufferLoad(self, e: E.BufferLoad) -> None:
        self._check_access("BufferLoad from", e.buffer, e.indices)
        for i in e.indices:
            self.visit(i)

    def visit_BufferRegion(self, r: BufferRegion) -> None:
        self._check_buffer_defined(r.buffer)
        for rg in r.region:
            self.visit(rg.min)
            self.visit(rg.extent)

    def visit_Buffer(self, b: Buffer) -> None:
        self._check_buffer_defined(b)

    def visit_BinaryOp(self, e: E.BinaryOp) -> None:
        self.visit(e.a)
        # the right side of `and`/`or` runs only when the left side lets it
        conditional = isinstance(e, (E.And, E.Or))
        self.guarded += conditional
        try:
            self.visit(e.b)
        finally:
            self.guarded -= conditional
        if e.a.dtype != e.b.dtype:
            self.err(f"{type(e).__name__} mixes {e.a.dtype} and {e.b.dtype}; operands must have one type")
        if isinstance(e, (E.Div, E.Mod, E.FloorDiv, E.FloorMod)) and e.dtype.is_integer \
                and isinstance(e.b, E.IntImm) and e.b.value == 0:
            self.err(f"integer division by zero: `{_text(e)}`")

    def visit_Select(self, e: E.Select) -> None:
        self.visit(e.condition)
        self._visit_branches([e.true_value, e.false_value])

    def visit_Call(self, e: E.Call) -> None:
        if e.op.category is OpCategory.TILE_PRIMITIVE:
            self.err(f"tile primitive `{e.op.name}` is used as an expression; call it as a statement (Tx.{e.op.printer_name})")
        if e.op.name == "tirx.if_then_else" and e.args:
            self.visit(e.args[0])
            self._visit_branches(e.args[1:])
        else:
            for a in e.args:
                self.visit(a)
        if e.op.name in _EXITS:
            self.exited = True

    def _visit_branches(self, branches: list[Any]) -> None:
        self.guarded += 1
        try:
            for b in branches:
                self.visit(b)
        finally:
            self.guarded -= 1

    # -- rules over buffers ----------------------------------------------------------------
    def _check_buffer_defined(self, b: Buffer) -> None:
        if self.func is not None and id(b) not in self.defined:
            self.err(f"buffer `{b.name}` is used before it is defined (declare it with T.alloc_buffer, "
                     f"T.decl_buffer or as a parameter)")

    def _check_shape(self, b: Buffer, span: Span | None) -> None:
        if b.dtype.is_void:
            self.err(f"buffer `{b.name}` has dtype void; a buffer holds values", span)
        for k, dim in enumerate(b.shape):
            if not isinstance(dim, E.PrimExpr) or not dim.dtype.is_integer or dim.dtype.lanes != 1:
                what = dim.dtype if isinstance(dim, E.PrimExpr) else type(dim).__name__
                self.err(f"buffer `{b.name}`: extent {k} is a {what} value; buffer extents must be "
                         "integers", span)
            elif isinstance(dim, E.IntImm) and dim.value < 1:
                self.err(f"buffer `{b.name}`: extent {k} is {dim.value}; buffer extents must be at "
                         "least 1", span)
        for k, st in enumerate(b.strides):
            if not (isinstance(st, E.PrimExpr) and st.dtype.is_integer):
                self.err(f"buffer `{b.name}`: stride {k} is not an integer", span)

    def _check_param_span(self, b: Buffer) -> None:
        """A parameter may not reach past the array the caller passes (its shape's elements):
        the argument check knows the shape and strides, the kernel would write beyond them."""
        if not (isinstance(b.elem_offset, E.IntImm) and b.elem_offset.value == 0):
            self.err(f"parameter buffer `{b.name}` has elem_offset {_text(b.elem_offset)}; an "
                     "argument array starts at its first element (pass a slice instead)", b.span)
        if b.layout is None or not hasattr(b.layout, "span"):
            return
        try:
            span = b.layout.span("m")
        except Exception:  # noqa: BLE001 - a layout without a memory axis: nothing to compare
            return
        numel = 1
        for d in b.shape:
            if not isinstance(d, E.IntImm):
                return
            numel *= d.value
        if isinstance(span, E.IntImm) and span.value > numel:
            self.err(f"parameter buffer `{b.name}`: its layout reaches element {span.value - 1} "
                     f"but an argument of shape ({', '.join(str(_const(d)) for d in b.shape)}) "
                     f"holds {numel}; give the layout strides that stay inside the shape",
                     b.span)

    def _check_access(self, what: str, b: Buffer, indices: list[E.PrimExpr]) -> None:
        self._check_buffer_defined(b)
        if len(indices) != len(b.shape) and not (b.layout is not None and len(indices) == 1):
            n = len(indices)
            self.err(f"{what} `{b.name}` has {n} index{'es' if n != 1 else ''} but the buffer has "
                     f"{len(b.shape)} dimension{'s' if len(b.shape) != 1 else ''}")
            return
        bad = False
        for i in indices:
            if not (i.dtype.element_of().is_integer):
                bad = True
                self.err(f"{what} `{b.name}` uses a {i.dtype} index; indices must be integers")
        if not bad and len(indices) == len(b.shape) and not self.guarded and not self.exited:
            self._check_bounds(what, b, indices)

    def _check_bounds(self, what: str, b: Buffer, indices: list[E.PrimExpr]) -> None:
        for k, (index, dim) in enumerate(zip(indices, b.shape)):
            extent = _const(dim)
            reach = affine_range(index, self.ranges)
            if extent is None or reach is None:
                continue
            lo, hi = reach
            if lo >= 0 and hi < extent:
                continue
            value = lo if lo < 0 else hi
            shape = ", ".join(str(_const(d) if _const(d) is not None else "?") for d in b.shape)
            shape += "," if len(b.shape) == 1 else ""
            self.err(f"{what} `{b.name}` is out of bounds: index `{_text(index)}` reaches {value} "
                     f"but dimension {k} of shape ({shape}) has extent {extent}")


def _const(e: Any) -> int | None:
    return e.value if isinstance(e, E.IntImm) else None


def _text(e: E.PrimExpr) -> str:
    try:
        return e.script()
    except Exception:  # a message must not fail because the index does not print
        return type(e).__name__


def _has_exit(body: S.Stmt) -> bool:
    """Whether ``body`` may leave early (break, continue, return, assert)."""
    found = False

    class _Find(Visitor):
        def visit_AssertStmt(self, s: S.AssertStmt) -> None:
            nonlocal found
            found = True

        def visit_Call(self, c: E.Call) -> None:
            nonlocal found
            if c.op.name in _EXITS:
                found = True
            else:
                self.generic_visit(c)

        def visit_BufferLoad(self, e: E.BufferLoad) -> None:
            return  # indices hold no exits

    _Find().visit(body)
    return found


def _format(span: Span | None, msg: str) -> str:
    return f"{span}: {msg}" if span is not None else msg


def verify_errors(node: Any) -> list[str]:
    """Every rule that ``node`` breaks, as messages (``file:line:col: ...`` when located)."""
    v = _Verifier()
    try:
        v.visit(node)
    except RecursionError as exc:
        raise depth_error(exc, "verify") from None
    return [_format(span, msg) for span, msg in v.errors]


def verify(node: Any) -> None:
    """Raise :class:`~tvm.error.IRVerifyError` listing the broken rules, if any; each located
    rule shows its source line."""
    v = _Verifier()
    try:
        v.visit(node)
    except RecursionError as exc:
        raise depth_error(exc, "verify") from None
    if v.errors:
        shown = [msg if span is None else format_location(msg, span.filename, span.line,
                                                            span.column, span.text)
                 for span, msg in v.errors]
        raise IRVerifyError("IR verification failed:\n  " + "\n  ".join(
            s.replace("\n", "\n  ") for s in shown))
