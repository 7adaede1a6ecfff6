"""The deepest IR tvm's recursive algorithms handle, and the guard that turns Python's
``RecursionError`` past it into an :class:`~tvm.error.IRDepthError` that says what to do.

:mod:`tvm.ir.depth` (which measures IR, and re-exports these names) says how the two fit
together; they live here, under every IR class, because structural equality (which the buffer
and layout modules use) guards its entry points with them.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from ..error import IRDepthError

__all__ = ["MAX_DEPTH", "depth_error", "recursion_guard", "too_deep_message"]

#: The deepest nesting of IR nodes (expressions inside statements inside loops ...) that the
#: parser accepts; every recursive algorithm over IR handles it with room to spare.
MAX_DEPTH = 160


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
