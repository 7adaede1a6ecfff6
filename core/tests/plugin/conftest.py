"""Fixtures for plugin-system tests: fake installed backends without building wheels.

``backends`` gives each test a fresh loader whose discovery returns the entry points the test
declares, backed by real packages written under ``tmp_path`` (so imports, submodules and
aliases behave as for installed backends). Registries, the plugin manager, aliases and
``sys.modules`` are restored afterwards.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tvm import _registry
from tvm.backend import _aliases, _loader
from tvm.backend._discovery import EntryPointInfo
from tvm.plugin import manager as _manager

HEADER = "from tvm.plugin import BackendInfo, hookimpl\n"


class FakeBackends:
    """Declares fake installed backends for one test."""

    #: a backend's ``plugin.py`` in the seed's form: one target kind and a ``register_backend``
    #: that loads or registers it (``{name}``, ``{requires}`` filled by :meth:`seed_plugin`)
    SEED_PLUGIN = """
from tvm.plugin import hookimpl
import sys, tvm.backend

@hookimpl
def tvm_target_kinds():
    from tvm.target import TargetKind
    return [TargetKind("{name}_kind")]

def register_backend():
    return tvm.backend.load_or_register("{name}", sys.modules[__name__],
                                        distribution="tvm-backend-{name}", requires={requires})
"""

    def seed_plugin(self, name: str, requires: tuple[str, ...] = ()) -> str:
        """:data:`SEED_PLUGIN` for backend ``name`` requiring ``requires``."""
        return self.SEED_PLUGIN.format(name=name, requires=requires)

    def __init__(self, root: Path) -> None:
        self.root = root
        self.entries: list[EntryPointInfo] = []
        self.loader = _loader._Loader(scan=lambda: list(self.entries))

    def package(self, package: str, files: dict[str, str]) -> Path:
        """Write package ``package`` with ``files`` (relative name -> source)."""
        pkg = self.root / package
        pkg.mkdir(parents=True, exist_ok=True)
        files = {"__init__.py": "", **files}
        for rel, source in files.items():
            path = pkg / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        return pkg

    def add(
        self,
        name: str,
        plugin_source: str = "",
        *,
        files: dict[str, str] | None = None,
        dist: str | None = None,
        version: str = "1.0",
        value: str | None = None,
        header: bool = True,
    ) -> EntryPointInfo:
        """Declare backend ``name``: package ``tvm_backend_<name>`` whose ``plugin.py`` holds
        ``plugin_source`` (dedented, with the hookimpl import prepended)."""
        package = f"tvm_backend_{name}"
        source = (HEADER if header else "") + textwrap.dedent(plugin_source)
        self.package(package, {"plugin.py": source, **(files or {})})
        ep = EntryPointInfo(
            name,
            value or f"{package}.plugin",
            dist or f"tvm-backend-{name.replace('_', '-')}",
            version,
        )
        self.entries.append(ep)
        if self.loader.backends is not None:  # discovery already ran (a hint asked): extend it
            self.loader.backends[name] = _loader.BackendState(name, ep)
        return ep


@pytest.fixture
def backends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("TVM_BACKENDS", raising=False)
    monkeypatch.delenv("TVM_BACKENDS_STRICT", raising=False)
    restore_registries = _registry.snapshot_all()
    labels = dict(_registry.owner_labels)
    old_pm = _manager._pm
    _manager._reset_plugin_manager()
    fake = FakeBackends(tmp_path / "site")
    old_loader = _loader._set_loader(fake.loader)
    sys.path.insert(0, str(fake.root))
    before = set(sys.modules)
    try:
        yield fake
    finally:
        sys.path.remove(str(fake.root))
        _loader._set_loader(old_loader)
        _manager._pm = old_pm
        restore_registries()
        _registry.owner_labels.clear()
        _registry.owner_labels.update(labels)
        _forget_fake_modules(str(fake.root))
        _forget_alias_packages(before)


def _forget_alias_packages(before: set[str]) -> None:
    # The empty alias packages above a fake backend's module paths (tvm.tirx.<path>).
    for name in set(sys.modules) - before:
        spec = getattr(sys.modules[name], "__spec__", None)
        if isinstance(getattr(spec, "loader", None), _aliases._AliasLoader):
            module = sys.modules.pop(name)
            parent, _, child = name.rpartition(".")
            if getattr(sys.modules.get(parent), child, None) is module:
                delattr(sys.modules[parent], child)


def _forget_fake_modules(root: str) -> None:
    # Modules loaded from the fake site folder, and the alias entries that point at them.
    def is_fake(module: Any) -> bool:
        return str(getattr(module, "__file__", None) or "").startswith(root)

    for name, module in list(sys.modules.items()):
        if is_fake(module):
            del sys.modules[name]
    for parent in _aliases.PARENTS:
        module = sys.modules.get(parent)
        for attr, value in list(vars(module).items()) if module is not None else []:
            if is_fake(value):
                delattr(module, attr)
