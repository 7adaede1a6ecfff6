"""The seed's ``tvm.script.ir_builder``: the frames its tests open around script helpers called
outside a parse (``with IRBuilder(): with tirx.prim_func(): pool.alloc_mma(...)``).

Here a script helper needs no frame: outside a parse, an allocation returns the description of
its buffer, which reads as that buffer (``.layout``, ``.shape``). :class:`IRBuilder` and
:func:`tirx.prim_func` are therefore frames that record only that they are open; building a
function statement by statement is not offered (write it as a ``@T.prim_func``), and
:meth:`IRBuilder.get` says so (docs/decisions.md, issue 28)."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

from . import tirx

__all__ = ["IRBuilder", "tirx"]

_OPEN = threading.local()


class IRBuilder:
    """A builder frame (``with IRBuilder() as ib:``)."""

    def __enter__(self) -> IRBuilder:
        stack = getattr(_OPEN, "stack", None)
        if stack is None:
            stack = _OPEN.stack = []
        stack.append(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        _OPEN.stack.pop()

    @staticmethod
    def current() -> IRBuilder:
        """The innermost open builder."""
        stack = getattr(_OPEN, "stack", None)
        if not stack:
            raise ValueError("no IRBuilder is open: use it as `with IRBuilder() as ib:`")
        return stack[-1]  # type: ignore[no-any-return]

    @staticmethod
    def is_in_scope() -> bool:
        return bool(getattr(_OPEN, "stack", None))

    def get(self) -> Any:
        raise NotImplementedError(
            "IRBuilder.get(): this tvm does not build functions statement by statement; write "
            "the function as a @T.prim_func (script helpers such as T.SMEMPool work inside an "
            "IRBuilder block and outside one alike)")
