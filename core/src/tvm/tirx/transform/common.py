"""Helpers the passes share (the seed's ``tvm.tirx.transform.common``).

- :class:`BufferReplacer`: a mutator that puts other buffers in place of some, everywhere they
  appear (loads, stores, regions, allocations, declarations, tile-primitive operands).
"""

from __future__ import annotations

from collections.abc import Mapping

from ...ir.buffer import Buffer
from ...ir.visitor import Mutator

__all__ = ["BufferReplacer"]


class BufferReplacer(Mutator):
    """Replace each buffer that is a key of ``buffer_map`` by its value.

    ``BufferReplacer({A: A2}).visit(stmt)``; the map may also be filled after construction
    (``r.buffer_map[A] = A2``). Each replacer has its own map. Buffers are matched by identity.
    """

    def __init__(self, buffer_map: Mapping[Buffer, Buffer] | None = None) -> None:
        self.buffer_map: dict[Buffer, Buffer] = dict(buffer_map or {})
        for old, new in self.buffer_map.items():
            _check_pair(old, new)

    def visit_Buffer(self, node: Buffer) -> Buffer:
        new = self.buffer_map.get(node)
        if new is None:
            return node
        _check_pair(node, new)
        return new


def _check_pair(old: object, new: object) -> None:
    if not isinstance(old, Buffer) or not isinstance(new, Buffer):
        raise TypeError(f"BufferReplacer maps buffers to buffers, got "
                        f"{type(old).__name__} -> {type(new).__name__}")
