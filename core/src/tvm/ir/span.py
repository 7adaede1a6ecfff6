"""Source locations of IR nodes: the parser marks each statement (and each parameter buffer)
with where it was written, so that the verifier can report file and line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Span", "span_of"]


@dataclass(frozen=True)
class Span:
    """A place in a source file: ``line`` is 1-based, ``col`` 0-based; ``text`` is the line."""

    filename: str
    line: int
    col: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col + 1}"

    def show(self, message: str) -> str:
        """``file:line:col: message``, then the source line with a caret under the column."""
        out = f"{self}: {message}"
        if self.text:
            out += f"\n    {self.text.rstrip()}\n    {' ' * self.col}^"
        return out


def span_of(node: Any) -> Span | None:
    """The span a node was marked with, if any (it is not part of the node's structure)."""
    return getattr(node, "span", None)
