"""Simulator access of the Trainium backend: run one kernel of the instruction form on arrays.

There is no Neuron device or driver here: kernels run in the numpy simulator of the NKI
instructions (:mod:`.simulator`), which numpy and ml_dtypes load for when a kernel first runs.
:func:`run_kernel` takes one array per kernel parameter (numpy arrays or other CPU arrays
through DLPack, already checked by the executable) and writes the kernel's outputs back into the
arrays given for them, as on a device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .isa import Kernel
from .simulator import simulate

__all__ = ["run_kernel"]


def run_kernel(kernel: Kernel, args: Sequence[Any], *, target: Any = None,
               stats: dict[str, int] | None = None, bounds_check: bool | None = None) -> None:
    """Simulate ``kernel`` on ``args`` (one array per HBM tensor, in order); ``stats``
    receives the simulator's instruction counts; ``bounds_check`` as in ``simulate``."""
    import numpy as np

    arrays = [a if isinstance(a, np.ndarray) else np.from_dlpack(a) for a in args]
    inputs = {t.name: a for t, a in zip(kernel.tensors, arrays) if t.kind == "input"}
    outs = simulate(kernel, inputs, target=target, stats=stats, bounds_check=bounds_check)
    for t, a in zip(kernel.tensors, arrays):
        if t.kind == "output":
            np.copyto(a, outs[t.name].astype(a.dtype), casting="unsafe")
