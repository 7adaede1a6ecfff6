"""tvm.runtime.plan_executable: the executable of launch plans that opencl, metal, vulkan and
webgpu build on (plans from the metadata, one function per entry, core's argument checks)."""

from __future__ import annotations

import numpy as np
import pytest

from tvm.runtime.plan_executable import PlanExecutable, PlanFunction


def _buffer(name: str, shape: list[int]) -> dict:
    return {"name": name, "kind": "buffer", "dtype": "float32", "shape": shape, "strides": [],
            "scope": "global", "var": None, "written": True}


PLAN = {
    "signature": {"name": "scale", "device": "cpu", "variables": {},
                  "params": [_buffer("A", [64, 256]), _buffer("B", [64, 256])]},
    "steps": [{"kernel": "scale_kernel", "args": [["array", 0], ["array", 1]],
               "grid": [64, 1, 1], "block": [128, 1, 1], "smem": 0}],
}


class RecordingFunction(PlanFunction):
    def __call__(self, *args):
        self._exe.launched += [(b.step.kernel, b.grid, b.block, len(b.args))
                               for b in self.bind(args)]


class RecordingExecutable(PlanExecutable[RecordingFunction]):
    backend = "recording"
    function_type = RecordingFunction

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.launched: list = []


def _exe() -> RecordingExecutable:
    return RecordingExecutable("target", None, {"plans": [PLAN]})


def test_functions_come_from_the_plans_once_each():
    exe = _exe()
    assert exe.entry_names == ["scale"]
    func = exe.get_function("scale")
    assert func is exe["scale"] and func.name == "scale"
    assert repr(func) == "<RecordingFunction scale(A: float32, B: float32)>"
    with pytest.raises(KeyError, match="this executable has no function 'nope'; it has"):
        exe.get_function("nope")


def test_a_call_is_checked_then_bound():
    exe = _exe()
    a, b = np.zeros((64, 256), "float32"), np.zeros((64, 256), "float32")
    exe(a, b)
    assert exe.launched == [("scale_kernel", (64, 1, 1), (128, 1, 1), 2)]
    with pytest.raises(ValueError, match=r"scale: argument 'B': expected shape \(64, 256\), "
                                         r"got \(64, 255\)"):
        exe(a, np.zeros((64, 255), "float32"))
    assert len(exe.launched) == 1  # nothing launched for the bad call


def test_the_base_function_does_not_run():
    with pytest.raises(NotImplementedError):
        PlanFunction(_exe(), _exe().plans["scale"])()
