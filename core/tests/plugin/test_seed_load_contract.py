"""The seed's backend load contract (issue 28, item 8): ``tvm.backend.load(name)`` of a package
``tvm.backend.<name>`` already in ``sys.modules`` that has a ``register_backend()``."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator

import pytest

import tvm
import tvm.backend
from tvm.backend import _aliases, _loader
from tvm.script import tirx as T
from tvm.script.namespace import NAMESPACES, register_script_namespace


class _Namespace:
    def marker(self) -> str:
        return "from the seed-style backend"


def _fake_backend(name: str, calls: list[str], *, hook: bool = True,
                  fail: bool = False) -> tuple[types.ModuleType, types.ModuleType]:
    package = types.ModuleType(f"tvm.backend.{name}")
    package.__path__ = []  # a package, as the seed's test builds it
    op = types.ModuleType(f"tvm.backend.{name}.op")
    op.marker = 42  # type: ignore[attr-defined]

    def register_backend() -> None:
        calls.append(name)
        register_script_namespace(f"{name}_ns", _Namespace())
        if fail:
            raise RuntimeError("the hook failed")

    if hook:
        package.register_backend = register_backend  # type: ignore[attr-defined]
    package.op = op  # type: ignore[attr-defined]
    return package, op


@pytest.fixture
def seed_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = "unit_seed_backend"
    yield name
    _loader._SEED_PACKAGES.pop(name, None)
    _aliases.unpublish(name)
    for key in [k for k in sys.modules if f".{name}" in k]:
        del sys.modules[key]
    if _aliases.ALIASES.get(name) is not None:
        _aliases.ALIASES.unregister(name)
    if NAMESPACES.get(f"{name}_ns") is not None:
        NAMESPACES.unregister(f"{name}_ns")


def _install(monkeypatch: pytest.MonkeyPatch, package: types.ModuleType,
             op: types.ModuleType) -> None:
    monkeypatch.setitem(sys.modules, package.__name__, package)
    monkeypatch.setitem(sys.modules, op.__name__, op)


def test_load_publishes_the_package_and_runs_its_hook_once(
        seed_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    package, op = _fake_backend(seed_backend, calls)
    _install(monkeypatch, package, op)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"tvm.tirx.{seed_backend}.op")
    assert not tvm.backend.is_loaded(seed_backend)

    assert tvm.backend.load(seed_backend) is None
    assert tvm.backend.load(seed_backend) is None
    assert calls == [seed_backend]
    assert tvm.backend.is_loaded(seed_backend)
    assert getattr(tvm.tirx, seed_backend) is package
    assert sys.modules[f"tvm.tirx.{seed_backend}"] is package
    alias_op = importlib.import_module(f"tvm.tirx.{seed_backend}.op")
    assert alias_op is op and alias_op.marker == 42
    assert alias_op.__tvm_backend_module__ is op  # the seed's proxy attribute: itself here
    # the reset hook the seed's tests use: forgetting the name lets the package load again
    assert tvm.backend._LOADED_BACKENDS[seed_backend] is package
    assert getattr(T, f"{seed_backend}_ns").marker() == "from the seed-style backend"


def test_a_missing_package_is_an_import_error_in_the_seed_words() -> None:
    with pytest.raises(ImportError) as info:
        tvm.backend.load("no_such_seed_backend")
    text = str(info.value)
    assert text.startswith("Cannot load TVM backend 'no_such_seed_backend': expected Python "
                           "package 'tvm.backend.no_such_seed_backend'")
    assert "pip install" in text and "tvm-backend-no-such-seed-backend" in text  # our hint


def test_a_package_without_the_hook_is_an_attribute_error(
        seed_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    package, op = _fake_backend(seed_backend, [], hook=False)
    _install(monkeypatch, package, op)
    with pytest.raises(AttributeError) as info:
        tvm.backend.load(seed_backend)
    assert str(info.value) == (f"Backend package 'tvm.backend.{seed_backend}' has no "
                               "register_backend()")
    assert not tvm.backend.is_loaded(seed_backend)


def test_a_failing_hook_is_undone(seed_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    package, op = _fake_backend(seed_backend, calls, fail=True)
    _install(monkeypatch, package, op)
    with pytest.raises(RuntimeError, match="the hook failed"):
        tvm.backend.load(seed_backend)
    assert not tvm.backend.is_loaded(seed_backend)
    assert f"tvm.tirx.{seed_backend}" not in sys.modules
    assert not hasattr(tvm.tirx, seed_backend)
    assert NAMESPACES.get(f"{seed_backend}_ns") is None  # what the hook registered is gone
    assert sys.modules[f"tvm.backend.{seed_backend}"] is package
    # fixed, it loads
    package.register_backend = _fake_backend(seed_backend, calls)[0].register_backend  # type: ignore[attr-defined]
    assert tvm.backend.load(seed_backend) is None
    assert calls == [seed_backend, seed_backend]


def test_installed_backends_still_load_through_their_entry_points() -> None:
    tvm.backend.load("c")
    assert tvm.backend.is_loaded("c") and "c" not in _loader._SEED_PACKAGES
