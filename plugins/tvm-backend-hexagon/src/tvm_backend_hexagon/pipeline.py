"""The ``hexagon`` TIR pipeline: core's TIRx stages without the host/device split.

A Hexagon function runs on the DSP whole (its host is the DSP's own scalar core), so nothing is
split off into kernels and launches: the kernel form's CTAs and threads become loops, as on the
host target. ``tvm_default_pipeline`` picks it for targets of kind ``hexagon``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.backend import sdk
from tvm.transform import Pipeline

__all__ = ["hexagon_pipeline"]


def hexagon_pipeline(**kwargs: Any) -> Pipeline:
    kwargs.setdefault("split_host_device", False)
    return dataclasses.replace(sdk.get_tir_pipeline("tirx", **kwargs), name="hexagon")
