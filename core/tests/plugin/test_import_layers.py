"""Core is a stack of layers: a module imports only from its own layer and the layers below.

Over every module of ``core/src/tvm``, with ``ast``: every import of a ``tvm`` module, at module
level and inside functions, relative or absolute (``import tvm`` itself names the facade, the
top layer), must not name a module of a higher layer than the importer's (:data:`LAYERS`).
Imports under ``if TYPE_CHECKING:`` are skipped: they do not run. A second check: a
function-local import of project code says why it is local (``# noqa: PLC0415 - <reason>``),
and the reason is not an import cycle, except the reviewed cycles in :data:`KNOWN_CYCLES`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tvm.backend import _discovery, _loader

SRC = Path(__file__).resolve().parents[2] / "src"
TVM = SRC / "tvm"

#: the layers, lowest first: (name, the modules it holds (a package holds its submodules; the
#: longest match wins), what it is). ``tvm`` matches only the package's own ``__init__``.
LAYERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # tvm.support is the seed's path of small helpers (a worker process) that import nothing of tvm
    ("base", ("tvm._version", "tvm.error", "tvm._registry", "tvm._logging", "tvm._hints",
              "tvm._suggest", "tvm._scopes", "tvm.support"),
     "errors, registries, hints: what every layer uses"),
    ("ir", ("tvm.ir",), "the IR: nodes, types, ops, visitors, the verifier"),
    ("arith", ("tvm.arith",), "arithmetic analysis of IR expressions"),
    # tvm.ir.transform is Apache TVM's path of tvm.transform: a module of that layer, which
    # nothing in tvm.ir imports
    ("transform", ("tvm.transform", "tvm.ir.transform"), "passes, pass context, pipelines"),
    ("target", ("tvm.target",), "targets, kinds, tags"),
    ("plugin", ("tvm.plugin",), "the hook specs and the plugin manager backends implement"),
    ("tirx", ("tvm.tirx",), "the TIRx language: builtin ops, tile primitives, TIRx passes"),
    # tvm.tirx.script.builder.ir is the seed's path of the script namespaces: a module of that
    # layer, which nothing in tvm.tirx imports
    ("script", ("tvm.script", "tvm.tirx.script"), "TVMScript: parser, printer, T namespaces"),
    ("runtime", ("tvm.runtime",), "executables, the file format, argument checks, caches"),
    ("codegen", ("tvm.codegen",), "IR to source: the C-style printers, bounds checks"),
    ("backend", ("tvm.backend",), "the build contract, discovery and loading of backends"),
    ("driver", ("tvm.driver",), "tvm.compile: lower, then build through the contract"),
    # tvm.tirx.bench is the seed's path of the benchmark timer: a user's tool, which nothing in
    # tvm.tirx imports
    ("frontend", ("tvm.autotune", "tvm.torch", "tvm.demo", "tvm.tirx.bench"),
     "what users drive tvm.compile with, and time its kernels with"),
    ("host", ("tvm.host", "tvm.shader"), "the built-in host backend and the shader runtime"),
    # the SDK re-exports what backends use, the host and shader runtimes and demos included
    ("sdk", ("tvm.backend.sdk",), "the backend contract as one module (tvm-backend-* use it)"),
    ("top", ("tvm", "tvm.__main__", "tvm._doctor", "tvm._new_backend", "tvm.testing"),
     "the facade, the command line, the test helpers"),
)

#: (importer, imported module or package) -> why this upward import stays
EXEMPT: dict[tuple[str, str], str] = {
    ("tvm.script.parser._support", "tvm"):
        "the parser hands the `tvm` package to a script's globals (`tvm.float32` in a kernel); "
        "it calls nothing of it",
    ("tvm.script.jit", "tvm.driver"):
        "calling a @T.jit function with its runtime arguments compiles and runs it (the seed's "
        "contract): the one script object that drives a build, on first call",
}

#: function-local imports that work around an import cycle, reviewed (to remove, not to add):
#: (importer, imported module) -> the cycle
KNOWN_CYCLES: dict[tuple[str, str], str] = {}
_CYCLE_WORDS = re.compile(r"\b(cycle|circular)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Import:
    importer: str
    path: Path
    line: int
    module: str
    local: bool  # inside a function


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


FILES = sorted(TVM.rglob("*.py"))
MODULES = {_module_name(p): p for p in FILES}


def _resolve(base: str, name: str) -> str:
    """``from base import name``: the module ``base.name`` if it is one, else ``base``."""
    full = f"{base}.{name}"
    return full if full in MODULES else base


def _absolute(importer: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
    parts = package.split(".")
    parts = parts[: len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path) -> list[Import]:
    importer = _module_name(path)
    found: list[Import] = []

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                for orelse in getattr(child, "orelse", []):
                    visit(orelse, local)
                continue
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend(Import(importer, path, child.lineno, a.name, local)
                             for a in child.names if a.name.split(".")[0] == "tvm")
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(importer, path, child)
                if base.split(".")[0] == "tvm":
                    found.extend(Import(importer, path, child.lineno, _resolve(base, a.name), local)
                                 for a in child.names)
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


IMPORTS = [imp for p in FILES for imp in _imports(p)]


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s layer (the longest matching entry)."""
    best, best_len = -1, -1
    for index, (_, prefixes, _) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or (prefix != "tvm" and module.startswith(prefix + "."))
            if matches and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best < 0:
        raise LookupError(f"{module} has no layer: add it (or its package) to LAYERS in {__file__}")
    return best


