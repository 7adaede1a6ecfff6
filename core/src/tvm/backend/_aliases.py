"""Public aliases of loaded backends: ``tvm.backend.<alias>`` and ``tvm.tirx.<alias>``.

A loaded backend's package (say ``tvm_backend_cuda``) is published under both parents: the
alias module *is* the package (same object), and ``import tvm.tirx.cuda.<sub>`` goes through
:class:`AliasFinder`, which imports ``tvm_backend_cuda.<sub>`` and returns that very module, so
each submodule runs once whatever path imported it. Before the load the alias does not
exist and those imports raise ModuleNotFoundError (with an install or load hint when the name is
a known backend).

:class:`CoreImportFinder` makes sure that a core module (``tvm.*``) imported for the first time
while a backend registers still registers its own entries as core's, outside the backend's
transaction: otherwise a failing backend would roll back core's ops with its own.

A backend may also declare module paths as data (:data:`SUBMODULES`, from the dotted keys of its
alias table: ``"cuda.target_tags": "tvm_backend_cuda.tags"``): ``tvm.backend.cuda.target_tags``,
``tvm.tirx.cuda.target_tags`` and ``tvm_backend_cuda.target_tags`` then import that module (the
same object), a key naming several modules gets one module with all their public names, a key
with keys below it (a tile-primitive family and its variants) is a package holding the public
names of what it stands for, and the packages above such a key (``cuda.operator``) exist as
empty packages. This is how the seed's
module paths stay importable without a file for each.

A key that starts with ``tvm.`` is a full module path in core's own namespace that the backend
provides (cuda: ``"tvm.tirx.lang.pipeline": "tvm_backend_cuda.lang.pipeline"``, the seed's
old home of its kernel helpers): that path, and only that one, imports the module, and the
packages above it that core does not have (``tvm.tirx.lang``) are empty alias packages. Such a
path may not shadow a core module (:func:`check_path_free`). Without the backend the path
does not exist; importing it raises ModuleNotFoundError with the catalogue's install or load
hint (:func:`tvm._hints.missing_message`, "module path"), so core names the distribution and
never the backend's package.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

from .._hints import install_hint_for_backend, missing_message
from .._registry import CORE_OWNER, Registry, core_scope, current_owner

__all__ = [
    "ALIASES",
    "PARENTS",
    "SUBMODULES",
    "AliasFinder",
    "CoreImportFinder",
    "check_path_free",
    "forget_paths",
    "install_finder",
    "publish",
    "unpublish",
]

PARENTS = ("tvm.backend", "tvm.tirx")
# alias name -> the real package's module name; owned by the backend that published it.
ALIASES: Registry[str, str] = Registry("module alias")
# "<alias>.<sub.path>" -> the module(s) that path stands for; owned by the backend that declared it.
SUBMODULES: Registry[str, tuple[str, ...]] = Registry("module path alias")


class _AliasLoader:  # a Loader; not importlib.abc.Loader, whose import costs ~9 ms
    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # Returning the real module keeps one module object per file; the import system keeps
        # its __name__, __spec__ and __path__ because they are already set.
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        return None


class AliasFinder:  # a MetaPathFinder
    """Resolves ``tvm.backend.<alias>[.<sub>]`` and ``tvm.tirx.<alias>[.<sub>]``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if len(SUBMODULES):
            key = _core_path_key(fullname) or _submodule_key(fullname)
            if key is not None:
                spec = _submodule_spec(fullname, key)
                if spec is not None:
                    return spec
        if fullname.startswith("tvm."):
            _raise_path_hint(fullname)
        split = _split(fullname)
        if split is None:
            return None
        parent, alias, tail = split
        package = ALIASES.get(alias)
        if package is None:
            _raise_hint(fullname, parent, alias)
            return None
        real_name = package + (f".{tail}" if tail else "")
        try:
            module = importlib.import_module(real_name)
        except ModuleNotFoundError as err:
            if err.name == real_name:
                return None  # the normal machinery reports "No module named ..."
            raise
        is_package = hasattr(module, "__path__")
        loader: Any = _AliasLoader(module)
        return importlib.util.spec_from_loader(fullname, loader, is_package=is_package)


CORE_PATH = "tvm."  # a SUBMODULES key starting so is a full path in core's namespace


