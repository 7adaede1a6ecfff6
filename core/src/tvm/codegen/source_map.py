"""From a line of generated source back to the script line that produced it.

The C-style codegen records, for every function it prints, the function's text and the span of
the statement behind each of its lines (:func:`record_function`), into the collector that
core's build opens around a backend's ``codegen`` (:func:`collect`). When the device compiler
then fails (NVRTC, ptxas, the C compiler), :func:`locate_compile_error` reads the line (or the
kernel) its log names, finds the statement's span, and gives a
:class:`~tvm.error.CompileError` located at the script line, with a short message and the raw
log in ``.log``. A log that names no line of ours leaves the error as it was.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ..error import CompileError
from ..ir import stmt as S
from ..ir.function import IRModule
from ..ir.span import Span
from ..ir.visitor import post_order_visit

__all__ = ["collect", "locate_compile_error", "record_function"]

_Chunk = tuple[str, Sequence["Span | None"]]
_COLLECTOR: contextvars.ContextVar[list[_Chunk] | None] = contextvars.ContextVar(
    "tvm_source_map", default=None)

# "kernel.cu(6): error: ..." (NVRTC), "x.c:12:5: error: ..." (gcc, clang)
_LINE_ERRORS = (
    re.compile(r"^(?P<file>[^\s()]+)\((?P<line>\d+)\): (?:error|catastrophe)"),
    re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:\d+:)? (?:fatal )?error"),
)
_HEADERS = (".h", ".hpp", ".hh", ".cuh", ".inc")
_GCC_ECHO = re.compile(r"^\s*\d*\s*\|")  # gcc's "   31 |     A[i] = ...;" and its caret line
# ptxas names the kernel: "Entry function '_Z3fooPf' uses too much shared data (...)"
_FUNCTION_ERRORS = re.compile(r"(?:[Ee]ntry )?[Ff]unction '(?P<name>[\w$]+)'")


@contextlib.contextmanager
def collect() -> Iterator[list[_Chunk]]:
    """Collect the functions printed inside the block (core's build wraps codegen in it)."""
    chunks: list[_Chunk] = []
    token = _COLLECTOR.set(chunks)
    try:
        yield chunks
    finally:
        _COLLECTOR.reset(token)


def record_function(text: str, spans: Sequence[Span | None]) -> None:
    """Record a printed function: its text and, per line of it, the span behind that line."""
    chunks = _COLLECTOR.get()
    if chunks is not None and any(s is not None for s in spans):
        chunks.append((text, list(spans)))


def line_spans(source: str, chunks: Sequence[_Chunk]) -> dict[int, Span]:
    """Line number (1-based) of ``source`` -> span, for the recorded functions found in it."""
    out: dict[int, Span] = {}
    for text, spans in chunks:
        at = source.find(text)
        if at < 0:
            continue
        first = source.count("\n", 0, at) + 1
        for k, span in enumerate(spans):
            if span is not None:
                out[first + k] = span
    return out


def locate_compile_error(err: CompileError, source: str, chunks: Sequence[_Chunk],
                         mod: IRModule | None = None) -> CompileError:
    """``err`` located at the script line its log points to (a new error whose message is the
    compiler's first complaint and whose ``.log`` is the raw log), or ``err`` itself."""
    log = err.log or ""
    lines = log.splitlines()
    spans = line_spans(source, chunks)
    for k, text in enumerate(lines):
        for pattern in _LINE_ERRORS:
            m = pattern.match(text)
            if m is None or m.group("file").endswith(_HEADERS):
                continue  # an error inside a header names no line of ours
            span = spans.get(int(m.group("line")))
            if span is not None:
                return _located(err, span, _complaint(lines, k))
    for text in lines:
        m = _FUNCTION_ERRORS.search(text)
        span = _kernel_span(mod, m.group("name")) if m is not None else None
        if span is not None:
            return _located(err, span, text.strip())
    return err


def _complaint(lines: Sequence[str], k: int) -> str:
    """The error line and its indented continuation lines ("operand types are: ...")."""
    out = [lines[k].strip()]
    for j in range(k + 1, min(k + 4, len(lines))):
        text = lines[j]
        echoes_source = j + 1 < len(lines) and lines[j + 1].strip().startswith("^")
        if not text.startswith(("  ", "\t")) or echoes_source or _GCC_ECHO.match(text):
            break
        out.append(text.strip())
    return "\n".join(out)


def _located(err: CompileError, span: Span, complaint: str) -> CompileError:
    first = str(err.args[0]).split("\n", 1)[0] if err.args else "the compiler failed"
    message = (f"{first}:\n{complaint}\n(the compiler's full output is in this error's .log)")
    new = CompileError(message, command=err.command)
    new.log = err.log
    new.span = span
    return new


def _kernel_span(mod: IRModule | None, name: str) -> Span | None:
    if mod is None:
        return None
    for key, func in mod.functions.items():
        if str(func.attrs.get("global_symbol", key)) == name:
            return _first_span(func.body)
    return None


def _first_span(body: Any) -> Span | None:
    """Where the kernel is declared: its first launch id (``T.cta_id``), else its first
    located statement."""
    loops: list[Span] = []
    stmts: list[Span] = []

    def visit(node: Any) -> None:
        if isinstance(node, S.Stmt) and node.span is not None:
            is_launch = isinstance(node, S.For) and node.kind == S.ForKind.THREAD_BINDING
            (loops if is_launch else stmts).append(node.span)

    post_order_visit(body, visit)
    found = loops or stmts
    return min(found, key=lambda s: (s.line, s.column)) if found else None
