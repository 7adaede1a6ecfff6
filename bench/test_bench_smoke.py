"""Every benchmark runs in CI: each script in ``bench/`` is started the way its docstring says
(the ``PYTHONPATH=... python bench/<script>.py`` line), with ``--smoke``, in a fresh process.
A smoke run needs no GPU: the GPU benchmarks compile every kernel they would time with NVRTC and
exit; the host ones run a few small rounds. Run by ``nox -s bench``."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith(("_", "test_")))
COMMAND = re.compile(r"^\s*(?:PYTHONPATH=(\S+)\s+)?python3? (bench/\w+\.py)", re.M)


def _command(script: Path) -> tuple[str, str]:
    """(PYTHONPATH or '', script path) from the first command line of the docstring."""
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    for m in COMMAND.finditer(doc):
        if m.group(2) == f"bench/{script.name}":
            return m.group(1) or "", m.group(2)
    raise AssertionError(f"{script.name}: its docstring has no 'python bench/{script.name}' "
                         "command line saying how to start it")


def test_every_script_says_how_to_start_it() -> None:
    assert len(SCRIPTS) >= 9, [p.name for p in SCRIPTS]
    for script in SCRIPTS:
        _command(script)
        assert "--smoke" in script.read_text(encoding="utf-8"), f"{script.name}: no --smoke"


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_smoke(script: Path) -> None:
    pythonpath, path = _command(script)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.run([sys.executable, path, "--smoke"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{path} --smoke failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{path} --smoke printed nothing"
