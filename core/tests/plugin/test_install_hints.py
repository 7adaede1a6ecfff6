"""Install hints work as printed (issue 27): this project's distributions are not on a package
index, so every hint points pip at the wheels of scripts/build_wheels.sh."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tvm import _hints
from tvm._hints import install_command, install_hint

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "build_wheels.sh").write_text("#!/bin/sh\n")
    monkeypatch.setattr(_hints, "_checkout", lambda: tmp_path)
    monkeypatch.setattr(_hints, "_pip", lambda: "pip")
    return tmp_path


def test_checkout_without_wheels_builds_them_first(checkout):
    assert install_command("tvm-backend-cuda") == (
        f"bash {checkout}/scripts/build_wheels.sh && pip install --find-links {checkout}/dist "
        "tvm-backend-cuda")


def test_checkout_with_the_wheel_installs_from_dist(checkout):
    (checkout / "dist").mkdir()
    (checkout / "dist" / "tvm_backend_cuda-0.1.0-py3-none-any.whl").write_bytes(b"")
    assert install_command("tvm-backend-cuda") == (
        f"pip install --find-links {checkout}/dist tvm-backend-cuda")
    assert install_command("tvm-backend-cuda[nvshmem]", upgrade=True) == (
        f"pip install -U --find-links {checkout}/dist 'tvm-backend-cuda[nvshmem]'")
    # another distribution's wheel is not there: it is built first
    assert install_command("tvm-backend-trn").startswith("bash ")
    assert install_hint("tvm-backend-cuda") == (
        f"install it with 'pip install --find-links {checkout}/dist tvm-backend-cuda'")


def test_without_a_checkout_the_hint_says_where_to_run_it(monkeypatch):
    monkeypatch.setattr(_hints, "_checkout", lambda: None)
    monkeypatch.setattr(_hints, "_pip", lambda: "pip")
    assert install_hint("tvm-backend-trn") == (
        "install it with 'bash scripts/build_wheels.sh && pip install --find-links dist "
        "tvm-backend-trn' in a checkout of tvm (its distributions are not on a package index)")


def test_pip_is_this_interpreters():
    pip = _hints._pip()
    assert pip == "pip" or pip == f"{sys.executable} -m pip"


def test_this_checkout_is_found():
    if not (ROOT / "core" / "src" / "tvm" / "_hints.py").samefile(_hints.__file__):
        pytest.skip("tvm is not imported from this checkout (an installed wheel)")
    assert _hints._checkout() == ROOT
    assert (ROOT / "scripts" / "build_wheels.sh").is_file()


def test_cli_notes_and_errors_use_it(monkeypatch, checkout):
    import tvm.backend  # noqa: PLC0415 - beside its use

    records = {r.name: r for r in tvm.backend.list_backends()}
    missing = [r for r in records.values() if r.state == "not installed"]
    if not missing:
        pytest.skip("every catalogued backend is installed")
    r = missing[0]
    assert r.reason == install_command(r.distribution)
