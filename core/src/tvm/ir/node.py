"""The base class of every IR node."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

__all__ = ["Node", "set_printer"]

# What Node.script() calls: TVMScript is a layer above the IR (tvm.script.printer); `import tvm`
# installs a function that loads it on first use (tvm/__init__.py).
_PRINTER: list[Callable[..., str]] = []


def set_printer(printer: Callable[..., str]) -> None:
    """Make ``printer(node, **kwargs)`` what :meth:`Node.script` returns."""
    _PRINTER[:] = [printer]


class Node:
    """Base of expressions, statements, buffers, layouts, functions and modules.

    ``_fields`` lists, in order, the attributes that make up the node's structure: structural
    equality and hashing, the visitor and the mutator all walk exactly these. ``_def_fields``
    and ``_buffer_def_fields`` say which of them define names (:mod:`tvm.ir.structural` reads
    them, so it needs no statement, function or buffer class).
    """

    _fields: ClassVar[tuple[str, ...]] = ()
    #: the fields whose variables and buffers this node defines (a loop's variable, a let's,
    #: an allocated buffer): structural equality and hashing match what they hold by where it
    #: is defined, not by name
    _def_fields: ClassVar[frozenset[str]] = frozenset()
    #: set on a buffer: it is matched, like a variable, by where it is defined, and a definition
    #: of it defines its ``data`` variable and the variables these fields introduce
    #: (``T.match_buffer``'s ``n`` in a shape); ``None`` on every other node
    _buffer_def_fields: ClassVar[frozenset[str] | None] = None

    def fields(self) -> Iterator[tuple[str, Any]]:
        for name in self._fields:
            yield name, getattr(self, name)

    def with_fields(self, **changes: Any) -> Node:
        """A shallow copy with some fields replaced; returns ``self`` if nothing changes."""
        if all(getattr(self, k) is v for k, v in changes.items()):
            return self
        unknown = [k for k in changes if k not in self._fields]
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {unknown}")
        new = copy.copy(self)
        for k, v in changes.items():
            object.__setattr__(new, k, v)
        return new

    def same_as(self, other: object) -> bool:
        return self is other

    def script(self, **kwargs: Any) -> str:
        """TVMScript text of this node."""
        if not _PRINTER:
            raise RuntimeError("no TVMScript printer is installed (import tvm installs one)")
        return _PRINTER[0](self, **kwargs)

    def show(self, **kwargs: Any) -> None:
        """Print this node's TVMScript (the seed's ``mod.show()``)."""
        print(self.script(**kwargs))

    def __repr__(self) -> str:
        try:
            return self.script()
        except Exception:  # printing must never hide the object; fall back to a plain form
            try:
                parts = ", ".join(f"{k}={v!r}" for k, v in self.fields())
            except RecursionError:
                parts = "..."  # too deep to show; script() said why
            return f"{type(self).__name__}({parts})"

    __hash__ = object.__hash__
