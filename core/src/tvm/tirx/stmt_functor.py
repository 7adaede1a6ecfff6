"""The seed's statement functors (``tvm.tirx.stmt_functor``), over :mod:`tvm.ir.visitor`.

``StmtExprVisitor`` / ``StmtExprMutator`` (and the statement-only ``StmtVisitor`` /
``StmtMutator``) dispatch a node to ``visit_<name>_`` with the seed's names (``visit_for_``,
``visit_buffer_store_``, ``visit_add_``, ``visit_seqstmt_``, ...); the default of each walks
(or rebuilds) the node's children, so an override calls ``super().visit_for_(op)`` to go on.
``visit_stmt`` and ``visit_expr`` dispatch any node. ``ir_transform``, ``post_order_visit``
and ``substitute`` are the seed's free functions.

A statement's default walk is the seed's: its expressions go to ``visit_expr`` (which a
``StmtVisitor`` / ``StmtMutator`` leaves alone and a subclass may override), its statements to
``visit_stmt`` and its buffer regions to ``visit_buffer_region_``, in the seed's order; what
the seed does not walk is not visited either (a loop's variable, a store's buffer, a block's
name).

Where the seed's node holds an expression and ours a Python number (the lane count of a Ramp
or a Broadcast), the functors visit it as the int32 immediate the seed holds, and
``visit_expr`` takes a Python number as that immediate. A SizeVar goes to ``visit_var_``
unless ``visit_size_var_`` is overridden.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import BufferRegion, Range
from ..ir.node import Node
from ..ir.visitor import Mutator, Visitor, post_order_visit, substitute

__all__ = ["ExprMutator", "ExprVisitor", "StmtExprMutator", "StmtExprVisitor", "StmtMutator",
           "StmtVisitor", "ir_transform", "post_order_visit", "substitute"]

#: our node classes whose seed method name is not the snake case of the class name
_SEED_NAMES = {"SeqStmt": "seqstmt", "AttrStmt": "attr", "AssertStmt": "assert",
               "LetStmt": "bind", "Bind": "bind", "TilePrimitiveCall": "op_call",
               "SBlock": "block", "SBlockRealize": "block_realize", "FloorDiv": "floordiv",
               "FloorMod": "floormod", "EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le",
               "GT": "gt", "GE": "ge"}


#: the fields each statement's default walk visits, in the seed's order (the rest are not
#: visited); a node not listed walks all its fields
_WALK = {
    "Evaluate": ("value",), "Bind": ("value",), "LetStmt": ("value", "body"),
    "AttrStmt": ("value", "body"), "AssertStmt": ("condition", "message"),
    "For": ("min", "extent", "body"), "While": ("condition", "body"),
    "BufferStore": ("value", "indices"), "IfThenElse": ("condition", "then_case", "else_case"),
    "SeqStmt": ("seq",), "DeclBuffer": ("body",),
    "SBlock": ("iter_vars", "reads", "writes", "init", "body"),
    "SBlockRealize": ("iter_values", "predicate", "block"),
    "TilePrimitiveCall": ("args", "config"), "BufferRegion": ("region",),
}


def _snake(name: str) -> str:
    return _SEED_NAMES.get(name) or re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _node_classes() -> list[type]:
    out: list[type] = []
    for module in (S, E):
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Node) and value.__module__ == module.__name__
                    and value.__name__ not in ("Stmt", "PrimExpr", "BinaryOp", "CmpOp")):
                out.append(value)
    return [*out, BufferRegion]


_METHODS = {cls.__name__: f"visit_{_snake(cls.__name__)}_" for cls in _node_classes()}


def _method(node: Any) -> str | None:
    for cls in type(node).__mro__:
        name = _METHODS.get(cls.__name__)
        if name is not None:
            return name
    return None


def _as_expr(value: Any) -> Any:
    """A Python number as the immediate it stands for (the seed holds lane counts as IntImm)."""
    return E.convert(value) if isinstance(value, (int, float)) else value


def _with_defaults(cls: type, default: Callable[[Any, Any], Any]) -> type:
    """Give ``cls`` a ``visit_<name>_`` for every node (``default``), for overrides to extend."""
    for name in _METHODS.values():
        if name not in vars(cls):
            setattr(cls, name, default)
    return cls


class StmtExprVisitor(Visitor):
    """Visits statements and expressions; override ``visit_<name>_(self, op)``."""

    _skip: tuple[type, ...] = ()

    def visit(self, node: Any) -> None:
        if isinstance(node, self._skip):
            return
        name = _method(node) if isinstance(node, Node) else None
        if name is None:
            super().visit(node)
        else:
            getattr(self, name)(node)

    def __call__(self, node: Any) -> None:
        self.visit(node)

    def visit_stmt(self, stmt: Any) -> None:
        self.visit(stmt)

    def visit_expr(self, expr: Any) -> None:
        self.visit(_as_expr(expr))

    def _children(self, op: Any) -> None:
        names = _WALK.get(type(op).__name__)
        if names is None:
            self.generic_visit(op)
            return
        for name in names:
            self._walk(getattr(op, name))

    def _walk(self, value: Any) -> None:
        """One child of a statement, as the seed's walk hands it on."""
        if isinstance(value, E.PrimExpr):
            self.visit_expr(value)
        elif isinstance(value, S.Stmt):
            self.visit_stmt(value)
        elif isinstance(value, BufferRegion):
            self.visit_buffer_region_(value)  # type: ignore[attr-defined]  # by _with_defaults
        elif isinstance(value, Range):
            self.visit_expr(value.min)
            self.visit_expr(value.extent)
        elif isinstance(value, E.IterVar):
            self._walk(value.dom)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self._walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                self._walk(item)

    def visit_size_var_(self, op: E.SizeVar) -> None:
        self.visit_var_(op)  # type: ignore[attr-defined]  # installed by _with_defaults

    def visit_ramp_(self, op: E.Ramp) -> None:
        self.visit(op.base)
        self.visit(op.stride)
        self.visit_expr(op.lanes)

    def visit_broadcast_(self, op: E.Broadcast) -> None:
        self.visit(op.value)
        self.visit_expr(op.lanes)


