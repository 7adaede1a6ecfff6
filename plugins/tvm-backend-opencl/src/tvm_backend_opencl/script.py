"""The ``T.opencl`` script namespace: OpenCL's work-group synchronisation.

``T.opencl.barrier("local")`` builds a call of ``tirx.opencl.barrier``; the printer writes it
back in the same form (each builder carries its op's name, ``__tir_op_name__``).
"""

from __future__ import annotations

from . import op as _op

__all__ = ["OpenCLNamespace"]


class OpenCLNamespace:
    """``T.opencl``. One member per ``tirx.opencl.*`` intrinsic (:mod:`tvm_backend_opencl.op`)."""

    barrier = staticmethod(_op.barrier)
    mem_fence = staticmethod(_op.mem_fence)

    def __repr__(self) -> str:
        return "T.opencl"
