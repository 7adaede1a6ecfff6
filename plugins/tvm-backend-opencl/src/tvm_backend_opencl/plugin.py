"""The hooks of the OpenCL backend (entry point ``opencl = "tvm_backend_opencl.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind), ``script`` and ``op`` (``T.opencl`` and
its barriers), ``dispatch`` (the work-group barrier and a tree reduction), ``codegen`` (IR to
OpenCL C), ``compiler`` (the build check), ``executable`` (the build contract and the
Executable), ``runtime`` (pyopencl). Nothing heavy is imported here (no numpy, no pyopencl).
"""

from __future__ import annotations

from tvm.backend import sdk

from . import dispatch, op, runtime, tags
from ._version import __version__
from .script import OpenCLNamespace

__all__ = ["SPEC", "register_backend"]

SPEC = sdk.layout_spec(
    "opencl", __version__, ">=2,<3", tags,
    description="OpenCL devices: OpenCL C built by the driver (GPUs; CPUs through PoCL)",
    script_namespaces={"opencl": OpenCLNamespace},
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    builder="OpenCLBuilder",
    device_probes={"opencl": runtime.unavailable_reason},
    demo_cases="tvm_backend_opencl.demo:demo_cases",
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