class StmtExprMutator(Mutator):
    """Rewrites statements and expressions; override ``visit_<name>_(self, op)`` to return the
    replacement (``super().visit_<name>_(op)`` rebuilds the node from its visited children)."""

    _skip: tuple[type, ...] = ()

    def visit(self, node: Any) -> Any:
        if isinstance(node, self._skip):
            return node
        name = _method(node) if isinstance(node, Node) else None
        if name is None:
            return super().visit(node)
        return getattr(self, name)(node)

    def __call__(self, node: Any) -> Any:
        return self.visit(node)

    def visit_stmt(self, stmt: Any) -> Any:
        return self.visit(stmt)

    def visit_expr(self, expr: Any) -> Any:
        return self.visit(_as_expr(expr))

    def _children(self, op: Any) -> Any:
        names = _WALK.get(type(op).__name__)
        if names is None:
            return self.generic_visit(op)
        changes = {}
        for name in names:
            value = getattr(op, name)
            new = self._walk(value)
            if new is not value:
                changes[name] = new
        return op.with_fields(**changes) if changes else op

    def _walk(self, value: Any) -> Any:
        """One child of a statement, rewritten as the seed's walk hands it on."""
        if isinstance(value, E.PrimExpr):
            return self.visit_expr(value)
        if isinstance(value, S.Stmt):
            return self.visit_stmt(value)
        if isinstance(value, BufferRegion):
            return self.visit_buffer_region_(value)  # type: ignore[attr-defined]  # by _with_defaults
        if isinstance(value, Range):
            lo, ext = self.visit_expr(value.min), self.visit_expr(value.extent)
            return value.with_fields(min=lo, extent=ext)
        if isinstance(value, E.IterVar):
            return value.with_fields(dom=self._walk(value.dom))
        if isinstance(value, (list, tuple)):
            items = [self._walk(item) for item in value]
            same = all(a is b for a, b in zip(items, value))
            return value if same else type(value)(items)
        if isinstance(value, dict):
            new = {k: self._walk(v) for k, v in value.items()}
            return value if all(new[k] is value[k] for k in value) else new
        return value

    def visit_size_var_(self, op: E.SizeVar) -> Any:
        return self.visit_var_(op)  # type: ignore[attr-defined]  # installed by _with_defaults

    def visit_ramp_(self, op: E.Ramp) -> Any:
        base, stride = self.visit(op.base), self.visit(op.stride)
        lanes = self._lanes(op)
        if base is op.base and stride is op.stride and lanes == op.lanes:
            return op
        return E.Ramp(base, stride, lanes)

    def visit_broadcast_(self, op: E.Broadcast) -> Any:
        value = self.visit(op.value)
        lanes = self._lanes(op)
        if value is op.value and lanes == op.lanes:
            return op
        return E.Broadcast(value, lanes)

    def _lanes(self, op: E.Ramp | E.Broadcast) -> int:
        """The node's lane count, visited as the immediate the seed holds; it must stay one."""
        new = self.visit_expr(op.lanes)
        if not isinstance(new, E.IntImm):
            raise TypeError(f"{type(op).__name__}: the mutator turned the lane count {op.lanes} "
                            f"into {new!r}; a lane count must stay an integer constant")
        return new.value


class StmtVisitor(StmtExprVisitor):
    """Visits statements only (expressions are not entered)."""

    _skip = (E.PrimExpr,)


class StmtMutator(StmtExprMutator):
    """Rewrites statements only (expressions are kept as they are)."""

    _skip = (E.PrimExpr,)


class ExprVisitor(StmtExprVisitor):
    """Visits expressions (a statement given to it is walked for its expressions)."""


class ExprMutator(StmtExprMutator):
    """Rewrites expressions."""


for _cls in (StmtExprVisitor, StmtExprMutator):
    _with_defaults(_cls, _cls._children)  # type: ignore[attr-defined]


def _type_names(only_enable: Sequence[str] | None) -> set[str] | None:
    """``["tirx.AttrStmt", "tir.For"]`` -> {"AttrStmt", "For"} (None: every node)."""
    if only_enable is None:
        return None
    return {str(key).rsplit(".", 1)[-1] for key in only_enable}


def ir_transform(stmt: Any, preorder: Callable[[Any], Any] | None,
                 postorder: Callable[[Any], Any] | None,
                 only_enable: Sequence[str] | None = None) -> Any:
    """Rewrite ``stmt`` bottom up: ``preorder(node)`` first (a non-None result replaces the node
    and its children are not visited), then the children, then ``postorder(node)`` on the node
    with its new children (a non-None result replaces it). ``only_enable``: the type keys
    (``"tirx.AttrStmt"``) the callbacks see; None, all."""
    enabled = _type_names(only_enable)

    def wanted(node: Any) -> bool:
        return enabled is None or any(c.__name__ in enabled for c in type(node).__mro__)

    class _Transform(Mutator):
        def visit(self, node: Any) -> Any:
            if not isinstance(node, Node):
                return super().visit(node)
            if preorder is not None and wanted(node):
                early = preorder(node)
                if early is not None:
                    return early
            new = self.generic_visit(node)
            if postorder is not None and wanted(new):
                late = postorder(new)
                if late is not None:
                    return late
            return new

    return _Transform().visit(stmt)
