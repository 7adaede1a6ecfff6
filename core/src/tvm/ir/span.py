"""``Span``: where a node came from in the user's source (file, line, columns, the line's text).

The parser records a span on every tile primitive call and every op call it builds; errors raised
while lowering or generating code for such a call are reported at its span, the way parse errors
are (:class:`tvm.error.LocatedError`). Spans are not part of a node's structure: structural
equality, hashing and printing ignore them, and rewriting a node keeps its span.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Span"]


@dataclass(frozen=True)
class Span:
    """``line`` is 1-based; ``column`` and ``end_column`` are 0-based offsets into ``text`` (the
    source line, indentation included); ``end_column`` is where the node ends on that line."""

    filename: str
    line: int
    column: int
    end_column: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column + 1}"
