"""The hooks of the Vulkan backend (entry point ``vulkan = "tvm_backend_vulkan.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind), ``script`` and ``op`` (no namespace; the
GLSL builtins the variants call), ``dispatch`` (the workgroup barrier of core's variants),
``codegen`` (IR to GLSL), ``compiler`` (GLSL to SPIR-V, spirv-val), ``executable`` (the build
contract and the Executable), ``runtime`` (the device, through the vulkan binding). Nothing
heavy is imported here (no numpy, no vulkan): those load when a kernel compiles or runs.
"""

from __future__ import annotations

from tvm.backend.sdk import BackendSpec

from . import dispatch, runtime, tags
from ._version import __version__

__all__ = ["DISTRIBUTION", "KIND", "NAME", "SPEC", "register_backend"]

NAME = "vulkan"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-vulkan"

SPEC = BackendSpec(
    name=NAME,
    version=__version__,
    api_range=">=2,<3",
    distribution=DISTRIBUTION,
    description="Vulkan compute: GLSL compiled to SPIR-V (glslang), checked by spirv-val, "
                "run through the vulkan binding (lavapipe on a CPU)",
    aliases={NAME: "tvm_backend_vulkan"},  # tvm.backend.vulkan and tvm.tirx.vulkan
    kinds=tags.KINDS,
    tags=tags.TAGS,
    register_dispatch=dispatch.register_all,
    builders={KIND: "tvm_backend_vulkan.executable:VulkanBuilder"},
    device_probes={"vulkan": runtime.unavailable_reason},
    demo_cases="tvm_backend_vulkan.demo:demo_cases",
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
