"""Mutants of the test kernels' printed text.

The corpus is the printed text of the demo kernels, of every ``@T.prim_func`` in the core tests
that parses on its own, and of the kernels the core tests build or lower (``corpus.txt``,
recorded by ``record_corpus.py``). A mutant applies one to three random edits to one of them: a number, operator,
dtype or name replaced; a token deleted or doubled; a line deleted, doubled, moved, re-indented,
truncated or spliced in from another kernel; brackets or odd characters inserted.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from record_corpus import read_corpus

__all__ = ["corpus", "mutants", "mutate"]

TESTS = Path(__file__).resolve().parent.parent

_TOKEN = re.compile(r"\d+\.\d*(?:e[-+]?\d+)?|\d+(?:e[-+]?\d+)?|[A-Za-z_]\w*|\"[^\"\n]*\"|\*\*|//"
                    r"|<=|>=|==|!=|[-+*/%<>()\[\]{},:.=@]")
_NUMBERS = ["0", "1", "-1", "2", "3", "16", "255", "256", "1024", str(2**31 - 1), str(2**31),
            str(2**32), str(2**40), str(2**63), str(10**30), "0.5", "1e300", "1e-320", "-0.0",
            "2.5", "0x7f"]
_OPERATORS = ["+", "-", "*", "/", "//", "%", "<", "<=", ">", ">=", "==", "!=", " and ", " or ",
              "**", "@", "&", "|", "^", "<<", ">>"]
_DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64",
           "uint64", "bool", "handle", "void", "uint8x3", "float32x4", "int32x8",
           "float8_e4m3fn", "int4", "float33", "", "int", "float"]
_NAMES = ["T.exp", "T.Select", "T.alloc_buffer", "T.grid", "T.serial", "T.thread_id",
          "T.cta_id", "T.float32", "T.int32", "T.int64", "T.uint8", "range", "None", "True",
          "T.Cast", "T.if_then_else", "T.evaluate", "T.device_entry", "T.match_buffer",
          "T.decl_buffer", "T.Buffer", "T.handle", "T.tile.copy", "T.cta.fill", "T.attr",
          "T.let", "T.meta_var", "T.launch_params", "T.TileLayout", "T.S", "T.axis", "T.Ramp",
          "T.Broadcast", "T.call_intrin", "T.call_extern", "T.reinterpret", "T.address_of",
          "T.max", "T.min", "T.truncmod", "T.floordiv", "T.vectorized", "T.unroll",
          "T.parallel", "T.thread_binding", "T.func_attr", "T.prim_func", "I.ir_module", "T"]
_LINES = ["T.evaluate(0)", "assert False, \"x\"", "x = 1", "for i in range(2):",
          "T.device_entry()", "return", "break", "pass", "if True:", "else:",
          "y = T.alloc_buffer((4,), \"float32\")", "with T.attr({\"k\": 1}):",
          "n = T.int32()", "T.evaluate(T.exp(T.float32()))", "del x", "import os",
          "lambda: 0", "while True:", "z: T.float32", "q = T.cta_id([2])",
          "T.func_attr({\"global_symbol\": \"main\"})"]
_CHARS = ["(", ")", "[", "]", ",", ":", "\t", "\\", "\"", "'", "#", "\x00", "é", "∑", "\n",
          " ", "    ", ";", "`", "$"]


def _script_kernels(path: Path) -> list[str]:
    """Every ``@T.prim_func`` function written in ``path`` (at any depth) that parses on its
    own, as printed text."""
    import ast
    import textwrap

    from tvm.error import TVMError
    from tvm.script import from_source

    source = path.read_text()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        if not any("prim_func" in ast.unparse(d) for d in node.decorator_list):
            continue
        segment = ast.get_source_segment(source, node, padded=True) or ""
        decorators = "".join(f"@{ast.unparse(d)}\n" for d in node.decorator_list)
        text = "from tvm.script import tirx as T\n\n" + decorators + textwrap.dedent(segment)
        try:
            out.append(from_source(text).script())
        except (TVMError, TypeError, ValueError, KeyError):  # needs names from its test
            continue
    return out


def corpus() -> list[str]:
    """The printed text of every test and demo kernel that parses on its own (deterministic
    order, no duplicates)."""
    from tvm import demo

    texts: dict[str, None] = {}
    for kernel in demo.KERNELS:
        texts[kernel.build().script()] = None
    for path in sorted(TESTS.rglob("*.py")):
        if "fuzz" in path.parts:
            continue
        for text in _script_kernels(path):
            texts[text] = None
    for text in read_corpus():  # what the tests build in Python and what passes make of it
        texts[text] = None
    return list(texts)


def mutate(text: str, rng: random.Random, others: list[str]) -> str:
    """One to three random edits of ``text``."""
    for _ in range(rng.choice([1, 1, 2, 3])):
        text = _edit(text, rng, others)
    return text


def _edit(text: str, rng: random.Random, others: list[str]) -> str:  # noqa: C901 - a table of edits
    tokens = list(_TOKEN.finditer(text))
    lines = text.split("\n")
    kind = rng.choice(["number", "number", "operator", "dtype", "dtype", "name", "name", "delete",
                       "double", "line_delete", "line_double", "line_swap", "indent", "insert",
                       "truncate", "splice", "nest", "char"])
    if kind in ("number", "operator", "dtype", "name", "delete", "double") and tokens:
        pick = _pick_token(tokens, kind, rng)
        start, end = pick.span()
        old = pick.group()
        if kind == "number":
            new = rng.choice(_NUMBERS)
        elif kind == "operator":
            new = rng.choice(_OPERATORS)
        elif kind == "dtype":
            new = f'"{rng.choice(_DTYPES)}"' if old.startswith('"') else rng.choice(_DTYPES) or "x"
        elif kind == "name":
            same = [t.group() for t in tokens if t.group()[:1].isalpha() or t.group()[:1] == "_"]
            new = rng.choice([*_NAMES, *same]) if same else rng.choice(_NAMES)
        elif kind == "delete":
            new = ""
        else:
            new = old + old
        return text[:start] + new + text[end:]
    if kind == "line_delete" and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif kind == "line_double":
        k = rng.randrange(len(lines))
        lines.insert(k, lines[k])
    elif kind == "line_swap" and len(lines) > 1:
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
    elif kind == "indent":
        k = rng.randrange(len(lines))
        lines[k] = rng.choice(["    ", "  ", "\t"]) + lines[k] if rng.random() < 0.5 \
            else lines[k][4:]
    elif kind == "insert":
        k = rng.randrange(len(lines) + 1)
        indent = " " * rng.choice([0, 4, 8, 12])
        lines.insert(k, indent + rng.choice(_LINES))
    elif kind == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    elif kind == "splice" and others:
        donor = rng.choice(others).split("\n")
        lines[rng.randrange(len(lines))] = rng.choice(donor)
    elif kind == "nest":
        k = rng.randrange(len(text) + 1)
        depth = rng.choice([1, 2, 10, 300])
        end = min(len(text), k + rng.randrange(1, 40))
        return text[:k] + "(" * depth + text[k:end] + ")" * depth + text[end:]
    elif kind == "char":
        k = rng.randrange(len(text) + 1)
        return text[:k] + rng.choice(_CHARS) + text[k:]
    return "\n".join(lines)


def _pick_token(tokens: list[re.Match[str]], kind: str, rng: random.Random) -> re.Match[str]:
    def fits(t: re.Match[str]) -> bool:
        g = t.group()
        if kind == "number":
            return g[:1].isdigit()
        if kind == "operator":
            return g in _OPERATORS or g.strip() in ("and", "or")
        if kind == "dtype":
            return g.strip('"') in _DTYPES[:-2] and g.strip('"') != ""
        if kind == "name":
            return g[:1].isalpha() or g[:1] == "_"
        return True

    candidates = [t for t in tokens if fits(t)]
    return rng.choice(candidates or tokens)


def mutants(count: int, seed: int, texts: list[str] | None = None) -> list[str]:
    """``count`` mutants of the corpus (or of ``texts``) with ``seed``: the same list every time."""
    base = texts if texts is not None else corpus()
    rng = random.Random(seed)
    return [mutate(rng.choice(base), rng, base) for _ in range(count)]
