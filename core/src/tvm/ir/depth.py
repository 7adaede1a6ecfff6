"""How deeply IR nests, and what happens when it nests too deeply for recursion.

The printer, structural equality and hashing, the verifier, the passes and the code generators
walk IR recursively, a few Python frames per level. Python's recursion limit (1000 frames by
default) therefore bounds how deeply an expression or a chain of statements may nest. Two
mechanisms keep that limit from surfacing as a raw ``RecursionError``:

* :data:`MAX_DEPTH` is the nesting every one of those algorithms handles from an ordinary call
  stack. The parser measures each function it reads (:func:`ir_depth`, iteratively) and rejects
  deeper ones with a diagnostic at the deepest statement, so whatever parses also prints, parses
  back and compiles.
* :func:`recursion_guard` wraps the public entry points (``script()``, ``structural_equal``,
  ``structural_hash``, ``verify``, lowering, code generation): IR built in Python that is deeper
  still fails there with an :class:`~tvm.error.IRDepthError` that says what to do.

The limit and the guard are :mod:`tvm.ir.recursion` (no IR class: structural equality, which the
buffer and layout modules use, needs them), re-exported here; this module measures IR.
"""

from __future__ import annotations

import math
from typing import Any

from .expr import Add, Div, FloorDiv, FloorMod, Mul, Sub
from .node import Node
from .recursion import MAX_DEPTH, depth_error, recursion_guard, too_deep_message
from .span import Span
from .stmt import Stmt

__all__ = [
    "CHAIN_OPS", "CHAIN_WEIGHT", "MAX_DEPTH", "depth_error", "ir_depth", "recursion_guard",
    "too_deep_message",
]

#: What one more term of a flat chain (``a + b + c``: the left operand is the same operator)
#: costs: the printer walks such chains iteratively, the other algorithms handle chains twice
#: as long as MAX_DEPTH, so a flat sum of ~300 terms parses (issue 26).
CHAIN_WEIGHT = 0.5
#: The operators whose flat chains count so (the printer's infix operators).
CHAIN_OPS: tuple[type, ...] = (Add, Sub, Mul, Div, FloorDiv, FloorMod)


def ir_depth(node: Any) -> tuple[int, Span | None]:
    """The nesting depth of ``node`` (a node counts 1, a link of a flat chain of one binary
    operator :data:`CHAIN_WEIGHT`; its deepest child path adds to it) and the span of the
    innermost marked statement on the deepest path. Iterative: safe on any depth."""
    best: float = 0
    best_span = None
    stack: list[tuple[Any, float, Span | None, type | None]] = [(node, 0, None, None)]
    while stack:
        obj, depth, span, chain = stack.pop()
        if isinstance(obj, Node):
            depth += CHAIN_WEIGHT if chain is not None and type(obj) is chain else 1
            if isinstance(obj, Stmt):
                span = obj.span or span
            if depth > best:
                best, best_span = depth, span
            link = type(obj) if isinstance(obj, CHAIN_OPS) else None
            stack.extend((value, depth, span, link if name == "a" else None)
                         for name, value in obj.fields())
        elif isinstance(obj, (list, tuple)):
            stack.extend((item, depth, span, None) for item in obj)
        elif isinstance(obj, dict):
            stack.extend((item, depth, span, None) for item in obj.values())
    return math.ceil(best), best_span
