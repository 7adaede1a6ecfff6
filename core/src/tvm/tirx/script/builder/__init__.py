"""Seed-compatible location of the script builder (``tvm.tirx.script.builder.ir``); the
registered script namespaces resolve as attributes here too (``builder.cuda``).

:func:`buffer_store` is the statement the parser builds for an assignment to a scalar (``x = v``
of ``x: T.int32`` or ``T.local_scalar``); the parser calls it through this module, so a test
may replace it here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....ir.buffer import Buffer
from ....ir.stmt import BufferStore
from .ir import namespace_attribute

__all__ = ["buffer_store"]


def buffer_store(buffer: Buffer, value: Any, indices: Sequence[Any]) -> BufferStore:
    """``buffer[indices] = value`` as a statement."""
    return BufferStore(buffer, value, indices)


def __getattr__(name: str) -> Any:
    return namespace_attribute(__name__, name)
