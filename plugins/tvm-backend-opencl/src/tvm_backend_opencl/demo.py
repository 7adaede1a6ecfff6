"""The OpenCL rows of the main job (``python -m tvm demo``): core's demo kernels and a row
reduction by whole work-groups, on the first OpenCL device here (PoCL on a CPU-only machine)."""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.backend import sdk
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

from . import runtime

__all__ = ["TARGET", "demo_cases"]

TARGET = "opencl"
ROWS, COLS, THREADS = 8, 4096, 256


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def _row_sum() -> Any:
    m, n = ROWS, COLS

    @T.prim_func
    def row_sum(A: T.Buffer((m, n), "float32"), S: T.Buffer((m,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([THREADS])
        Tx.cta.sum(S, A, axes=-1)

    return row_sum


def _kernels() -> list[Any]:
    def inputs(rng: Any) -> list[Any]:
        import numpy as np

        return [rng.standard_normal((ROWS, COLS)).astype("float32"), np.zeros(ROWS, "float32")]

    extra = sdk.DemoKernel("row sum (Tx.cta.sum, work-group tree)", _row_sum, inputs,
                           lambda a, _s: a.astype("float64").sum(-1), output=1, rtol=1e-4,
                           atol=1e-3)
    return [*sdk.KERNELS, extra]


def demo_cases() -> list[sdk.DemoCase]:
    reason = runtime.unavailable_reason()
    if reason is not None:
        return []  # no OpenCL device here: nothing to run
    backend = f"opencl ({runtime.device_for().device.name.strip()})"
    return [sdk.make_case(k, TARGET, backend=backend, repeat=3) for k in _kernels()]
