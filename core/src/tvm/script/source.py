"""Reading a script function's source, and having it parsed.

``_parse_ast`` is ``ast.parse`` with every failure located (syntax errors, a null character,
expressions too deep); ``_closure_vars`` reads the variables a function closes over;
:func:`parse_function` (``@T.prim_func``) and ``@T.jit``'s specialisations parse a ``def``
through :func:`parse_def`.

The parser reads ``T`` (its builders and spec classes), and ``T`` exports ``@T.prim_func`` and
``@T.jit``, which parse: so the parser is a layer above them and installs its ``Parser`` here
when it is imported (``import tvm.script``, which any ``from tvm.script import tirx as T``
runs first, imports it), as the printer installs itself in :mod:`tvm.ir.node`.
"""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from typing import Any

from ..error import DiagnosticError
from ..ir.depth import CHAIN_WEIGHT, MAX_DEPTH
from ..ir.function import PrimFunc
from .diagnostics import Source

__all__ = ["parse_def", "parse_function", "set_parser"]

_SPLIT_HINT = ("Split long expressions into parts bound to variables (`s = a + b` ...), or "
               "loop over a buffer instead of unrolling")
_TOO_DEEP = f"this is nested too deeply to parse. {_SPLIT_HINT}"

# the parser's class (tvm.script.parser.Parser): Parser(source, lookups).function(fdef, ...)
_PARSER: list[Any] = []


def set_parser(parser: Any) -> None:
    """Called by :mod:`tvm.script.parser` on import: the class that parses a function."""
    _PARSER[:] = [parser]


def parse_def(source: Source, lookups: list[dict[str, Any]], fdef: ast.FunctionDef, *,
              private: bool) -> PrimFunc:
    """``fdef`` (a ``def`` of ``source``) as a PrimFunc; names resolve in ``lookups``, in
    order."""
    if not _PARSER:
        raise RuntimeError("no TVMScript parser is installed (import tvm.script installs it)")
    try:
        return _PARSER[0](source, lookups).function(fdef, private=private)  # type: ignore[no-any-return]
    except DiagnosticError as exc:
        # The parser's own frames say nothing to the user: the diagnostic points at the script.
        raise exc.with_traceback(None) from None


def parse_function(fn: Any, *, private: bool = False,
                   extra_vars: dict[str, Any] | None = None) -> PrimFunc:
    """Parse a Python function object's source into a PrimFunc (``@T.prim_func``)."""
    try:
        raw = inspect.getsource(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError) as exc:
        raise TypeError(f"@T.prim_func needs the function's source text ({exc}); use "
                        f"tvm.script.from_source(text) for code without a file") from None
    first = fn.__code__.co_firstlineno
    source = Source.from_snippet(raw, filename, first)
    tree = _parse_ast(source)
    fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fdef is None:
        raise source.error(tree.body[0] if tree.body else None, "@T.prim_func expects a `def`")
    lookups = [_closure_vars(fn), dict(extra_vars or {}), fn.__globals__]
    return parse_def(source, lookups, fdef, private=private)


def _parse_ast(source: Source) -> ast.Module:
    """``ast.parse`` with every failure located: syntax errors where Python says, and
    expressions too deep for Python's parser (or ours) at their line."""
    nul = source.text.find("\0")
    if nul >= 0:  # Python < 3.12 raises a bare ValueError for it
        line = source.text.count("\n", 0, nul) + 1
        col = nul - (source.text.rfind("\n", 0, nul) + 1)
        raise source.error(_node_at(line, col),
                           "the source contains a null character (\\0); remove it") from None
    try:
        tree = ast.parse(source.text, source.filename)
    except SyntaxError as exc:
        raise source.error(_syntax_node(exc), exc.msg) from None
    except (RecursionError, MemoryError):
        raise source.error(_busiest_line(source.text), _TOO_DEEP) from None
    too_deep = _too_deep_expr(tree)
    if too_deep is not None:
        raise source.error(too_deep, f"this expression nests more than {MAX_DEPTH} levels "
                                     f"deep; scripts may nest at most {MAX_DEPTH}. {_SPLIT_HINT}")
    return tree


# Python's operators of tvm.ir.depth.CHAIN_OPS
_CHAIN_AST = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)


def _too_deep_expr(tree: ast.AST) -> ast.AST | None:
    """The first expression nested deeper than MAX_DEPTH (counted iteratively; a link of a
    flat chain ``a + b + c`` counts CHAIN_WEIGHT, as in ir_depth)."""
    stack: list[tuple[ast.AST, float, type | None]] = [(tree, 0, None)]
    while stack:
        node, depth, chain = stack.pop()
        if isinstance(node, ast.expr):
            same = isinstance(node, ast.BinOp) and type(node.op) is chain
            depth += CHAIN_WEIGHT if same else 1
            if depth > MAX_DEPTH:
                return node
        link = (type(node.op) if isinstance(node, ast.BinOp) and isinstance(node.op, _CHAIN_AST)
                else None)
        stack.extend((child, depth, link if isinstance(node, ast.BinOp) and child is node.left
                      else None) for child in ast.iter_child_nodes(node))
    return None


def _busiest_line(text: str) -> ast.AST:
    """A node at the line with the most tokens: where an expression too deep for Python's own
    parser is."""
    counts: dict[int, int] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            counts[tok.start[0]] = counts.get(tok.start[0], 0) + 1
    except (tokenize.TokenError, SyntaxError):
        pass
    node = ast.Pass()
    node.lineno = max(counts, key=lambda k: counts[k]) if counts else 1
    node.col_offset = 0
    return node


def _syntax_node(exc: SyntaxError) -> ast.AST:
    return _node_at(exc.lineno or 1, max((exc.offset or 1) - 1, 0))


def _node_at(line: int, col: int) -> ast.AST:
    """A placeholder node at ``line`` (1-based) and ``col`` (0-based), for a located error."""
    node = ast.Pass()
    node.lineno = line
    node.col_offset = col
    return node


def _closure_vars(fn: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is None:
        return out
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            continue
    return out
