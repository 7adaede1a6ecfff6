"""The one file layout every backend has, and its check (:func:`check_backend_layout`).

A reader who knows one backend knows where to look in any other::

    plugin.py      the hooks, nothing else (hookimpls, register_backend, private helpers)
    tags.py        target kinds and tags, as data (or data files beside it)
    script.py      TVMScript namespaces (T.<ns>)
    op.py          ops and intrinsics: the seed's names (declared in intrinsics/ where there are
                   many)
    codegen.py     lowered IR -> source
    compiler.py    source -> binary
    executable.py  the build contract (Options, Builder) and the Executable
    runtime.py     device and driver access only
    dispatch/      tile-primitive variants (where the backend has them)
    intrinsics/    intrinsic declarations (where the backend has them)

Core's own tests run the check on every installed backend; a backend runs it on itself in its
tests (the template: ``test_file_layout`` in ``tests/test_example.py``), or by hand::

    python -c "import tvm_backend_x as p; from tvm.testing.layout import check_backend_layout as c; c(p)"
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

__all__ = ["OPTIONAL", "REQUIRED", "check_backend_layout", "layout_problems"]

REQUIRED = ("plugin.py", "tags.py", "script.py", "op.py", "codegen.py", "compiler.py",
            "executable.py", "runtime.py")
OPTIONAL = ("dispatch", "intrinsics")
_PLUGIN_PUBLIC = ("register_backend",)


def layout_problems(package: ModuleType | str | Path,
                    delegated: Iterable[str] | None = None) -> list[str]:
    """What breaks the layout in ``package`` (a package module or its folder); [] when none.

    A stage file in ``delegated`` may be absent (another backend does that stage); by default
    those of the package's ``plugin.SPEC.delegates`` when ``package`` is a loaded module."""
    folder = _folder(package)
    skip = set(_delegated(package) if delegated is None else delegated)
    problems = [f"{folder.name}/{name} is missing" for name in REQUIRED
                if name not in skip and not (folder / name).is_file()]
    for name in OPTIONAL:
        path = folder / name
        if path.exists() and not (path / "__init__.py").is_file():
            problems.append(f"{folder.name}/{name}/ must be a package (no __init__.py)")
    plugin = folder / "plugin.py"
    if plugin.is_file():
        problems += _plugin_problems(plugin)
    return problems


def check_backend_layout(package: ModuleType | str | Path,
                         delegated: Iterable[str] | None = None) -> None:
    """Raise ``AssertionError`` listing every way ``package`` breaks the layout."""
    problems = layout_problems(package, delegated)
    if problems:
        raise AssertionError("the backend's file layout differs from every other backend's "
                             "(see tvm.testing.layout):\n  " + "\n  ".join(problems))


def _delegated(package: ModuleType | str | Path) -> Iterable[str]:
    if not isinstance(package, ModuleType):
        return ()
    spec = getattr(sys.modules.get(f"{package.__name__}.plugin"), "SPEC", None)
    return tuple(getattr(spec, "delegates", None) or ())


def _folder(package: ModuleType | str | Path) -> Path:
    if isinstance(package, ModuleType):
        paths = list(getattr(package, "__path__", []))
        if not paths:
            raise ValueError(f"{package.__name__} is a module, not a package")
        return Path(paths[0])
    return Path(package)


def _plugin_problems(plugin: Path) -> list[str]:
    """plugin.py holds hooks only: public top-level functions are ``tvm_*`` hooks or
    ``register_backend``; no classes."""
    tree = ast.parse(plugin.read_text(encoding="utf-8"), filename=str(plugin))
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out.append(f"plugin.py defines class {node.name}: move it beside the code it serves")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name
            if not (name.startswith(("tvm_", "_")) or name in _PLUGIN_PUBLIC):
                out.append(f"plugin.py defines {name}(), which is not a hook: move it to the "
                           "module it belongs to")
    return out
