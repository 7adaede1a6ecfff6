"""Lowered IR to C for target kind ``example``, on core's C-style codegen.

The example device is this CPU, so its C is the host backend's
(:class:`tvm.host.codegen.HostCodegen`: exported ``int32_t`` entry points that return a status,
buffers as pointers, scalars by value), with its differences given as data:

* ``target_kind = "example"``: ops print through the rules registered for kind ``example``
  (``T.example.fma`` prints with the template that :mod:`.op` attaches);
* serial loops only: ``openmp=False`` (the imaginary device has one core).

A backend for another C dialect changes more class attributes (``kernel_prefix``,
``type_names``, ``thread_index_names``, ``op_templates``, see
:mod:`tvm.codegen.c_style`) and overrides a method only where the structure differs.
"""

from __future__ import annotations

from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule, PrimFunc

from .tags import KIND

__all__ = ["ExampleCodegen", "generate_c"]


class ExampleCodegen(sdk.HostCodegen):
    """C for the example device: the host's C, printed with the ``example`` op rules."""

    target_kind = KIND


def generate_c(mod: IRModule | PrimFunc, target: Any = None, *, float16: bool = False
               ) -> tuple[str, list[sdk.FunctionInfo]]:
    """(C source, the exported functions) of ``mod``."""
    cg = ExampleCodegen(target, openmp=False, float16=float16)
    return cg.generate(mod), cg.functions
