"""tvm.autotune on the host target: correctness before speed, the record it keeps, reuse by a
later process without measuring, TVM_AUTOTUNE=0, failures, parallel compiles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvm
from tvm import autotune
from tvm.error import AutotuneError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tune_kernels import scale_func  # noqa: E402

N = 4096


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TVM_AUTOTUNE", raising=False)
    return tmp_path


def _runner() -> tuple[Any, Any, Any]:
    a = np.arange(N, dtype=np.float32)
    b = np.zeros(N, dtype=np.float32)

    def run(ex: Any) -> Any:
        b.fill(np.nan)  # before each candidate's first call: old answers do not count
        return lambda: ex(a, b)

    def check(ex: Any) -> bool:
        return bool(np.array_equal(b, a * 2))

    return run, check, b


def test_the_fastest_correct_candidate_wins_and_is_recorded(cache: Path) -> None:
    run, check, _ = _runner()
    # timed in rounds, the candidates taking turns; the wrong candidate (last) is never
    # timed: correctness comes first
    said = [3e-3, 1e-3, 2e-3]
    seen: list[int] = []

    def timer(call: Any) -> float:
        seen.append(len(seen))
        return said[(len(seen) - 1) % 3]

    cands = [{"unroll": 1}, {"unroll": 4}, {"unroll": 8}, {"unroll": 2, "wrong": True}]
    res = autotune.tune("scale", scale_func, (N, "float32"), cands, target="c", run=run,
                        check=check, timer=timer, workers=1)
    assert res.measured and res.config == {"unroll": 4}
    assert res.executable is not None
    assert len(seen) == 3 * autotune.ROUNDS  # the wrong candidate was never timed
    record = json.loads(res.record.read_text())
    assert res.record.parent == cache / "autotune"
    assert record["kernel"] == "scale" and record["args"] == [N, "float32"]
    assert record["best"] == {"unroll": 4}
    assert record["versions"]["tvm"] == tvm.__version__
    assert set(record["device"]) == {"name", "driver"}
    wrong = [r for r in record["results"] if r["config"].get("wrong")]
    assert wrong[0]["ms"] is None and "wrong answer" in wrong[0]["error"]
    assert [r["ms"] for r in record["results"][:3]] == [3.0, 1.0, 2.0]
    # the same search again reads the record: nothing compiled or measured
    before = dict(autotune.stats)
    again = autotune.tune("scale", scale_func, (N, "float32"), cands, target="c",
                          run=run, check=check, timer=timer)
    assert not again.measured and again.config == {"unroll": 4} and again.executable is None
    assert autotune.stats["compiled"] == before["compiled"]
    assert autotune.stats["reused"] == before["reused"] + 1
    # both answers are in the process's history, for a benchmark to say what it ran
    assert [(h["kernel"], h["args"], h["config"], h["measured"], h["record"])
            for h in autotune.history[-2:]] == [
        ("scale", [N, "float32"], {"unroll": 4}, True, res.record),
        ("scale", [N, "float32"], {"unroll": 4}, False, res.record)]


def test_autotune_off_returns_the_default(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVM_AUTOTUNE", "0")
    run, check, _ = _runner()

    def timer(call: Any) -> float:
        raise AssertionError("TVM_AUTOTUNE=0 must not measure")

    res = autotune.tune("scale", scale_func, (N, "float32"), [{"unroll": 2}, {"unroll": 4}],
                        target="c", run=run, check=check, timer=timer)
    assert res.config == {"unroll": 2} and not res.measured and res.record is None
    assert not (cache / "autotune").exists()


def test_a_search_where_nothing_works_says_why(cache: Path) -> None:
    run, check, _ = _runner()
    with pytest.raises(AutotuneError) as info:
        autotune.tune("scale", scale_func, (N, "float32"),
                      [{"unroll": 3}, {"unroll": 2, "wrong": True}], target="c", run=run,
                      check=check, workers=1)
    msg = str(info.value)
    assert "autotune scale [4096, 'float32']: no candidate" in msg
    assert "{'unroll': 3}: ValueError: unroll=3 does not divide n=4096" in msg
    assert "{'unroll': 2, 'wrong': True}: AutotuneError: wrong answer" in msg
    with pytest.raises(AutotuneError, match="no candidates"):
        autotune.tune("scale", scale_func, (N,), [], target="c", run=run)


def test_a_damaged_record_is_measured_again(cache: Path) -> None:
    run, check, _ = _runner()
    path = autotune.record_path("scale", (N, "float32"))
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    res = autotune.tune("scale", scale_func, (N, "float32"), [{"unroll": 1}], target="c",
                        run=run, check=check)
    assert res.measured and json.loads(path.read_text())["best"] == {"unroll": 1}


def test_candidates_compile_in_worker_processes(cache: Path) -> None:
    run, check, _ = _runner()
    res = autotune.tune("scale", scale_func, (N, "float32"), [{"unroll": 1}, {"unroll": 8}],
                        target="c", run=run, check=check, workers=2)
    assert res.measured and res.config in ({"unroll": 1}, {"unroll": 8})
    assert all(r["ms"] is not None for r in res.results)
    assert "* 2" in res.executable.inspect_source()


SCRIPT = """
import json, sys
sys.path.insert(0, {here!r})
import numpy as np
from tvm import autotune
from tune_kernels import scale_func

