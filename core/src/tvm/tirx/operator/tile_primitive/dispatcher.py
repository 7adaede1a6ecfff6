"""The tile-primitive dispatcher: variants registered per (op, target kind), chosen per call.

A *variant* is a function ``impl(op_call, sctx) -> PrimFunc``:

- ``op_call`` is the :class:`~tvm.ir.TilePrimitiveCall` being lowered (its ``args`` in the
  op's parameter order, defaults filled by the facade; ``scope``, ``workspace``, ``config``);
- ``sctx`` is its :class:`DispatchContext` (target, ``scope_kind``, thread extents and indices,
  barriers, allocation/init callbacks, a per-function cache).

It returns a ``PrimFunc`` whose body replaces the call, or raises :func:`fail` to decline. The
simplest form has **no parameters**: the body reads and writes the call's own buffers directly
(``op_call.args``). A variant may instead declare parameters, bound in order to the call's
arguments: a buffer parameter binds to a ``Buffer`` or a ``BufferRegion`` of the same rank (its
element ``[i, j]`` is the region's ``[min0 + i, min1 + j]``), a scalar parameter to an
expression argument. The body may itself contain tile primitive calls; they are dispatched in
turn.

Variants of one (op, kind) pair, together with those registered for every kind (``"*"``), are
tried by ``(-priority, variant name)``; a kind's own variant hides a ``"*"`` variant of the same
name. Each variant's predicates (``when=[...]``) run first; the first variant whose predicates
pass and whose impl returns a PrimFunc wins. ``dispatch="name"`` on the call tries only that
variant. When nothing applies, a :class:`~tvm.error.DispatchError` (a ``RuntimeError``) shows a
table of every variant and why it did not apply, then the traceback of each variant or predicate
that raised anything but :func:`fail` (a bug in it, not a decline); while lowering a parsed
kernel it points at the call's line (every error raised while lowering a call does).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .... import ir
from ...._registry import Registry, run_deferred
from ....error import DispatchError, DispatchFail, LoweringError, located, trim_internal_frames
from ....target import Target
from .common import fold_add, simplify_regions
from .dispatch_context import DispatchCallbacks, DispatchContext, ThreadInfo

__all__ = [
    "DISPATCH_REGISTRY", "DispatchCase", "DispatchOutcome", "Predicate", "dispatch",
    "fail", "get_variants", "list_registered_schedules", "lower_tile_primitives", "predicate",
    "register_dispatch", "run_dispatch",
]

ANY_TARGET = "*"
MAX_NESTING = 16

Impl = Callable[[ir.TilePrimitiveCall, DispatchContext], ir.PrimFunc]


def fail(reason: str, *, fix: str = "") -> NoReturn:
    """Decline the call being dispatched; ``reason`` appears in the dispatch error table and
    ``fix`` (how to change the call so that it applies), if given, under it."""
    raise DispatchFail(reason, fix=fix)


@dataclass(frozen=True)
class Predicate:
    """A named condition on a call: ``fn(op_call, sctx, **kwargs)`` returns a bool or
    ``(bool, reason)``, or raises :class:`~tvm.error.DispatchFail` with the reason."""

    name: str
    fn: Callable[..., Any]
    kwargs: tuple[tuple[str, Any], ...] = ()

    def check(self, op_call: ir.TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
        try:
            result = self.fn(op_call, sctx, **dict(self.kwargs))
        except DispatchFail as err:
            return False, str(err)
        if isinstance(result, tuple):
            ok, reason = (result + ("",))[:2]
            return bool(ok), str(reason or "")
        return bool(result), ""


def predicate(name: str, fn: Callable[..., Any], **kwargs: Any) -> Predicate:
    """A named predicate for ``register_dispatch(..., when=[...])``."""
    if not callable(fn):
        raise TypeError(f"predicate {name!r}: fn must be callable, got {type(fn).__name__}")
    return Predicate(name, fn, tuple(sorted(kwargs.items())))


@dataclass(frozen=True)
class DispatchCase:
    """One registered variant."""

    op_name: str
    target_kind: str
    variant: str
    priority: int
    impl: Impl
    when: tuple[Predicate, ...] = ()

    @property
    def sort_key(self) -> tuple[int, str]:
        return (-self.priority, self.variant)


DISPATCH_REGISTRY: Registry[tuple[str, str, str], DispatchCase] = Registry("dispatch variant")
"""Every variant, keyed ``(op name, target kind, variant)``; entries record their backend."""


def _resolve_op(op_name: str | ir.Op) -> ir.Op:
    if isinstance(op_name, ir.Op):
        op = op_name
    else:
        full = op_name if op_name.startswith("tirx.tile.") else f"tirx.tile.{op_name}"
        if not ir.Op.exists(full):
            raise ValueError(f"register_dispatch: {op_name!r} is not a registered tile primitive "
                             f"(expected e.g. 'copy' or 'tirx.tile.copy')")
        op = ir.Op.get(full)
    if op.category is not ir.OpCategory.TILE_PRIMITIVE:
        raise ValueError(f"register_dispatch: {op.name!r} is a {op.category.value} op, "
                         "not a tile primitive")
    return op


def _as_predicate(p: Any) -> Predicate:
    if isinstance(p, Predicate):
        return p
    if callable(p):
        return Predicate(getattr(p, "__name__", "predicate"), p)
    raise TypeError(f"when= takes predicate(name, fn) objects or callables, got {p!r}")


def register_dispatch(op_name: str | ir.Op, target_kind: str, *, variant: str, priority: int = 0,
                      when: Sequence[Any] | None = None,
                      override: bool = False) -> Callable[[Impl], Impl]:
    """Decorator: register ``impl(op_call, sctx) -> PrimFunc`` as ``variant`` of ``op_name``
    (``"copy"`` or ``"tirx.tile.copy"``) for ``target_kind`` (a kind name, or ``"*"`` for
    every kind). Returns the function unchanged."""
    op = _resolve_op(op_name)
    if not isinstance(target_kind, str) or not target_kind:
        raise ValueError(f"register_dispatch: target_kind must be a kind name or '*', got {target_kind!r}")
    if not isinstance(variant, str) or not variant:
        raise ValueError(f"register_dispatch: variant must be a non-empty name, got {variant!r}")
    preds = tuple(_as_predicate(p) for p in (when or ()))

    def deco(impl: Impl) -> Impl:
        if not callable(impl):
            raise TypeError(f"register_dispatch: {impl!r} is not callable")
        case = DispatchCase(op.name, target_kind, variant, int(priority), impl, preds)
        DISPATCH_REGISTRY.register((op.name, target_kind, variant), case, override=override)
        return impl

    return deco


def get_variants(op_name: str | ir.Op, target_kind: str) -> list[DispatchCase]:
    """The variants tried for ``op_name`` on ``target_kind``, in order."""
    run_deferred()  # the backends' variants register on first use
    op = _resolve_op(op_name)
    found: dict[str, DispatchCase] = {}
    for (name, kind, variant), case in DISPATCH_REGISTRY.items():
        if name != op.name:
            continue
        if kind == target_kind or kind == ANY_TARGET and variant not in found:
            found[variant] = case
    # a kind's own variant hides the "*" variant of the same name
    for variant in list(found):
        own = DISPATCH_REGISTRY.get((op.name, target_kind, variant))
        if own is not None:
            found[variant] = own
    return sorted(found.values(), key=lambda c: c.sort_key)


def list_registered_schedules() -> dict[str, dict[str, list[str]]]:
    """``{op name: {target kind: [variants in priority order]}}`` of everything registered."""
    run_deferred()
    table: dict[str, dict[str, list[DispatchCase]]] = {}
    for (name, kind, _), case in DISPATCH_REGISTRY.items():
        table.setdefault(name, {}).setdefault(kind, []).append(case)
    return {name: {kind: [c.variant for c in sorted(cases, key=lambda c: c.sort_key)]
                   for kind, cases in sorted(kinds.items())}
            for name, kinds in sorted(table.items())}


# -- choosing a variant ---------------------------------------------------------------------------
@dataclass
class DispatchOutcome:
    """The chosen variant and the PrimFunc it returned."""

    case: DispatchCase
    func: ir.PrimFunc

    @property
    def variant(self) -> str:
        return self.case.variant


@dataclass
class _Attempt:
    case: DispatchCase
    status: str
    reason: str
    fix: str = ""
    trace: str = ""  # the traceback of an unexpected exception (a bug in the variant)


@dataclass
class _Failure:
    op_name: str
    target_kind: str
    scope: str
    attempts: list[_Attempt] = field(default_factory=list)
    note: str = ""
    call_text: str = ""  # the call as TVMScript, where it prints

    def message(self) -> str:
        lines = [f"TIRx schedule dispatch failed: op={self.op_name} target={self.target_kind}",
                 f"scope: {self.scope}"]
        if self.call_text:
            lines.append(f"opcall: {self.call_text}")
        if self.note:
            lines.append(self.note)
        if self.attempts:
            lines.append(_table(["Variant", "Priority", "Target", "Status", "Reason"],
                                [[a.case.variant, str(a.case.priority), a.case.target_kind,
                                  a.status, a.reason] for a in self.attempts]))
        fixes = dict.fromkeys(a.fix for a in self.attempts if a.fix)
        lines += [f"fix: {fix}" for fix in fixes]
        for a in self.attempts:
            if a.trace:
                lines.append(f"traceback of variant '{a.case.variant}' ({a.case.target_kind}):")
                lines += ["  " + line for line in a.trace.rstrip().splitlines()]
        return "\n".join(lines)


def _traceback(err: BaseException) -> str:
    """``err``'s traceback from the variant's (or predicate's) own frame on: the dispatcher's
    frame that called it is left out."""
    tb = err.__traceback__.tb_next if err.__traceback__ is not None else None
    return "".join(traceback.format_exception(type(err), err, tb))


def _one_line(text: str) -> str:
    return " / ".join(part.strip() for part in str(text).splitlines() if part.strip()) or "-"


def _table(header: list[str], rows: list[list[str]]) -> str:
    rows = [[_one_line(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: list[str]) -> str:
        return "|" + "|".join(f" {c:<{w}} " for c, w in zip(cells, widths)) + "|"

    return "\n".join([rule, line(header), rule, *(line(r) for r in rows), rule])


def _try(case: DispatchCase, op_call: ir.TilePrimitiveCall, sctx: DispatchContext) -> _Attempt | ir.PrimFunc:
    for pred in case.when:
        try:
            ok, why = pred.check(op_call, sctx)
        except Exception as err:  # a broken predicate must not hide the other variants
            return _Attempt(case, "error", f"predicate '{pred.name}' raised "
                                           f"{type(err).__name__}: {err}", trace=_traceback(err))
        if not ok:
            return _Attempt(case, "rejected", f"predicate '{pred.name}'" + (f": {why}" if why else ""))
    try:
        result = case.impl(op_call, sctx)
    except DispatchFail as err:
        return _Attempt(case, "declined", str(err) or "declined", err.fix)
    except Exception as err:  # recorded in the table; the search goes on
        return _Attempt(case, "error", f"{type(err).__name__}: {err}", trace=_traceback(err))
    if result is None:
        return _Attempt(case, "declined",
                        "impl returned None; schedule must return PrimFunc or raise fail()")
    if not isinstance(result, ir.PrimFunc):
        return _Attempt(case, "error", f"impl returned {type(result).__name__}; schedule must "
                                       "return PrimFunc or raise fail()")
    return result


def dispatch(op_call: ir.TilePrimitiveCall, sctx: DispatchContext) -> DispatchOutcome:
    """Choose the variant for ``op_call``; :class:`~tvm.error.DispatchError` with the table of
    attempts if none applies."""
    kind = getattr(sctx, "target_kind", None) or sctx.target.kind.name
    cases = get_variants(op_call.op, kind)
    forced_variant = getattr(op_call, "dispatch", None)
    failure = _Failure(op_call.op.name, kind,
                       str(getattr(op_call, "scope", None) or getattr(sctx, "scope_kind", "")),
                       call_text=_call_text(op_call))
    if forced_variant:
        forced = [c for c in cases if c.variant == forced_variant]
        if not forced:
            known = ", ".join(c.variant for c in cases) or "none"
            failure.note = (f"no variant named '{forced_variant}' is registered "
                            f"(registered for this op/target: {known})")
            raise DispatchError(failure.message())
        cases = forced
    if not cases:
        failure.note = "no registered variants for this op/target"
        raise DispatchError(failure.message())
    for case in cases:
        got = _try(case, op_call, sctx)
        if isinstance(got, ir.PrimFunc):
            return DispatchOutcome(case, got)
        failure.attempts.append(got)
    raise DispatchError(failure.message())


def _call_text(op_call: Any) -> str:
    """The call as TVMScript for the failure message ('' where it cannot print)."""
    if not isinstance(op_call, ir.TilePrimitiveCall):
        return ""
    try:
        return _one_line(op_call.script())
    except Exception:  # a call whose arguments do not print: the message goes without it
        return ""


def run_dispatch(op_call: ir.TilePrimitiveCall, sctx: DispatchContext) -> ir.PrimFunc:
    """The seed's name: the PrimFunc of the variant :func:`dispatch` chooses."""
    return dispatch(op_call, sctx).func


# -- binding a variant's PrimFunc to the call -----------------------------------------------------
def bind_to_call(func: ir.PrimFunc, op_call: ir.TilePrimitiveCall) -> ir.Stmt:
    """The body of ``func`` with its parameters bound to the call's arguments (see module doc)."""
    if not func.params:
        return func.body
    if len(func.params) > len(op_call.args):
        raise TypeError(f"variant PrimFunc has {len(func.params)} parameters but "
                        f"{op_call.op.name} was called with {len(op_call.args)} arguments")
    scalars: dict[ir.Var, Any] = {}
    buffers: dict[int, tuple[ir.Buffer, ir.BufferRegion]] = {}
    for i, p in enumerate(func.params):
        arg = op_call.args[i]
        pb = func.buffer_map.get(p)
        if pb is not None:
            region = _region_for_param(pb, arg, i)
            buffers[id(pb)] = (pb, region)
            scalars[pb.data] = region.buffer.data
        elif isinstance(arg, ir.PrimExpr):
            scalars[p] = arg
        else:
            raise TypeError(f"parameter {p.name} of the variant is a scalar but argument {i} is "
                            f"{type(arg).__name__}")
    body = _Rebind(buffers).visit(func.body)
    return ir.substitute(body, scalars) if scalars else body


def _region_for_param(pb: ir.Buffer, arg: Any, i: int) -> ir.BufferRegion:
    region = arg.full_region() if isinstance(arg, ir.Buffer) else arg
    if not isinstance(region, ir.BufferRegion):
        raise TypeError(f"buffer parameter {pb.name} of the variant is bound to argument {i}, "
                        f"which is {type(arg).__name__}, not a buffer or region")
    if len(region.region) != pb.ndim:
        raise TypeError(f"buffer parameter {pb.name} has rank {pb.ndim} but argument {i} has "
                        f"rank {len(region.region)}")
    return region


class _Rebind(ir.Mutator):
    """Accesses of parameter buffers become accesses of the bound regions."""

    def __init__(self, buffers: dict[int, tuple[ir.Buffer, ir.BufferRegion]]) -> None:
        self.buffers = buffers

    def _map(self, buf: ir.Buffer, indices: list[ir.PrimExpr]
             ) -> tuple[ir.Buffer, list[ir.PrimExpr]] | None:
        hit = self.buffers.get(id(buf))
        if hit is None:
            return None
        region = hit[1]
        return region.buffer, [fold_add(r.min, i) for r, i in zip(region.region, indices)]

    def visit_BufferLoad(self, node: ir.BufferLoad) -> Any:
        indices = self.visit(node.indices)
        mapped = self._map(node.buffer, indices)
        if mapped is None:
            if indices is node.indices:
                return node
            return ir.BufferLoad(node.buffer, indices, node.dtype)
        return ir.BufferLoad(mapped[0], mapped[1], node.dtype)

    def visit_BufferStore(self, node: ir.BufferStore) -> Any:
        value, indices = self.visit(node.value), self.visit(node.indices)
        mapped = self._map(node.buffer, indices)
        if mapped is None:
            return self.generic_visit(node)
        return ir.BufferStore(mapped[0], value, mapped[1])

    def visit_BufferRegion(self, node: ir.BufferRegion) -> Any:
        hit = self.buffers.get(id(node.buffer))
        if hit is None:
            return self.generic_visit(node)
        outer = hit[1]
        ranges = [ir.Range(fold_add(o.min, self.visit(r.min)), self.visit(r.extent))
                  for o, r in zip(outer.region, node.region)]
        return ir.BufferRegion(outer.buffer, ranges)

    def visit_TilePrimitiveCall(self, node: ir.TilePrimitiveCall) -> Any:
        args = [self.buffers[id(a)][1] if isinstance(a, ir.Buffer) and id(a) in self.buffers
                else self.visit(a) for a in node.args]
        return node.replace(args=args)


# -- the lowering ---------------------------------------------------------------------------------
@trim_internal_frames
def lower_tile_primitives(func: ir.PrimFunc | ir.IRModule, target: Any = None, *,
                          trace: list[tuple[str, str, str]] | None = None) -> Any:
    """Replace every tile primitive call of ``func`` (or of every function of a module) by the
    body its chosen variant returns, and place the allocations and init statements variants
    asked for. ``target`` is a Target or a kind/tag string (default: the function's ``target``
    attribute, then ``Target.current()``). ``trace``, when given, receives ``(op, scope,
    variant)`` per dispatched call."""
    if isinstance(func, ir.IRModule):
        return ir.IRModule({name: lower_tile_primitives(f, target, trace=trace)
                            for name, f in func.functions.items()}, func.attrs)
    tgt = _as_target(target if target is not None else func.attrs.get("target"))
    lowering = _Lowering(tgt, trace)
    body = lowering.visit(func.body)
    body = _place_prologue(body, lowering.callbacks)
    return func.with_body(body)


def _as_target(target: Any) -> Any:
    if target is None:
        target = Target.current()
        if target is None:
            raise ValueError("lower_tile_primitives needs a target: pass one, set the function's "
                             "'target' attribute, or use `with tvm.target.Target(...)`")
        return target
    if isinstance(target, Target):
        return target
    if isinstance(target, (str, dict)):
        return Target(target)
    return target  # duck-typed targets (tests) need .kind.name and .keys


class _Lowering(ir.Mutator):
    def __init__(self, target: Any, trace: list[tuple[str, str, str]] | None) -> None:
        self.target = target
        self.trace = trace
        self.callbacks = DispatchCallbacks()
        self.defs: list[ir.ScopeIdDef] = []
        self.thread_loops: dict[str, tuple[ir.Var, ir.PrimExpr]] = {}
        self.in_kernel = False
        self.depth = 0
        self.loops: list[ir.Var] = []
        self.guards: list[ir.PrimExpr] = []

    def visit_SeqStmt(self, node: ir.SeqStmt) -> Any:
        # index definitions hold for the rest of the enclosing sequence
        saved, saved_kernel = len(self.defs), self.in_kernel
        out = [self.visit(s) for s in node.seq]
        del self.defs[saved:]
        self.in_kernel = saved_kernel
        if all(a is b for a, b in zip(out, node.seq)):
            return node
        return ir.seq(out)

    def visit_ScopeIdDef(self, node: ir.ScopeIdDef) -> Any:
        self.defs.append(node)
        return node

    def visit_Evaluate(self, node: ir.Evaluate) -> Any:
        if getattr(getattr(node.value, "op", None), "name", None) == "tirx.device_entry":
            self.in_kernel = True
        return node

    def visit_For(self, node: ir.For) -> Any:
        # an already lowered kernel form: threadIdx-bound loops stand for the index definitions
        tag = node.thread_tag or ""
        if node.kind is ir.ForKind.THREAD_BINDING and tag.startswith("threadIdx."):
            self.thread_loops[tag] = (node.loop_var, node.extent)
            try:
                return self.generic_visit(node)
            finally:
                del self.thread_loops[tag]
        if node.kind is ir.ForKind.THREAD_BINDING:
            return self.generic_visit(node)
        self.loops.append(node.loop_var)
        try:
            return self.generic_visit(node)
        finally:
            self.loops.pop()

    def visit_IfThenElse(self, node: ir.IfThenElse) -> Any:
        # the then-branch runs where the condition holds: calls there see it (exec context)
        condition = self.visit(node.condition)
        self.guards.append(condition)
        try:
            then_case = self.visit(node.then_case)
        finally:
            self.guards.pop()
        else_case = None if node.else_case is None else self.visit(node.else_case)
        return node.with_fields(condition=condition, then_case=then_case, else_case=else_case)

    def _thread_defs(self) -> list[ir.ScopeIdDef]:
        if not self.thread_loops:
            return self.defs
        loops = [self.thread_loops[t] for t in ("threadIdx.x", "threadIdx.y", "threadIdx.z")
                 if t in self.thread_loops]
        return [*self.defs,
                ir.ScopeIdDef("thread_id", [v for v, _ in loops], [e for _, e in loops])]

    def visit_TilePrimitiveCall(self, node: ir.TilePrimitiveCall) -> Any:
        # Errors raised while lowering the call (and the calls its variant emits) are reported
        # at the line of the user's call.
        with located(node.span):
            return self._lower_call(simplify_regions(node))

    def _lower_call(self, node: ir.TilePrimitiveCall) -> Any:
        if self.depth >= MAX_NESTING:
            raise LoweringError(f"tile primitive {node.op.name} keeps lowering to tile primitives "
                                f"(more than {MAX_NESTING} levels); a variant returns its own call?")
        threads = ThreadInfo.from_defs(self._thread_defs(), self.in_kernel)
        threads.loops = tuple(self.loops)
        threads.guards = tuple(self.guards)
        sctx = DispatchContext(self.target, node.scope, op_call=node, threads=threads,
                               callbacks=self.callbacks)
        outcome = dispatch(node, sctx)
        if self.trace is not None:
            self.trace.append((node.op.name, node.scope, outcome.variant))
        body = bind_to_call(outcome.func, node)
        if node.span is not None:
            _stamp_span(body, node.span)
        self.depth += 1
        try:
            return self.visit(body)
        finally:
            self.depth -= 1


def _stamp_span(body: ir.Stmt, span: Any) -> None:
    """Calls a variant emitted for a user's call carry that call's span, so that errors about
    them later (in codegen) point at the user's line."""

    def stamp(node: Any) -> None:
        if isinstance(node, (ir.Call, ir.TilePrimitiveCall)) and node.span is None:
            node.span = span

    ir.post_order_visit(body, stamp)


def _place_prologue(body: ir.Stmt, cb: DispatchCallbacks) -> ir.Stmt:
    if cb.empty:
        return body
    device = [ir.AllocBuffer(b) for b in cb.allocs] + list(cb.device_init)
    return _insert(body, device, list(cb.host_init))


def _insert(body: ir.Stmt, device: list[ir.Stmt], host: list[ir.Stmt]) -> ir.Stmt:
    """Device statements go after the kernel's leading index definitions (or at the start of a
    host-form body); host statements at the start, before the kernel begins."""
    if isinstance(body, (ir.AttrStmt, ir.LetStmt)):
        return body.with_fields(body=_insert(body.body, device, host))  # type: ignore[return-value]
    stmts = list(body.seq) if isinstance(body, ir.SeqStmt) else [body]
    entry = next((i for i, s in enumerate(stmts) if _is_device_entry(s)), None)
    if entry is None:
        return ir.seq([*host, *_after_decls(stmts, device)])
    head, kernel = stmts[: entry + 1], stmts[entry + 1:]
    return ir.seq([*head[:-1], *host, head[-1], *_after_decls(kernel, device)])


def _after_decls(stmts: list[ir.Stmt], extra: list[ir.Stmt]) -> list[ir.Stmt]:
    i = 0
    while i < len(stmts) and isinstance(stmts[i], (ir.ScopeIdDef, ir.DeclBuffer)):
        i += 1
    return [*stmts[:i], *extra, *stmts[i:]]


def _is_device_entry(s: ir.Stmt) -> bool:
    return isinstance(s, ir.Evaluate) and getattr(getattr(s.value, "op", None), "name", None) == "tirx.device_entry"
