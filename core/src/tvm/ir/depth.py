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
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from ..error import IRDepthError
from .node import Node
from .span import Span
from .stmt import Stmt

__all__ = ["MAX_DEPTH", "depth_error", "ir_depth", "recursion_guard"]

#: The deepest nesting of IR nodes (expressions inside statements inside loops ...) that the
#: parser accepts; every recursive algorithm over IR handles it with room to spare.
MAX_DEPTH = 160


def ir_depth(node: Any) -> tuple[int, Span | None]:
    """The nesting depth of ``node`` (a node counts 1, its deepest child path adds to it) and
    the span of the innermost marked statement on the deepest path. Iterative: safe on any
    depth."""
    best, best_span = 0, None
    stack: list[tuple[Any, int, Span | None]] = [(node, 0, None)]
    while stack:
        obj, depth, span = stack.pop()
        if isinstance(obj, Node):
            depth += 1
            if isinstance(obj, Stmt):
                span = obj.span or span
            if depth > best:
                best, best_span = depth, span
            stack.extend((value, depth, span) for _, value in obj.fields())
        elif isinstance(obj, (list, tuple)):
            stack.extend((item, depth, span) for item in obj)
        elif isinstance(obj, dict):
            stack.extend((item, depth, span) for item in obj.values())
    return best, best_span


def too_deep_message(what: str) -> str:
    return (f"{what}: the IR is nested too deeply for tvm's recursive algorithms (Python's "
            f"recursion limit is {sys.getrecursionlimit()} frames; scripts may nest at most "
            f"{MAX_DEPTH} levels). Split long expressions into parts bound to variables "
            "(`s = a + b` ...) or use loops over buffers instead of unrolled chains")


def depth_error(exc: RecursionError, what: str) -> IRDepthError:
    """``exc`` as an :class:`IRDepthError` (itself if it already is one)."""
    if isinstance(exc, IRDepthError):
        return exc
    return IRDepthError(too_deep_message(what))


@contextlib.contextmanager
def recursion_guard(what: str) -> Iterator[None]:
    """Turn a ``RecursionError`` raised inside the block into an :class:`IRDepthError`."""
    try:
        yield
    except RecursionError as exc:
        raise depth_error(exc, what) from None
