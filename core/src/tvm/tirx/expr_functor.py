"""The seed's module path ``tvm.tirx.expr_functor``: ``ExprVisitor`` and ``ExprMutator``.

They are the expression functors of :mod:`tvm.tirx.stmt_functor` (one dispatch for
statements and expressions): override ``visit_<name>_(self, op)`` (``visit_add_``,
``visit_producer_load_``, ...) and call ``self.visit_expr(child)`` or
``super().visit_<name>_(op)`` to go on. A mutator returns the node itself when no child
changed.
"""

from __future__ import annotations

from .stmt_functor import ExprMutator, ExprVisitor

__all__ = ["ExprMutator", "ExprVisitor"]
