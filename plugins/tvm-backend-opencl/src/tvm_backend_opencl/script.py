"""The ``T.opencl`` script namespace: OpenCL's work-group synchronisation, one member per
declared intrinsic (:data:`tvm_backend_opencl.op.INTRINSICS`).

``T.opencl.barrier("local")`` builds a call of ``tirx.opencl.barrier``; the printer writes it
back in the same form.
"""

from __future__ import annotations

from tvm.ir.intrin import IntrinNamespace

from .op import INTRINSICS

__all__ = ["OpenCLNamespace"]


class OpenCLNamespace(IntrinNamespace):
    """``T.opencl``. One member per ``tirx.opencl.*`` intrinsic (:mod:`tvm_backend_opencl.op`)."""

    def __init__(self) -> None:
        super().__init__("opencl", INTRINSICS.members("opencl"))
