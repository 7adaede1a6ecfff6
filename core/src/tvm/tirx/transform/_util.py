"""Helpers shared by the TIRx passes."""

from __future__ import annotations

from typing import Any

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import PrimFunc
from ...ir.visitor import Visitor
from ...target import Target

__all__ = ["contains", "is_device_target", "is_no_op", "no_op", "target_of"]


def target_of(func: PrimFunc | None = None, ctx: Any = None) -> Any:
    """The target a function compiles for: its ``target`` attribute, else the PassContext's
    ``config["target"]``, else ``Target.current()``; None when none is known."""
    found = func.attrs.get("target") if func is not None else None
    if found is None and ctx is not None:
        found = ctx.config.get("target")
    if found is None:
        found = Target.current()
    if found is None or isinstance(found, Target):
        return found
    return Target(found)


def is_device_target(target: Any) -> bool:
    """Whether code for ``target`` runs on a device separate from the host (needs a launch).

    Decided by the kind's ``device_type`` (anything but ``"cpu"``); kinds without one count as
    device targets unless the kind is ``c``, the host target."""
    if target is None:
        return False
    kind = target.kind
    device_type = getattr(kind, "device_type", None)
    if device_type is not None:
        return device_type != "cpu"
    return kind.name != "c"


def no_op() -> S.Stmt:
    return S.Evaluate(E.IntImm("int32", 0))


def is_no_op(s: S.Stmt | None) -> bool:
    if s is None:
        return True
    if isinstance(s, S.Evaluate):
        return isinstance(s.value, (E.IntImm, E.FloatImm))
    if isinstance(s, S.SeqStmt):
        return all(is_no_op(x) for x in s.seq)
    return False


class _Finder(Visitor):
    def __init__(self, pred: Any) -> None:
        self.pred = pred
        self.found = False

    def visit(self, node: Any) -> None:
        if self.found:
            return
        if self.pred(node):
            self.found = True
            return
        super().visit(node)


def contains(node: Any, pred: Any) -> bool:
    """Whether any node under ``node`` (itself included) satisfies ``pred``."""
    finder = _Finder(pred)
    finder.visit(node)
    return finder.found


def declares_at_top(s: S.Stmt) -> bool:
    """Whether a sequence declares something (buffer, kernel id) for the rest of its block, so
    that flattening it into an outer sequence would widen that declaration's scope."""
    if not isinstance(s, S.SeqStmt):
        return False
    return any(isinstance(x, (S.AllocBuffer, S.DeclBuffer, S.ScopeIdDef)) for x in s.seq)


def flatten_seq(stmts: list[S.Stmt]) -> S.Stmt:
    """One statement from ``stmts``: nested sequences are spliced in (unless that would widen
    a declaration's scope), no-ops dropped; an empty result is a no-op."""
    flat: list[S.Stmt] = []
    last = len(stmts) - 1
    for k, s in enumerate(stmts):
        if is_no_op(s):
            continue
        if isinstance(s, S.SeqStmt) and (k == last or not declares_at_top(s)):
            inner = flatten_seq(s.seq)
            if isinstance(inner, S.SeqStmt) and (k == last or not declares_at_top(inner)):
                flat.extend(inner.seq)
            elif not is_no_op(inner):
                flat.append(inner)
            continue
        flat.append(s)
    if not flat:
        return no_op()
    if len(flat) == 1:
        return flat[0]
    return S.SeqStmt(flat)
