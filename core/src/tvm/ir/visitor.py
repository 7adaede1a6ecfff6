"""A visitor and a mutator over IR nodes.

Both dispatch on the node's class name: define ``visit_For(self, node)`` to handle loops. The
default walks every field listed in ``_fields``. The mutator rebuilds a node only when one of its
fields changed, so untouched subtrees are shared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import expr as E
from .buffer import Buffer
from .expr import PrimExpr, Var, convert
from .node import Node

__all__ = ["BindingVisitor", "Mutator", "Visitor", "handler", "post_order_visit", "substitute"]


def handler(owner: object, prefix: str, node: object) -> Callable[[Any], Any] | None:
    """``owner``'s method ``<prefix><class name>`` for the node's class or, where it has none,
    for the nearest base class that has one (``visit_BinaryOp`` serves every binary op).

    The one dispatch rule of the visitor, the mutator, the code generators and the printer.
    """
    for cls in type(node).__mro__:
        method = getattr(owner, prefix + cls.__name__, None)
        if method is not None:
            return method
    return None


class Visitor:
    """Walks IR. Override ``visit_<ClassName>``; call ``self.generic_visit(node)`` to recurse."""

    def visit(self, node: Any) -> None:
        if isinstance(node, Node):
            method = handler(self, "visit_", node)
            if method is not None:
                method(node)
            else:
                self.generic_visit(node)
        elif isinstance(node, (list, tuple)):
            for item in node:
                self.visit(item)
        elif isinstance(node, dict):
            for item in node.values():
                self.visit(item)

    def generic_visit(self, node: Node) -> None:
        for _, value in node.fields():
            self.visit(value)



class BindingVisitor(Visitor):
    """A visitor that hands each variable a loop or a let statement binds to :meth:`bind`
    before it walks the statement."""

    def bind(self, var: Var) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement bind")

    def visit_For(self, node: Any) -> None:
        self.bind(node.loop_var)
        self.generic_visit(node)

    def visit_LetStmt(self, node: Any) -> None:
        self.bind(node.var)
        self.generic_visit(node)

class Mutator:
    """Rewrites IR. Override ``visit_<ClassName>`` to return a replacement node."""

    def visit(self, node: Any) -> Any:
        if isinstance(node, Node):
            method = handler(self, "visit_", node)
            if method is not None:
                return method(node)
            return self.generic_visit(node)
        if isinstance(node, list):
            out = [self.visit(x) for x in node]
            return node if all(a is b for a, b in zip(out, node)) else out
        if isinstance(node, tuple):
            out_t = tuple(self.visit(x) for x in node)
            return node if all(a is b for a, b in zip(out_t, node)) else out_t
        if isinstance(node, dict):
            out_d = {k: self.visit(v) for k, v in node.items()}
            return node if all(out_d[k] is node[k] for k in node) else out_d
        return node

    def generic_visit(self, node: Node) -> Node:
        changes = {}
        for name, value in node.fields():
            new = self.visit(value)
            if new is not value:
                changes[name] = new
        if not changes:
            return node
        rebuilt = node.with_fields(**changes)
        _refresh_dtype(rebuilt)
        return rebuilt

    def visit_Buffer(self, node: Buffer) -> Buffer:
        """Buffers keep their identity by default; passes that rewrite buffers override this."""
        return node


def _refresh_dtype(node: Node) -> None:
    """Keep derived dtypes right after children change (e.g. a comparison stays bool)."""
    if isinstance(node, (E.CmpOp, E.Let, E.Select, E.Not)):
        return
    if isinstance(node, E.BinaryOp) and isinstance(node.a, PrimExpr):
        object.__setattr__(node, "dtype", node.a.dtype)


def post_order_visit(node: Any, fn: Callable[[Any], None]) -> None:
    """Call ``fn`` on every node, children first."""

    class _Post(Visitor):
        def visit(self, n: Any) -> None:
            if isinstance(n, Node):
                for _, value in n.fields():
                    self.visit(value)
                fn(n)
            else:
                super().visit(n)

    _Post().visit(node)


def substitute(node: Any, vmap: Mapping[Var, Any] | Callable[[Var], Any]) -> Any:
    """Replace variables by expressions (a mapping, or a function returning None to keep)."""
    lookup: Callable[[Var], Any]
    if callable(vmap):
        lookup = vmap
    else:
        table = {id(k): v for k, v in vmap.items()}
        lookup = lambda v: table.get(id(v))  # noqa: E731

    class _Sub(Mutator):
        def visit_Var(self, v: Var) -> Any:
            new = lookup(v)
            return v if new is None else convert(new)

    return _Sub().visit(node)
