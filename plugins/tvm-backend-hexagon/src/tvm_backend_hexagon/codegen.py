"""Lowered IR to C for the Hexagon DSP, on core's host C codegen.

The DSP runs C: the host backend's printing (:class:`tvm.host.codegen.HostCodegen`: exported
``int32_t`` entry points that return a status, buffers as pointers, scalars by value) with the
differences as data: ops print through the rules registered for kind ``hexagon``; loops are
serial (no OpenMP on the DSP; its hardware threads are QuRT threads, which this backend does not
program), and 16-bit floats are stored as 16 bits and computed in ``float``. The kernel form's
CTAs and threads run one after another, as on the host target. HVX vectorization is left to the
compiler (``mattr`` carries the HVX features).
"""

from __future__ import annotations

from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule, PrimFunc

from .tags import KIND

__all__ = ["HexagonCodegen", "generate_c"]


class HexagonCodegen(sdk.HostCodegen):
    """C for the Hexagon DSP: the host's C, printed with the ``hexagon`` op rules."""

    target_kind = KIND


def generate_c(mod: IRModule | PrimFunc, target: Any = None) -> tuple[str, list[sdk.FunctionInfo]]:
    """(C source, the exported functions) of ``mod``."""
    cg = HexagonCodegen(target, openmp=False, float16=False)
    return cg.generate(mod), cg.functions
