"""The host backend registers like any backend; the main job's table and exit code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import tvm
from tvm import demo
from tvm.error import TargetError
from tvm.plugin import DemoCase, DemoResult, get_plugin_manager
from tvm.target import Target


def test_host_backend_registers_kind_c_through_hooks() -> None:
    tvm.driver.ensure_builtin_backends()
    assert tvm.backend.is_loaded("c")
    t = Target("c")
    assert t.kind.device_type == "cpu" and t.keys == ("c", "cpu")
    assert dict(t.attrs) == {"opt_level": 3}
    t2 = Target({"kind": "c", "mcpu": "native", "num_threads": 4, "cc": "gcc"})
    assert t2.attrs["mcpu"] == "native" and t2.attrs["num_threads"] == 4
    with pytest.raises(TargetError, match="opt_level must be 0..3"):
        Target({"kind": "c", "opt_level": 7})
    from tvm.tirx.compilation_pipeline import get_default_tir_pipeline

    assert get_default_tir_pipeline(t) == "default"
    record = next(r for r in tvm.backend.list_backends() if r.name == "c")
    assert record.state == "loaded" and "c" in record.target_kinds


def test_host_demo_cases_come_from_the_hook() -> None:
    tvm.driver.ensure_builtin_backends()
    results = get_plugin_manager().hook.tvm_demo_cases()
    host = [c for cases in results for c in cases if c.backend == "c"]
    assert [c.name for c in host] == ["vector add", "row softmax", "tiled matmul (Tx.gemm)"]
    assert {c.target for c in host} == {"c"}


def _case(name: str, ok: bool = True, raises: bool = False) -> DemoCase:
    def run() -> DemoResult:
        if raises:
            raise RuntimeError("boom\nsecond line")
        return DemoResult(ok, 1.25, 3e-7)

    return DemoCase(name, "c", run, backend="c")


def test_table_and_exit_code(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(demo, "collect_cases", lambda targets=None: [_case("good"), _case("wrong", ok=False),
                                                        _case("crash", raises=True)])
    assert demo.main([]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["kernel", "target", "backend", "time", "(ms)", "max", "error", "ok",
                              "note"]
    assert out[2].split() == ["good", "c", "c", "1.250", "3.00e-07", "ok"]
    assert out[3].split() == ["wrong", "c", "c", "1.250", "3.00e-07", "FAIL"]
    assert out[4].split() == ["crash", "c", "c", "-", "-", "FAIL", "RuntimeError:", "boom"]
    assert out[-1] == "1 of 3 kernels correct"
    monkeypatch.setattr(demo, "collect_cases", lambda targets=None: [_case("good")])
    assert demo.main(["--kernel", "good"]) == 0
    assert demo.main(["--target", "cuda"]) == 1  # nothing selected


def _parser_available() -> bool:
    try:
        from tvm.script import tirx  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _parser_available(), reason="the TVMScript parser is not available")
def test_python_m_tvm_demo_runs_every_host_kernel(tmp_path) -> None:
    src = Path(tvm.__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "tvm", "demo"],
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(src), "TVM_CACHE_DIR": str(tmp_path),
                               "PATH": "/usr/bin:/bin:/usr/local/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("vector add", "row softmax", "tiled matmul (Tx.gemm)"):
        line = next(x for x in proc.stdout.splitlines() if x.startswith(name))
        assert " ok " in line, line
    # installed backends add their rows (GPU, simulators): every row must be correct
    assert re.search(r"^(\d+) of \1 kernels correct$", proc.stdout, re.M), proc.stdout
