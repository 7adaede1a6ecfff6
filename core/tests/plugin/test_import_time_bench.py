"""bench/import_time.py (a benchmark, not a timed test): it runs and reports what it measures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "bench" / "import_time.py"
SRC = str(ROOT / "core" / "src")


@pytest.mark.slow
@pytest.mark.skipif(not BENCH.exists(), reason="not a source checkout (no bench/)")
def test_import_time_bench_runs_and_reports_a_median() -> None:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "TVM_BACKENDS": "none"}
    proc = subprocess.run([sys.executable, str(BENCH), "--runs", "3"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert re.search(r"^import tvm \(median\)\s+\d+(\.\d+)? ms$", out, re.M), out
    # The light-import rule the budget depends on.
    assert re.search(r"^numpy imported by import tvm\s+no$", out, re.M), out
