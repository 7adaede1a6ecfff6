"""Who may be which backend (issue 16): two distributions offering one backend name are a
conflict reported with both names; no distribution but tvm-core may take the name of a backend
built into tvm-core; a plugin that raises SystemExit (or any BaseException but Ctrl-C) at import
or in a hook is contained like any other failure."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import tvm.backend
from tvm.backend._discovery import EntryPointInfo
from tvm.error import BackendError

CORE_SRC = Path(tvm.__file__).resolve().parent.parent

KIND = """
@hookimpl
def tvm_target_kinds():
    from tvm.target import TargetKind
    return [TargetKind("{kind}")]
"""


def _second_dist(backends, name: str, package: str, dist: str, source: str) -> EntryPointInfo:
    """A second distribution offering backend ``name`` from its own package."""
    backends.package(package, {"plugin.py": "from tvm.plugin import hookimpl\n" + source})
    ep = EntryPointInfo(name, f"{package}.plugin", dist, "2.0")
    backends.entries.append(ep)
    return ep


def _autoload_warnings() -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tvm.backend._autoload()
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("name", ["dupe", "cuda"])
def test_two_distributions_offering_one_name_is_a_reported_conflict(backends, name):
    if f"tvm_backend_{name}" in sys.modules:
        pytest.skip(f"the real tvm_backend_{name} is imported in this process; the conflict over "
                    "its name is checked in the core session, where it is not installed")
    backends.add(name, KIND.format(kind=f"{name}_first"), dist=f"tvm-backend-{name}")
    _second_dist(backends, name, f"other_{name}", f"someone-elses-{name}",
                 KIND.format(kind=f"{name}_2"))
    messages = _autoload_warnings()
    assert any(f"two distributions offer a backend named '{name}': tvm-backend-{name} and "
               f"someone-elses-{name}; tvm-backend-{name} (first on sys.path) is used and "
               f"someone-elses-{name} is ignored" in m for m in messages), messages
    assert tvm.backend.is_loaded(name)
    from tvm.target import KIND_REGISTRY

    assert f"{name}_first" in KIND_REGISTRY and f"{name}_2" not in KIND_REGISTRY
    rows = [r for r in tvm.backend.list_backends() if r.name == name
            and r.state != "not installed"]
    assert [(r.distribution, r.state) for r in rows] == [(f"tvm-backend-{name}", "loaded"),
                                                         (f"someone-elses-{name}", "failed")]
    assert f"tvm-backend-{name}" in rows[1].reason


def test_the_conflict_is_an_error_in_strict_mode(backends, monkeypatch):
    backends.add("dupe", KIND.format(kind="dupe_a"), dist="tvm-backend-dupe")
    _second_dist(backends, "dupe", "other_dupe", "someone-elses-dupe", KIND.format(kind="dupe_b"))
    monkeypatch.setenv("TVM_BACKENDS_STRICT", "1")
    with pytest.raises(BackendError, match="two distributions offer a backend named 'dupe'"):
        tvm.backend._autoload()


@pytest.mark.parametrize("first", [True, False])
def test_no_distribution_but_tvm_core_may_be_backend_c(backends, first):
    evil = EntryPointInfo("c", "evil_c.plugin", "evil-c", "6.6")
    backends.package("evil_c", {"plugin.py": "raise RuntimeError('never imported')\n"})
    core = EntryPointInfo("c", "tvm.host.plugin", "tvm-core", "0.1.0")
    backends.entries.extend([evil, core] if first else [core, evil])
    messages = _autoload_warnings()
    assert any("evil-c offers a backend named 'c', which is the name of tvm-core's built-in "
               "backend; evil-c is ignored" in m for m in messages), messages
    chosen = backends.loader.backends["c"]
    assert chosen.entry.distribution == "tvm-core" and chosen.entry.value == "tvm.host.plugin"
    assert "evil_c.plugin" not in sys.modules  # never imported (it would raise)
    assert "never imported" not in chosen.reason


def test_in_process_plugins_cannot_take_a_built_in_name(backends):
    import types

    with pytest.raises(BackendError, match="backend name 'c' belongs to tvm-core's built-in"):
        tvm.backend.register_plugin(types.ModuleType("fake_c"), "c", distribution="mine")


@pytest.mark.parametrize("raised", ["SystemExit(3)", "GeneratorExit()",
                                    "type('Custom', (BaseException,), {})('custom')"])
def test_base_exceptions_at_import_are_contained(backends, raised):
    backends.add("exits", f"raise {raised}\n")
    messages = _autoload_warnings()
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "exits"]
    assert record.state == "failed"
    assert record.reason.startswith("importing 'tvm_backend_exits.plugin' raised ")
    assert any("backend 'exits'" in m for m in messages)
    with pytest.raises(BackendError, match="was not loaded"):
        tvm.backend.load("exits")


def test_system_exit_in_a_registration_hook_is_contained_and_rolled_back(backends):
    backends.add("hookexit", KIND.format(kind="hookexit_kind") + """
