"""A 500-input sample of the fuzz run in the normal test run (the full run is ``nox -s fuzz``):
generated kernels and mutants of the test kernels either round-trip exactly or fail with a
located tvm error; compiled ones run or fail with a tvm error; nothing hangs or crashes."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from fuzz_harness import Case, check, run_cases  # noqa: E402
from run_fuzz import make_cases  # noqa: E402

SAMPLE = 500
SEED = 20261203


def test_fuzz_sample_keeps_the_property() -> None:
    cases = make_cases(SAMPLE, SEED)
    report = run_cases(cases, timeout=60.0, workers=1)
    shown = "\n\n".join(f"case {c.id} ({c.origin}) {outcome}: {detail[-1500:]}\n{c.text}"
                        for c, outcome, detail in report.failures[:3])
    assert report.violations == 0, f"{report.summary()}\n\n{shown}"
    # the sample exercises every path, not only the parser's errors
    assert report.counts["roundtrip"] + report.counts["ran"] + report.counts["compiled"] > 100
    assert report.counts["located_error"] > 50
    assert report.counts["ran"] > 10


def test_the_sample_is_deterministic() -> None:
    first = [c.text for c in make_cases(20, SEED)]
    assert first == [c.text for c in make_cases(20, SEED)]
    assert first != [c.text for c in make_cases(20, SEED + 1)]


def test_a_hang_and_a_crash_are_reported_and_the_run_goes_on(monkeypatch) -> None:
    monkeypatch.setenv("TVM_FUZZ_SELFTEST", "1")  # the workers then obey __hang__ / __crash__
    cases = [Case(0, "__hang__"), Case(1, "__crash__"), Case(2, "x = 1\n")]
    report = run_cases(cases, timeout=3.0)
    assert report.counts == {"hang": 1, "crash": 1, "located_error": 1}
    assert [(c.id, outcome) for c, outcome, _ in report.failures] == [(0, "hang"), (1, "crash")]


def test_check_reports_an_unlocated_error_as_a_violation() -> None:
    assert check("x = 1\n", False) == ("located_error", "")
    outcome, _ = check("from tvm.script import tirx as T\n@T.prim_func\ndef f(A: T.Buffer((4,), "
                       "\"float32\")):\n    A[0] = 1.0\n", True)
    assert outcome == "ran"


def test_a_deliberate_depth_error_is_not_an_internal_error(monkeypatch) -> None:
    # tvm.error.IRDepthError is a RecursionError by design: the harness used to count it (from
    # printing or comparing) as an internal error or a round-trip mismatch.
    import tvm
    from tvm.error import IRDepthError

    def too_deep(self, *args, **kwargs):
        raise IRDepthError("printing TVMScript: the IR is nested too deeply")

    monkeypatch.setattr(tvm.ir.PrimFunc, "script", too_deep)
    text = ("from tvm.script import tirx as T\n@T.prim_func\ndef f(A: T.Buffer((4,), "
            "\"float32\")):\n    A[0] = 1.0\n")
    assert check(text, False) == ("depth_error", "")
