"""The hooks of the Vulkan backend (entry point ``vulkan = "tvm_backend_vulkan.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind), ``script`` and ``op`` (no namespace; the
GLSL builtins the variants call), ``dispatch`` (the workgroup barrier of core's variants),
``codegen`` (IR to GLSL), ``compiler`` (GLSL to SPIR-V, spirv-val), ``executable`` (the build
contract and the Executable), ``runtime`` (the device, through the vulkan binding). Nothing
heavy is imported here (no numpy, no vulkan): those load when a kernel compiles or runs.
"""

from __future__ import annotations

from tvm.backend import sdk

from . import dispatch, runtime, tags
from ._version import __version__

__all__ = ["SPEC", "register_backend"]

SPEC = sdk.layout_spec(
    "vulkan", __version__, ">=2,<3", tags,
    description="Vulkan compute: GLSL compiled to SPIR-V (glslang), checked by spirv-val, "
                "run through the vulkan binding (lavapipe on a CPU)",
    register_dispatch=dispatch.register_all,
    builder="VulkanBuilder",
    device_probes={"vulkan": runtime.unavailable_reason},
    demo_cases="tvm_backend_vulkan.demo:demo_cases",
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