@hookimpl
def tvm_register_ops():
    raise SystemExit("bye")
""")
    with pytest.raises(BackendError, match="registration raised SystemExit: bye"):
        tvm.backend.load("hookexit")
    from tvm.target import KIND_REGISTRY

    assert "hookexit_kind" not in KIND_REGISTRY


def test_system_exit_in_backend_info_is_contained(backends):
    backends.add("infoexit", """
@hookimpl
def tvm_backend_info():
    raise SystemExit(1)
""")
    with pytest.raises(BackendError, match="tvm_backend_info raised SystemExit"):
        tvm.backend.load("infoexit")


def test_keyboard_interrupt_is_not_swallowed(backends):
    backends.add("ctrlc", "raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        tvm.backend.load("ctrlc")


# -- end to end: real entry points on sys.path, a fresh `import tvm` ---------------------------
def _install(site: Path, dist: str, entry: str, package: str, source: str) -> None:
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n\n")
    (info / "entry_points.txt").write_text(f"[tvm.backends]\n{entry} = {package}.plugin\n")
    (site / package).mkdir()
    (site / package / "__init__.py").write_text("")
    (site / package / "plugin.py").write_text(textwrap.dedent(source))


def _run(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(CORE_SRC)])}
    env.pop("TVM_BACKENDS", None)
    env.pop("TVM_BACKENDS_STRICT", None)
    return subprocess.run([sys.executable, "-W", "always", "-c", code], env=env,
                          capture_output=True, text=True, timeout=120)


def test_import_tvm_survives_a_plugin_that_exits_and_one_named_c(tmp_path):
    site = tmp_path / "site"
    _install(site, "exiting-plugin", "exiting", "exiting_plugin", "raise SystemExit(7)\n")
    _install(site, "fake-host", "c", "fake_host", """
        from tvm.plugin import hookimpl

        @hookimpl
        def tvm_target_kinds():
            raise RuntimeError("the fake host must never register")
        """)
    kernel = ("from tvm.script import tirx as T\n@T.prim_func\n"
              "def f(A: T.Buffer((4,), 'float32')):\n"
              "    for i in range(4):\n        A[i] = A[i] + 1.0\n")
    code = textwrap.dedent(f"""
        import numpy as np
        import tvm
        from tvm.script import from_source

        a = np.zeros(4, "float32")
        tvm.compile(from_source({kernel!r}), target="c")(a)  # tvm-core's host, not fake-host
        assert (a == 1).all()
        rows = {{(r.name, r.distribution): r.state for r in tvm.backend.list_backends()}}
        print(sorted(rows.items()))
        """)
    proc = _run(site, code)
    assert proc.returncode == 0, proc.stderr
    assert "('exiting', 'exiting-plugin'), 'failed'" in proc.stdout
    assert "('c', 'fake-host'), 'failed'" in proc.stdout
    assert "importing 'exiting_plugin.plugin' raised SystemExit: 7" in proc.stderr
    assert "fake-host offers a backend named 'c'" in proc.stderr
