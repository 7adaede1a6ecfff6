"""The hooks of the WebGPU backend (entry point ``webgpu = "tvm_backend_webgpu.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind), ``op`` (the WGSL rules of core's
``T.webgpu`` ops, the barrier builtins), ``script`` (``T.webgpu`` stays core's, as in the seed),
``dispatch`` (the workgroup barrier of core's variants), ``codegen`` (IR to WGSL), ``compiler``
(packages and checks the WGSL), ``executable`` (the build contract and the Executable),
``runtime`` (the device, through wgpu-py). Nothing heavy is imported here (no numpy, no wgpu):
those load when a kernel compiles or runs.
"""

from __future__ import annotations

from tvm.backend import sdk

from . import dispatch, op, runtime, tags
from ._version import __version__

__all__ = ["SPEC", "register_backend"]

SPEC = sdk.layout_spec(
    "webgpu", __version__, ">=2,<3", tags,
    description="WebGPU: WGSL compute shaders, run through wgpu-py (lavapipe on a CPU)",
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    builder="WebGPUBuilder",
    device_probes={"webgpu": runtime.unavailable_reason},
    demo_cases="tvm_backend_webgpu.demo:demo_cases",
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
