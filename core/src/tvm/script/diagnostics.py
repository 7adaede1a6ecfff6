"""Parse-error reporting: every TVMScript error names its file, line and column and shows the
source line with a caret under the offending spot (:class:`tvm.error.DiagnosticError`).

A :class:`Source` knows where a parsed snippet sits in its file: a decorated function's text
starts at some line of its module and may be indented (a function nested in a test), so AST
positions are shifted back to the file's own coordinates before they are reported.
"""

from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass

from ..error import DiagnosticError
from ..ir.span import Span

__all__ = ["DiagnosticError", "Source"]


@dataclass(frozen=True)
class Source:
    """Text of a script together with its place in the file it came from.

    ``text`` is what ``ast.parse`` sees (dedented); ``line_offset`` and ``col_offset`` are added
    to AST positions to give the file's own line (1-based) and column (0-based).
    """

    text: str
    filename: str = "<string>"
    line_offset: int = 0
    col_offset: int = 0

    @staticmethod
    def from_snippet(raw: str, filename: str, first_line: int) -> Source:
        """A source for ``raw`` (as ``inspect.getsource`` returns it) starting at file line
        ``first_line``; common indentation is removed and remembered."""
        lines = raw.splitlines(keepends=True)
        indent = _common_indent(lines)
        text = "".join(line[indent:] if line.strip() else line.lstrip(" \t") for line in lines)
        return Source(text, filename, first_line - 1, indent)

    def line(self, lineno: int) -> str:
        """The file's line ``lineno`` (1-based), indentation included."""
        if self.filename and not self.filename.startswith("<"):
            got = linecache.getline(self.filename, lineno)
            if got:
                return got.rstrip("\n")
        local = lineno - self.line_offset
        lines = self.text.splitlines()
        if 1 <= local <= len(lines):
            return " " * self.col_offset + lines[local - 1] if self.col_offset else lines[local - 1]
        return ""

    def span(self, node: ast.AST) -> Span:
        """Where ``node`` is in the file: its first line, and its columns on that line."""
        lineno = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset
        text = self.line(lineno)
        end = getattr(node, "end_col_offset", None)
        same_line = getattr(node, "end_lineno", None) == getattr(node, "lineno", 1)
        end_col = end + self.col_offset if end is not None and same_line else len(text.rstrip())
        return Span(self.filename, lineno, col, max(end_col, col + 1), text)

    def error(self, node: ast.AST | None, message: str) -> DiagnosticError:
        """A :class:`DiagnosticError` pointing at ``node`` (or at the first line without one)."""
        lineno = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset
        return DiagnosticError(message, self.filename, lineno, col, self.line(lineno))


def _common_indent(lines: list[str]) -> int:
    widths = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
    if not widths:
        return 0
    first = lines[0] if lines else ""
    # Only strip what every non-blank line starts with (the first line sets the prefix).
    prefix = first[: len(first) - len(first.lstrip(" \t"))]
    width = len(prefix)
    for line in lines:
        if line.strip() and not line.startswith(prefix):
            width = min(width, len(line) - len(line.lstrip(" \t")))
    return width
