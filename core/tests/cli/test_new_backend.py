"""``python -m tvm new-backend NAME`` (issue 27): a renamed copy of the template backend that
passes its own tests and the layout check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tvm import _hints
from tvm.__main__ import main
from tvm._new_backend import new_backend, renamings, template_dir
from tvm.testing.layout import layout_problems

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def template():
    try:
        return template_dir()
    except FileNotFoundError as err:
        pytest.skip(str(err))


def test_renamings():
    assert renamings("my_chip") == [
        ("tvm-backend-example", "tvm-backend-my-chip"), ("tvm_backend_example", "tvm_backend_my_chip"),
        ("Example", "MyChip"), ("EXAMPLE", "MY_CHIP"), ("example", "my_chip")]


@pytest.mark.parametrize("bad", ["MyChip", "9chip", "my-chip", "", "example"])
def test_bad_names_are_refused(bad, tmp_path, template):
    with pytest.raises(ValueError, match="use a lower-case identifier"):
        new_backend(bad, tmp_path / "x")


def test_existing_folder_is_refused(tmp_path, template):
    (tmp_path / "x").mkdir()
    with pytest.raises(FileExistsError, match="exists already"):
        new_backend("chip", tmp_path / "x")


def test_without_a_checkout_says_how(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(_hints, "_checkout", lambda: None)
    assert main(["new-backend", "chip", "--dest", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "tvm new-backend: the template backend lives in a tvm checkout" in err
    assert "pass --template <checkout>/plugins/tvm-backend-example" in err


def test_copy_is_renamed_everywhere_and_passes_its_tests(tmp_path, template, capsys):
    dest = tmp_path / "tvm-backend-mychip"
    assert main(["new-backend", "mychip", "--dest", str(dest)]) == 0
    assert f"created {dest}: backend 'mychip'" in capsys.readouterr().out
    leftovers = [str(p.relative_to(dest)) for p in dest.rglob("*")
                 if "example" in p.name.lower()
                 or (p.is_file() and "example" in p.read_text(errors="replace").lower())]
    assert leftovers == []
    assert not list(dest.rglob("__pycache__"))
    package = dest / "src" / "tvm_backend_mychip"
    assert layout_problems(package) == []
    assert 'mychip = "tvm_backend_mychip.plugin"' in (dest / "pyproject.toml").read_text()
    assert sorted(p.name for p in (dest / "tests").glob("test_*.py")) == [
        "test_conformance_mychip.py", "test_mychip.py", "test_mychip_build.py"]
    # its own tests, the conformance kit and the layout check among them, from source
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core" / "src"),
                                                        str(dest / "src")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                           "tests"], cwd=dest, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "tests/test_mychip.py::test_file_layout PASSED" in proc.stdout
    assert "TestMychipConformance::test_gemm PASSED" in proc.stdout