def _core_path_key(fullname: str) -> str | None:
    """``fullname`` when a backend declared it (or paths below it) as a path in core's
    namespace and core has no such module; else None."""
    if not fullname.startswith(CORE_PATH):
        return None
    if fullname in SUBMODULES:
        return fullname
    if not any(k.startswith(fullname + ".") for k in SUBMODULES):
        return None
    parent, _, name = fullname.rpartition(".")
    return None if _real_submodule_exists(parent, name) else fullname


def _raise_path_hint(fullname: str) -> None:
    """A catalogued backend provides ``fullname`` (it is not loaded, or not installed): say
    which and how to get it, unless core has a real module there."""
    message = missing_message("module path", fullname)
    if message is None:
        return
    parent, _, name = fullname.rpartition(".")
    if _real_submodule_exists(parent, name):
        return
    raise ModuleNotFoundError(f"No module named {fullname!r}: {message}", name=fullname)


def _submodule_key(fullname: str) -> str | None:
    """``tvm.tirx.cuda.operator.x`` and ``tvm_backend_cuda.operator.x`` -> ``cuda.operator.x``."""
    split = _split(fullname)
    if split is not None:
        return f"{split[1]}.{split[2]}" if split[2] else None
    head, _, rest = fullname.partition(".")
    if not rest:
        return None
    for alias, package in ALIASES.items():
        if package == head:
            return f"{alias}.{rest}"
    return None


def _submodule_spec(fullname: str, key: str) -> Any:
    targets = SUBMODULES.get(key)
    if targets is None:
        below = sorted(k for k in SUBMODULES if k.startswith(key + "."))
        if not below:
            return None
        module = ModuleType(fullname, f"The module path {fullname}: a package of aliases ("
                                      f"{', '.join(k[len(key) + 1:] for k in below)}).")
        module.__path__ = []
        loader: Any = _AliasLoader(module)
        return importlib.util.spec_from_loader(fullname, loader, is_package=True)
    modules = [_import_target(fullname, name) for name in targets]
    below = sorted(k[len(key) + 1:] for k in SUBMODULES if k.startswith(key + "."))
    module = modules[0] if len(modules) == 1 and not below else _merged(fullname, modules)
    if below and not hasattr(module, "__path__"):
        # paths declared under this one (a family's variants): a package of them, with the
        # public names of what this path stands for
        module.__path__ = []  # type: ignore[attr-defined]  # a fresh module's namespace
        module.__doc__ = f"{module.__doc__} Below it: {', '.join(below)}."
    alias_loader: Any = _AliasLoader(module)
    return importlib.util.spec_from_loader(fullname, alias_loader,
                                           is_package=hasattr(module, "__path__"))


def _import_target(fullname: str, name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        raise ImportError(f"{fullname} is an alias of {name}, which this installation does not "
                          "have (reinstall the backend's distribution)", name=fullname) from None


def _merged(fullname: str, modules: list[ModuleType]) -> ModuleType:
    """One module with the public names of ``modules`` (a name several define: the first's)."""
    merged = ModuleType(fullname, f"The module path {fullname}: the public names of "
                                  f"{', '.join(m.__name__ for m in modules)}.")
    exported: list[str] = []
    for module in modules:
        names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            if name not in exported:
                setattr(merged, name, getattr(module, name))
                exported.append(name)
    merged.__all__ = exported  # type: ignore[attr-defined]  # a fresh module's namespace
    merged.MODULES = tuple(modules)  # type: ignore[attr-defined]  # the modules it merges
    return merged


def _split(fullname: str) -> tuple[str, str, str] | None:
    for parent in PARENTS:
        if fullname.startswith(parent + "."):
            alias, _, tail = fullname[len(parent) + 1 :].partition(".")
            if alias and not alias.startswith("_"):
                return parent, alias, tail
    return None


def _raise_hint(fullname: str, parent: str, alias: str) -> None:
    message = install_hint_for_backend(alias)  # a known backend that is not loaded, or None
    if message is None or _real_submodule_exists(parent, alias):
        return
    raise ModuleNotFoundError(f"No module named {fullname!r}: {message}", name=fullname)


def _real_submodule_exists(parent: str, name: str) -> bool:
    module = sys.modules.get(parent)
    search = getattr(module, "__path__", None)
    if search is None:
        return False
    spec = importlib.machinery.PathFinder.find_spec(f"{parent}.{name}", list(search))
    return spec is not None


class _CoreLoader:  # a Loader
    """Runs a core module's top level as core (see :class:`CoreImportFinder`)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        with core_scope():
            self._loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:
        # get_source, get_resource_reader, is_package, ...: the real loader answers.
        return getattr(self._loader, name)


class CoreImportFinder:  # a MetaPathFinder
    """While a backend registers, import ``tvm.*`` modules as core (owner "core", no rollback)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if current_owner() == CORE_OWNER or not fullname.startswith("tvm."):
            return None
        split = _split(fullname)
        if split is not None and split[1] in ALIASES:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, (AliasFinder, CoreImportFinder)):
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _CoreLoader(spec.loader)
                return spec
        return None


