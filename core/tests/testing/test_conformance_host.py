"""The conformance kit (tvm.testing.conformance), run by the built-in host backend against
itself, exactly as a third-party backend runs it."""

from __future__ import annotations

import numpy as np
import pytest

from tvm.testing import conformance
from tvm.testing.conformance import CHECKS, BackendConformance, run_backend_conformance


class TestHostConformance(BackendConformance):
    target = "c"


def test_run_backend_conformance_passes_every_check_on_the_host() -> None:
    assert run_backend_conformance("c") == {name: "passed" for name in CHECKS}


class _NoDevice(BackendConformance):
    def run_unavailable_reason(self) -> str | None:
        return "no test device here"


def test_without_a_device_checks_compile_and_report_why_they_did_not_run() -> None:
    outcomes = run_backend_conformance("c", _NoDevice())
    assert set(outcomes) == set(CHECKS)
    assert outcomes.pop("cache") == "passed"  # compiling is all the cache check needs
    for outcome in outcomes.values():
        assert outcome == "not run: compiled for c; not run: no test device here"


def test_only_and_skip_checks() -> None:
    class Partial(BackendConformance):
        skip_checks = {"gemm": "no tensor cores yet"}

    outcomes = run_backend_conformance("c", Partial(), only=["gemm", "vector_add"])
    assert outcomes == {"vector_add": "passed", "gemm": "not run: no tensor cores yet"}


class _WrongAdd(BackendConformance):
    """A broken backend: its device copy corrupts every array, so results are wrong."""

    def to_device(self, array):
        return array + np.float32(1.0) if array.dtype == np.float32 and array.any() else array


def test_a_wrong_result_fails_the_check_and_names_it() -> None:
    with pytest.raises(AssertionError, match=r"(?s)conformance check .vector_add. failed for c: .*vector add"):
        run_backend_conformance("c", _WrongAdd(), only=["vector_add"])


class _NoArgumentChecks(BackendConformance):
    """A backend whose executables skip the argument checks (here: arrays forced to float32
    and made contiguous before the call) fails the argument-check check."""

    def to_device(self, array):
        return np.ascontiguousarray(array, dtype="float32").reshape(-1)[: conformance.VADD_N]

    def non_contiguous(self, array):
        return self.to_device(array)


def test_missing_argument_checks_are_reported() -> None:
    with pytest.raises(AssertionError, match=r"'argument_checks' failed for c: wrong dtype: calling "
                                             r"with a bad argument 'A' raised nothing"):
        run_backend_conformance("c", _NoArgumentChecks(), only=["argument_checks"])


class _CountingRunner(BackendConformance):
    """A backend that supplies its runner, a build-time check and one of the kernels."""

    target = "c"

    def __init__(self) -> None:
        self.runs = 0
        self.checked: list[str] = []

    def run(self, ex, args):
        self.runs += 1
        ex(*args)

    def check_compiled(self, ex):
        self.checked.append(ex.entry_name)

    def kernel(self, name):
        if name == "vector_add":
            return conformance.vector_add_kernel()  # the backend's own kernel for this check
        return super().kernel(name)


def test_backend_supplies_runner_build_check_and_kernels() -> None:
    kit = _CountingRunner()
    outcomes = run_backend_conformance("c", kit, only=["vector_add", "argument_checks", "gemm"])
    assert outcomes == {"vector_add": "passed", "gemm": "passed", "argument_checks": "passed"}
    # vector_add and gemm run once each; argument_checks runs four bad calls through the runner
    assert kit.runs == 6
    assert kit.checked == ["vector_add", "gemm", "vector_add"]
