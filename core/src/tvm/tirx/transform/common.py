"""The seed's ``tvm.tirx.transform.common``: ``BufferReplacer``, a mutator that puts one buffer
in place of another wherever it is used (loads, stores, regions, tile calls, declarations)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...ir.buffer import Buffer
from ..stmt_functor import StmtExprMutator

__all__ = ["BufferReplacer"]


class BufferReplacer(StmtExprMutator):
    """``BufferReplacer({A: B}).visit_stmt(s)``: ``s`` with buffer ``B`` wherever ``A`` was.
    ``buffer_map`` is this replacer's own dict (add to it before visiting)."""

    def __init__(self, buffer_map: Mapping[Buffer, Buffer] | None = None) -> None:
        super().__init__()
        self.buffer_map: dict[Buffer, Buffer] = dict(buffer_map or {})

    def visit_Buffer(self, buf: Buffer) -> Any:  # noqa: N802 - the mutator's dispatch name
        return self.buffer_map.get(buf, buf)
