"""``requires`` in a source checkout (``PYTHONPATH``, no installed metadata): a dependency
loads through the entry point its checkout's ``pyproject.toml`` declares, never through a
package-naming rule (``tvm_backend_<name>``)."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

import tvm.backend
from tvm.backend import _discovery
from tvm.error import BackendNotInstalledError
from tvm.target import KIND_REGISTRY


def _source_checkout(backends, project: str, package: str, name: str, requires=()) -> Path:
    """``<backends.root>/<project>``: a source checkout of a backend (``pyproject.toml``
    declaring the entry point, the package under ``src/``), not installed; returns its ``src``
    folder."""
    root = backends.root
    src = root / project / "src"
    (src / package).mkdir(parents=True)
    (src / package / "__init__.py").write_text("")
    (src / package / "plugin.py").write_text(
        backends.seed_plugin(name, requires))
    (root / project / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [project]
        name = "{project}"
        version = "0.3.0"

        [project.entry-points."tvm.backends"]
        {name} = "{package}.plugin"
        """))
    return src


def test_load_or_register_in_a_source_checkout_registers_requirements_first(
        backends, monkeypatch):
    # No installed metadata (a source checkout on PYTHONPATH): the backend registers
    # in-process; what it requires loads through the entry point its checkout's pyproject.toml
    # declares, whatever its package is called (no tvm_backend_<name> naming rule). The
    # checkouts sit in the fixture's folder, whose modules and aliases it forgets afterwards.
    monkeypatch.syspath_prepend(str(_source_checkout(backends, "tvm-backend-base",
                                                     "base_impl", "base")))
    monkeypatch.syspath_prepend(str(_source_checkout(backends, "tvm-backend-top",
                                                     "tvm_backend_top", "top", ("base",))))
    importlib.invalidate_caches()
    import tvm_backend_top.plugin as top

    package = top.register_backend()
    assert package.__name__ == "tvm_backend_top"
    assert tvm.backend.is_loaded("base") and tvm.backend.is_loaded("top")
    assert "base_kind" in KIND_REGISTRY and "top_kind" in KIND_REGISTRY
    assert top.register_backend() is package  # idempotent
    rows = {r.name: r for r in tvm.backend.list_backends()}
    assert rows["top"].distribution == "tvm-backend-top"
    assert (rows["base"].distribution, rows["base"].version) == ("tvm-backend-base", "0.3.0")
    assert "base_impl.plugin" in sys.modules  # loaded as its entry point says


def test_a_requirement_missing_from_the_source_checkout_fails_the_backend(backends, monkeypatch):
    monkeypatch.syspath_prepend(str(_source_checkout(backends, "tvm-backend-lone",
                                                     "tvm_backend_lone", "lone", ("absent",))))
    importlib.invalidate_caches()
    import tvm_backend_lone.plugin as lone

    with pytest.raises(BackendNotInstalledError, match="backend 'absent' is not installed"):
        lone.register_backend()


def test_source_entry_points_read_pyproject(backends):
    src = _source_checkout(backends, "tvm-backend-x", "x_impl", "x")
    (eps,) = [_discovery.scan_source_entry_points([str(src), str(backends.root)])]
    assert eps == [_discovery.EntryPointInfo("x", "x_impl.plugin", "tvm-backend-x", "0.3.0")]
    assert _discovery.source_entry_point("x", [str(src)]) == eps[0]
    assert _discovery.source_entry_point("y", [str(src)]) is None
