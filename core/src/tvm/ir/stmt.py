"""Statements."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from .buffer import Buffer, BufferRegion
from .expr import PrimExpr, StringImm, Var, convert
from .node import Node
from .op import Op
from .span import Span

__all__ = [
    "EXEC_SCOPES", "AllocBuffer", "AssertStmt", "AttrStmt", "BufferStore", "DeclBuffer",
    "Evaluate", "For", "ForKind", "IfThenElse", "LetStmt", "SCOPE_ID_KINDS", "ScopeIdDef",
    "SeqStmt", "Stmt", "TilePrimitiveCall", "seq",
]


class Stmt(Node):
    """Base of statements."""

    #: where the node was written (the parser sets it on every statement and call); not part
    #: of the structure: equality, hashing and printing ignore it, rewrites keep it
    span: Span | None = None


class BufferStore(Stmt):
    _fields = ("buffer", "value", "indices")

    def __init__(self, buffer: Buffer, value: Any, indices: Sequence[Any]) -> None:
        self.buffer = buffer
        self.value = convert(value, buffer.dtype)
        self.indices = [convert(i) for i in indices]


class Evaluate(Stmt):
    """Evaluate an expression for its side effects (usually a :class:`Call`)."""

    _fields = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = convert(value)


class SeqStmt(Stmt):
    _fields = ("seq",)

    def __init__(self, seq: Sequence[Stmt]) -> None:
        self.seq = list(seq)

    def __len__(self) -> int:
        return len(self.seq)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.seq)


def seq(stmts: Sequence[Stmt]) -> Stmt:
    """One statement from several: flattens nested sequences; a single one is returned as is."""
    flat: list[Stmt] = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif s is not None:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(flat)


class ForKind(enum.Enum):
    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"


class For(Stmt):
    """``for loop_var in [min, min + extent)``. A thread-bound loop names its ``thread_tag``
    (``blockIdx.x``, ``threadIdx.x``, ...)."""

    _fields = ("loop_var", "min", "extent", "kind", "body", "thread_tag", "annotations")

    def __init__(self, loop_var: Var, min: Any, extent: Any, kind: ForKind, body: Stmt,  # noqa: A002
                 *, thread_tag: str | None = None, annotations: dict[str, Any] | None = None) -> None:
        self.loop_var = loop_var
        self.min = convert(min, loop_var.dtype)
        self.extent = convert(extent, loop_var.dtype)
        self.kind = kind
        self.body = body
        self.thread_tag = thread_tag
        self.annotations = dict(annotations or {})


class IfThenElse(Stmt):
    _fields = ("condition", "then_case", "else_case")

    def __init__(self, condition: Any, then_case: Stmt, else_case: Stmt | None = None) -> None:
        self.condition = convert(condition)
        self.then_case = then_case
        self.else_case = else_case


class LetStmt(Stmt):
    """Bind ``var = value`` for ``body``."""

    _fields = ("var", "value", "body")

    def __init__(self, var: Var, value: Any, body: Stmt) -> None:
        self.var = var
        self.value = convert(value, var.dtype)
        self.body = body


class AttrStmt(Stmt):
    """Attach ``attr_key = value`` (about ``node``, may be None) to ``body``."""

    _fields = ("node", "attr_key", "value", "body")

    def __init__(self, node: Any, attr_key: str, value: Any, body: Stmt) -> None:
        self.node = node
        self.attr_key = attr_key
        self.value = value if isinstance(value, (PrimExpr, Node)) else convert(value)
        self.body = body


class AssertStmt(Stmt):
    """Check ``condition`` at run time; fail with ``message`` otherwise."""

    _fields = ("condition", "message")

    def __init__(self, condition: Any, message: Any) -> None:
        self.condition = convert(condition)
        self.message = message if isinstance(message, PrimExpr) else StringImm(str(message))


class AllocBuffer(Stmt):
    """Allocate ``buffer`` (in its storage scope) for the rest of the enclosing block."""

    _fields = ("buffer", "annotations")

    def __init__(self, buffer: Buffer, annotations: dict[str, Any] | None = None) -> None:
        self.buffer = buffer
        self.annotations = dict(annotations or {})


class DeclBuffer(Stmt):
    """Declare ``buffer`` as a view of existing memory (its ``data`` pointer) for the rest of
    the enclosing block."""

    _fields = ("buffer",)

    def __init__(self, buffer: Buffer) -> None:
        self.buffer = buffer


SCOPE_ID_KINDS = ("cta_id", "cluster_id", "cta_id_in_cluster", "thread_id", "warp_id", "lane_id",
                  "warpgroup_id", "thread_id_in_wg", "warp_id_in_wg")


class ScopeIdDef(Stmt):
    """The kernel form's index definitions, e.g. ``bx, by = T.cta_id([32, 4])``: defines
    ``vars`` with the given ``extents`` for the rest of the kernel."""

    _fields = ("kind", "vars", "extents")

    def __init__(self, kind: str, vars: Sequence[Var], extents: Sequence[Any]) -> None:  # noqa: A002
        if kind not in SCOPE_ID_KINDS:
            raise ValueError(f"unknown scope id kind {kind!r}; expected one of {SCOPE_ID_KINDS}")
        if len(vars) != len(extents):
            raise ValueError(f"{kind}: {len(vars)} variables for {len(extents)} extents")
        self.kind = kind
        self.vars = list(vars)
        self.extents = [convert(e) for e in extents]


EXEC_SCOPES = ("thread", "warp", "warpgroup", "cta", "cluster")


class TilePrimitiveCall(Stmt):
    """A call of a tile primitive (``tirx.tile.<op>``) at one execution scope.

    ``args`` are buffers, buffer regions, expressions or Python constants; ``scope`` is one of
    ``thread``, ``warp``, ``warpgroup``, ``cta``, ``cluster``; ``dispatch`` forces a variant;
    ``workspace`` maps names to scratch buffers; ``config`` holds static options.
    """

    _fields = ("op", "args", "scope", "dispatch", "workspace", "config")

    def __init__(self, op: Any, args: Sequence[Any], *, scope: str = "thread",
                 dispatch: str | None = None, workspace: dict[str, Any] | None = None,
                 config: dict[str, Any] | None = None) -> None:
        if scope not in EXEC_SCOPES:
            raise ValueError(f"unknown execution scope {scope!r}; expected one of {EXEC_SCOPES}")
        self.op = Op.get(op) if isinstance(op, str) else op
        self.args = [a if isinstance(a, (Buffer, BufferRegion, PrimExpr, Node)) or a is None
                     else _const_arg(a) for a in args]
        self.scope = scope
        self.dispatch = dispatch
        self.workspace = dict(workspace or {})
        self.config = dict(config or {})

    _REPLACEABLE = frozenset(("op", "args", "workspace", "config", "dispatch", "scope"))

    def replace(self, **changes: Any) -> TilePrimitiveCall:
        unknown = sorted(set(changes) - self._REPLACEABLE)
        if unknown:
            raise TypeError(f"Unknown field(s) for TilePrimitiveCall.replace: {unknown}")
        kw = {k: getattr(self, k) for k in self._REPLACEABLE}
        kw.update(changes)
        new = TilePrimitiveCall(kw.pop("op"), kw.pop("args"), **kw)
        new.span = self.span
        return new

    def with_workspace(self, workspace: dict[str, Any]) -> TilePrimitiveCall:
        return self.replace(workspace=workspace)

    @property
    def op_name(self) -> str:
        return self.op.name.removeprefix("tirx.tile.")


def _const_arg(a: Any) -> Any:
    if isinstance(a, (bool, int, float)):
        return convert(a)
    if isinstance(a, str):
        return StringImm(a)
    if isinstance(a, (list, tuple)):
        return [(_const_arg(x) if not isinstance(x, Node) else x) for x in a]
    return a