a = np.arange(4096, dtype=np.float32)
b = np.zeros(4096, dtype=np.float32)
def timer(call):
    if {forbid}:
        raise AssertionError("measured")
    return autotune.wall_timer(call)
res = autotune.tune("scale", scale_func, (4096, "float32"),
                    [{{"unroll": 1}}, {{"unroll": 4}}, {{"unroll": 8}}], target="c",
                    run=lambda ex: (lambda: ex(a, b)),
                    check=lambda ex: bool(np.array_equal(b, a * 2)), timer=timer)
print(json.dumps({{"measured": res.measured, "config": res.config, "stats": autotune.stats}}))
"""


def test_a_second_process_reuses_the_record(cache: Path) -> None:
    env = {**os.environ, "TVM_CACHE_DIR": str(cache)}
    out = []
    for forbid in (False, True):
        proc = subprocess.run([sys.executable, "-c", SCRIPT.format(here=str(HERE), forbid=forbid)],
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, second = out
    assert first["measured"] and first["stats"]["measured"] == 1
    assert first["stats"]["compiled"] == 3
    assert not second["measured"] and second["config"] == first["config"]
    assert second["stats"] == {"measured": 0, "reused": 1, "compiled": 0}


def test_progress_line_on_a_long_search(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(autotune, "PROGRESS_AFTER_S", 0.0)
    run, check, _ = _runner()
    autotune.tune("scale", scale_func, (N, "float32"), [{"unroll": 1}, {"unroll": 2}],
                  target="c", run=run, check=check, workers=1)
    err = capsys.readouterr().err
    assert "tvm.autotune: scale [4096, 'float32']: 2 candidates, compiling 1/2" in err
    assert "tvm.autotune: scale [4096, 'float32']: 2 candidates: done in" in err


def test_a_candidate_that_writes_nothing_is_not_picked(cache: Path) -> None:
    run, check, _ = _runner()
    timed: list[Any] = []

    def timer(call: Any) -> float:
        timed.append(call)
        return 5e-3 if len(timed) == 1 else 1e-9  # the idle one would be "fastest"

    res = autotune.tune("scale", scale_func, (N, "float32"),
                        [{"unroll": 1}, {"unroll": 1, "idle": True}], target="c", run=run,
                        check=check, timer=timer, workers=1)
    assert res.config == {"unroll": 1}
    assert "wrong answer" in res.results[1]["error"]
    assert len(set(map(id, timed))) == 1  # only the correct one was timed


def test_candidates_are_timed_in_turns_and_keep_their_median(cache: Path) -> None:
    """A machine that slows down during the search (clocks, heat, another process) must not
    decide it: each round times every candidate once, and each keeps its median."""
    run, check, _ = _runner()
    order: list[int] = []
    calls: dict[int, int] = {}

    def timer(call: Any) -> float:
        i = calls.setdefault(id(call), len(calls))
        order.append(i)
        # candidate 1 is the faster one, but its first round ran while the machine was slow
        drift = 10e-3 if len(order) == 2 else 0.0
        return (2e-3 if i == 0 else 1e-3) + drift

    res = autotune.tune("scale", scale_func, (N, "float32"), [{"unroll": 1}, {"unroll": 4}],
                        target="c", run=run, check=check, timer=timer, workers=1)
    assert order == [0, 1] * autotune.ROUNDS
    assert res.config == {"unroll": 4}
    assert [r["ms"] for r in res.results] == [2.0, 1.0]
