"""``tvm.script.ir_builder.tirx``: the function frame of :mod:`tvm.script.ir_builder`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["prim_func"]


@contextlib.contextmanager
def prim_func(is_private: bool = False) -> Iterator[None]:
    """A function frame (``with tirx.prim_func():``); see :mod:`tvm.script.ir_builder`."""
    yield