def _where(imp: Import) -> str:
    return f"{imp.path.relative_to(SRC.parent.parent)}:{imp.line}"


def _exemption(imp: Import) -> tuple[str, str] | None:
    for key in EXEMPT:
        importer, imported = key
        if imp.importer == importer and (imp.module == imported
                                         or imp.module.startswith(imported + ".")):
            return key
    return None


def test_every_module_has_a_layer():
    missing = []
    for module in MODULES:
        try:
            layer_of(module)
        except LookupError as err:
            missing.append(str(err))
    assert not missing, "\n".join(missing)


def test_no_module_imports_a_higher_layer():
    bad, used = [], set()
    for imp in IMPORTS:
        low, high = layer_of(imp.importer), layer_of(imp.module)
        if high <= low:
            continue
        key = _exemption(imp)
        if key is not None:
            used.add(key)
            continue
        bad.append(f"{_where(imp)}: {imp.importer} (layer {LAYERS[low][0]}) imports "
                   f"{imp.module} (layer {LAYERS[high][0]}){' inside a function' if imp.local else ''}")
    assert not bad, ("a lower layer imports a higher one; move the code to the layer it belongs "
                     "to, or invert the dependency (registration on import, a hook, a "
                     "parameter):\n" + "\n".join(bad))
    assert used == set(EXEMPT), f"exemptions no longer needed: {sorted(set(EXEMPT) - used)}"


def _comment(imp: Import, lines: list[str], end: int) -> str:
    text = " ".join(lines[imp.line - 1 : end])
    return text.partition("#")[2].strip()


def _local_imports() -> list[tuple[Import, str]]:
    out = []
    for path in FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        ends = {n.lineno: n.end_lineno or n.lineno for n in ast.walk(tree)
                if isinstance(n, (ast.Import, ast.ImportFrom))}
        out.extend((imp, _comment(imp, lines, ends[imp.line]))
                   for imp in IMPORTS if imp.path == path and imp.local)
    return out


def test_function_local_imports_say_why_and_are_not_cycles():
    bad, used = [], set()
    for imp, comment in _local_imports():
        reason = comment.partition(" - ")[2].strip() if "noqa" in comment else comment
        key = (imp.importer, imp.module)
        if key in KNOWN_CYCLES:
            used.add(key)
            continue
        if not reason:
            bad.append(f"{_where(imp)}: the function-local import of {imp.module} does not say "
                       "why it is local (# noqa: PLC0415 - <reason>)")
        elif _CYCLE_WORDS.search(reason):
            bad.append(f"{_where(imp)}: the function-local import of {imp.module} works around "
                       f"an import cycle ({reason!r}); break the cycle instead")
    assert not bad, "\n".join(bad)
    assert used == set(KNOWN_CYCLES), f"cycles gone: {sorted(set(KNOWN_CYCLES) - used)}"


@pytest.mark.parametrize("module, layer", [
    ("tvm", "top"), ("tvm.ir.expr", "ir"), ("tvm.ir.transform", "transform"),
    ("tvm.backend.sdk", "sdk"), ("tvm.backend.contract", "backend"), ("tvm.error", "base"),
])
def test_layer_table_reads_longest_match(module, layer):
    assert LAYERS[layer_of(module)][0] == layer


def test_host_entry_point_copy_matches_pyproject():
    """The loader loads the host backend from a copy of core's entry point (it imports no
    ``tvm.host``); the copy must say what ``pyproject.toml`` declares."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+ (the 3.10 session skips this)
    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))
    declared = project["project"]["entry-points"][_discovery.GROUP]
    entry = _loader.HOST_ENTRY_POINT
    assert declared == {entry.name: entry.value}
