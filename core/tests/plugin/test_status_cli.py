"""list_backends(), its table, and ``python -m tvm backends``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tvm.backend
from tvm.__main__ import main
from tvm._hints import install_hint

SRC = str(Path(tvm.__file__).resolve().parent.parent)

KIND = """
@hookimpl
def tvm_target_kinds():
    from tvm.target import TargetKind
    return [TargetKind("alpha_kind")]

@hookimpl
def tvm_target_tags():
    return {"alpha/one": {"kind": "alpha_kind"}, "alpha/two": {"kind": "alpha_kind"}}
"""


def test_records_and_table(backends):
    backends.add("alpha", KIND)
    backends.add("broken", "raise ImportError('no sdk here')\n")
    with pytest.warns(RuntimeWarning, match="tvm-backend-broken 1.0"):
        assert tvm.backend.load_all() == ["broken"]
    records = {r.name: r for r in tvm.backend.list_backends()}
    assert records["alpha"].state == "loaded" and records["alpha"].n_tags == 2
    assert records["broken"].state == "failed"
    assert "ImportError: no sdk here" in records["broken"].reason
    for name in ("cuda", "trn", "metal"):
        assert records[name].state == "not installed"
        assert records[name].distribution == f"tvm-backend-{name}"
    table = tvm.backend.format_table(list(records.values()))
    lines = table.splitlines()
    assert lines[0].split() == [
        "backend",
        "distribution",
        "version",
        "state",
        "kinds",
        "tags",
        "namespaces",
        "pipelines",
        "ops",
        "dispatch",
    ]
    alpha = next(line for line in lines if line.startswith("alpha "))
    assert alpha.split()[:6] == ["alpha", "tvm-backend-alpha", "1.0", "loaded", "alpha_kind", "2"]
    assert (
        "  broken: importing 'tvm_backend_broken.plugin' raised ImportError: no sdk here" in lines
    )


def test_cli_in_process(backends, capsys):
    backends.add("alpha", KIND)
    tvm.backend.load("alpha")
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    assert "alpha" in out and "tvm-backend-alpha" in out
    assert main(["backends", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (alpha,) = [d for d in data if d["name"] == "alpha"]
    assert alpha["state"] == "loaded" and alpha["target_kinds"] == ["alpha_kind"]
    assert set(alpha) >= {
        "name",
        "distribution",
        "version",
        "state",
        "reason",
        "n_tags",
        "namespaces",
        "pipelines",
        "n_ops",
        "n_dispatch",
        "overrides",
    }


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "tvm", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_cli_subprocess_json():
    proc = _run("backends", "--json")
    assert proc.returncode == 0, proc.stderr
    names = {d["name"]: d for d in json.loads(proc.stdout)}
    for name in ("cuda", "trn", "metal"):
        assert name in names


def test_cli_demo_without_demo_module():
    import importlib.util

    if importlib.util.find_spec("tvm.demo") is not None:
        return  # the demo exists in this checkout; its own tests cover it
    proc = _run("demo")
    assert proc.returncode == 2
    assert "no tvm.demo module" in proc.stderr


def test_missing_message(backends):
    backends.add("alpha", KIND)
    assert tvm.backend.missing_message("script namespace", "ptx") == (
        "no installed backend provides script namespace 'ptx'; "
        f"{install_hint('tvm-backend-cuda')} (installed: alpha)"
    )
    assert tvm.backend.missing_message("backend", "metal").startswith(
        f"backend 'metal' is not installed; {install_hint('tvm-backend-metal')}"
    )
    assert tvm.backend.missing_message("script namespace", "nothing") is None
    assert tvm.backend.missing_message("backend", "alpha").startswith(
        "backend 'alpha' (tvm-backend-alpha 1.0) is installed but not loaded"
    )
    tvm.backend.load("alpha")
    assert tvm.backend.missing_message("backend", "alpha") is None


def test_missing_message_for_installed_but_disabled(backends, monkeypatch):
    backends.add("cuda", KIND.replace("alpha", "cudafake"), dist="tvm-backend-cuda")
    monkeypatch.setenv("TVM_BACKENDS", "0")
    tvm.backend._autoload()
    assert tvm.backend.missing_message("target kind", "cuda") == (
        "target kind 'cuda' is provided by backend 'cuda' (tvm-backend-cuda), which is installed "
        "but not loaded (not selected (TVM_BACKENDS='0')); call tvm.backend.load('cuda')"
    )