def install_finder() -> None:
    """Put the alias finder first on ``sys.meta_path`` and the core-import finder second."""
    ours = [f for f in sys.meta_path if isinstance(f, (AliasFinder, CoreImportFinder))]
    if len(ours) == 2:
        return
    sys.meta_path[:] = [
        f for f in sys.meta_path if not isinstance(f, (AliasFinder, CoreImportFinder))
    ]
    sys.meta_path[0:0] = [AliasFinder(), CoreImportFinder()]


def _parent_module(parent: str) -> ModuleType | None:
    module = sys.modules.get(parent)
    if module is not None:
        return module
    try:
        return importlib.import_module(parent)
    except ImportError:
        return None  # tvm.tirx may not exist in a stripped-down core; the backend alias still works


def check_path_free(path: str) -> None:
    """Raise if a backend's path ``path`` in core's namespace would shadow a core module."""
    parts = path.split(".")
    for end in range(1, len(parts)):
        parent, name = ".".join(parts[:end]), parts[end]
        if _parent_module(parent) is None or not _real_submodule_exists(parent, name):
            return
    raise ValueError(f"module path {path!r} would shadow the module {path}")


def forget_paths(paths: list[str]) -> None:
    """Remove the modules imported through a backend's ``paths`` in core's namespace, and the
    alias packages made above them, from ``sys.modules`` and from their parents."""
    for path in paths:
        parts = path.split(".")
        names = [path] + [".".join(parts[:end]) for end in range(len(parts) - 1, 1, -1)]
        for name in names:
            module = sys.modules.get(name)
            made = name == path or isinstance(getattr(getattr(module, "__spec__", None),
                                                      "loader", None), _AliasLoader)
            if module is None or not made:
                continue
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if getattr(sys.modules.get(parent), child, None) is module:
                delattr(sys.modules[parent], child)


def check_free(alias: str, package: str) -> None:
    """Raise if publishing ``alias`` would shadow something real in a parent package."""
    if alias.startswith("_") or not alias.isidentifier():
        raise ValueError(f"module alias {alias!r} must be a public identifier")
    for parent in PARENTS:
        module = _parent_module(parent)
        if module is None:
            continue
        existing = getattr(module, alias, None)
        if existing is not None and getattr(existing, "__name__", None) != package:
            raise ValueError(f"module alias {alias!r} would shadow {parent}.{alias}")
        if existing is None and _real_submodule_exists(parent, alias):
            raise ValueError(f"module alias {alias!r} would shadow the module {parent}.{alias}")


def publish(alias: str, module: ModuleType) -> None:
    """Make ``module`` importable and reachable as ``<parent>.<alias>`` for every parent."""
    install_finder()
    for parent in PARENTS:
        sys.modules[f"{parent}.{alias}"] = module
        parent_module = _parent_module(parent)
        if parent_module is not None:
            setattr(parent_module, alias, module)


def unpublish(alias: str, module: ModuleType | None = None) -> None:
    """Remove ``alias`` (and any submodule imported through it) from both parents."""
    for parent in PARENTS:
        prefix = f"{parent}.{alias}"
        for key in [k for k in list(sys.modules) if k == prefix or k.startswith(prefix + ".")]:
            del sys.modules[key]
        parent_module = sys.modules.get(parent)
        current = getattr(parent_module, alias, None) if parent_module is not None else None
        if current is not None and (module is None or current is module):
            delattr(parent_module, alias)
