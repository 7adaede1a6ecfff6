"""Device and driver access for AMD GPUs: none in this version.

This backend compiles HIP kernels into AMD GPU code objects (``compiler.py``) and checks them
with hipcc; it does not launch them. A launcher would load the code object with the HIP runtime
(``hipModuleLoadData``, ``hipModuleLaunchKernel``) on a machine with an AMD GPU and ROCm; none
was available to build and test one, so calling an executable says so instead of pretending.
"""

from __future__ import annotations

from tvm.error import DeviceUnavailableError

__all__ = ["RocmRuntimeUnavailable", "unavailable_reason"]

REASON = ("this version of tvm-backend-rocm compiles HIP kernels into AMD GPU code objects "
          "(hipcc) but has no launcher: running them needs the HIP runtime on an AMD GPU, "
          "which it does not provide yet")


class RocmRuntimeUnavailable(DeviceUnavailableError):
    """A ROCm executable cannot run here (see :data:`REASON`)."""


def unavailable_reason() -> str:
    """Why ROCm kernels cannot run here (always: no launcher in this version)."""
    return REASON
