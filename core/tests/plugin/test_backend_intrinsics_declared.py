"""Every backend declares its intrinsics one way: in a ``tvm.ir.intrin.IntrinTable``.

Over every backend's sources (``tvm-backend-*/src``, ``plugins/*/src``): no hand-written op
registration (``Op.register``), codegen rule (``.set_codegen``) or printer hook
(``__tir_op_name__ = ...``); the table derives all three from the declaration.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(p for pattern in ("tvm-backend-*/src", "plugins/*/src")
                 for tree in ROOT.glob(pattern) for p in tree.rglob("*.py"))


def violations(path: Path) -> list[str]:
    """Each hand-written registration of an intrinsic in ``path``, as 'line: what'."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if func.attr == "register" and isinstance(func.value, ast.Name) and \
                    func.value.id == "Op":
                out.append(f"{node.lineno}: Op.register(...)")
            elif func.attr == "set_codegen":
                out.append(f"{node.lineno}: .set_codegen(...)")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "__tir_op_name__"
                   for t in targets):
                out.append(f"{node.lineno}: ... .__tir_op_name__ = ...")
    return out


def test_the_sources_are_found():
    assert any(p.name == "op.py" and "tvm_backend_metal" in p.parts for p in SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_intrinsics_are_declared_not_hand_registered(path: Path) -> None:
    found = violations(path)
    assert not found, (f"{path.relative_to(ROOT)} registers intrinsics by hand; declare them in "
                       "the backend's tvm.ir.intrin.IntrinTable (docs/guide/writing-a-backend.md, "
                       "'Intrinsics'):\n" + "\n".join(found))
