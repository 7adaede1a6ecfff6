"""Backends use tvm-core only through ``tvm.backend.sdk`` and tvm's public language.

Over every backend's sources (``tvm-backend-*/src``, ``plugins/*/src``): an import of a tvm
module must name the SDK (``from tvm.backend import sdk``, the one-line form, or names from it)
or a module of the public language (:data:`LANGUAGE`), never a private module or name
(``tvm._registry``, ``tvm.x._util``, ``_const_numel``); an attribute chain ``tvm.a.b`` in code
must stay inside the same set (``sdk.X`` is a name of the SDK: nothing to check).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import tvm.backend.sdk as sdk

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(p for pattern in ("tvm-backend-*/src", "plugins/*/src")
                 for tree in ROOT.glob(pattern) for p in tree.rglob("*.py"))

#: the public language a backend compiles (IR, script, targets, errors, passes' base classes)
LANGUAGE = frozenset({"tvm", "tvm.error", "tvm.ir", "tvm.target", "tvm.script",
                      "tvm.script.tirx", "tvm.transform", "tvm.tirx.op", "tvm.autotune"})
SDK = "tvm.backend.sdk"
#: files that may break the rule, with the reason (the target is none)
EXEMPT: dict[str, str] = {}


def _allowed_module(name: str) -> bool:
    if any(part.startswith("_") for part in name.split(".")):
        return False
    return name in LANGUAGE or name == SDK or name.startswith("tvm.ir.")


def _attribute_chain(node: ast.Attribute) -> str | None:
    parts = []
    cur: ast.expr = node
    while isinstance(cur, ast.Attribute):
        parts.append(cur.attr)
        cur = cur.value
    if not (isinstance(cur, ast.Name) and cur.id == "tvm"):
        return None
    return ".".join(["tvm", *reversed(parts)])


def violations(path: Path) -> list[str]:
    """Each import or attribute chain of ``path`` that reaches past the SDK, as 'line: what'."""
    out = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "tvm" or node.module.startswith("tvm.")):
            # `from tvm.backend import sdk` imports the SDK itself, and only that name may come
            # from the SDK's (otherwise closed) parent package
            past_sdk = [a for a in node.names if f"{node.module}.{a.name}" != SDK]
            if past_sdk and not _allowed_module(node.module):
                out.append(f"{node.lineno}: from {node.module} import ...")
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if alias.name.startswith("_") or (
                        node.module == "tvm" and _is_module(full) and not _allowed_module(full)):
                    out.append(f"{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tvm.") and not _allowed_module(alias.name):
                    out.append(f"{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.Attribute) and id(node) not in inner:  # whole chains only
            chain = _attribute_chain(node)
            if chain and not _chain_allowed(chain):
                out.append(f"{node.lineno}: {chain}")
    return sorted(set(out), key=lambda s: (int(s.split(":")[0]), s))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _chain_allowed(chain: str) -> bool:
    """``tvm.ir.Var`` and ``tvm.compile`` are fine; ``tvm.runtime.cache.x`` is not: every
    prefix of the chain that names a module must be allowed."""
    parts = chain.split(".")
    for i in range(2, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if parts[i - 1].startswith("_"):
            return False
        if _is_module(prefix) and not _allowed_module(prefix):
            return False
    return True


def test_backends_import_only_the_sdk_and_the_language():
    found = {}
    for path in SOURCES:
        rel = str(path.relative_to(ROOT))
        if rel in EXEMPT:
            continue
        bad = violations(path)
        if bad:
            found[rel] = bad
    report = "\n".join(f"{f}:{line}" for f, lines in found.items() for line in lines)
    assert not found, ("backends use tvm-core through tvm.backend.sdk (see docs/guide/"
                       "writing-a-backend.md, 'The SDK'); add what is missing there:\n" + report)
    assert len(EXEMPT) == 0


@pytest.mark.parametrize("source, expected", [
    ("from tvm._registry import record_undo\n", ["1: from tvm._registry import ..."]),
    ("from tvm.codegen.c_style import _const_numel\n",
     ["1: from tvm.codegen.c_style import ...",
      "1: from tvm.codegen.c_style import _const_numel"]),
    ("def f():\n    from tvm.runtime.cache import cache_key\n",
     ["2: from tvm.runtime.cache import ..."]),
    ("import tvm.backend\n", ["1: import tvm.backend"]),
    ("from tvm.backend import load\n", ["1: from tvm.backend import ..."]),
    ("from tvm.backend import sdk, load\n", ["1: from tvm.backend import ..."]),
    ("from tvm.backend import sdk\nimport tvm\nx = tvm.backend.sdk.Builder\n",
     ["3: tvm.backend.sdk.Builder"]),
    ("from tvm import codegen\n", ["1: from tvm import codegen"]),
    ("import tvm\nx = tvm.runtime.cache.cache_key\n", ["2: tvm.runtime.cache.cache_key"]),
    ("from tvm.backend.sdk import Builder\nfrom tvm.ir import Var\nimport tvm\n"
     "y = tvm.ir.Var\nz = tvm.compile\n", []),
    ("from tvm.backend import sdk\nclass B(sdk.Builder):\n    o: int = sdk.option(1, 'o')\n", []),
])
def test_the_rule_catches_each_way_past_the_sdk(tmp_path, source, expected):
    path = tmp_path / "mod.py"
    path.write_text(source)
    assert violations(path) == expected


def test_the_sdk_names_resolve_and_match_its_type_checking_imports():
    for name in sdk.__all__:
        assert getattr(sdk, name) is not None, name
    assert sorted(sdk.__all__) == sorted(sdk._EXPORTS)
    # the TYPE_CHECKING block (what mypy sees) names the same objects as the lazy table
    tree = ast.parse(Path(sdk.__file__).read_text(encoding="utf-8"))
    typed = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 2:
            for alias in node.names:
                typed[alias.asname or alias.name] = (f"..{node.module}", alias.name)
    assert typed == sdk._EXPORTS


def test_an_unknown_sdk_name_says_where_the_names_are():
    with pytest.raises(AttributeError, match=r"no attribute 'Compiler'; the SDK's names are "
                                             r"listed in tvm.backend.sdk.__all__"):
        sdk.Compiler  # noqa: B018 - the attribute access is the test
