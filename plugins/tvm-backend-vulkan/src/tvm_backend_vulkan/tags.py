"""Target kind ``vulkan``, as data (the seed registers it in C++ with these attributes).

The ``supports_*`` flags say which data types the device computes and stores; the codegen
refuses a type the target does not declare, naming the flag (a Vulkan device without
``shaderFloat64`` rejects a shader that uses doubles). The limits bound what a kernel may ask
for: threads per workgroup, push-constant bytes for scalar arguments, shared memory, storage
buffers per shader. ``device`` names a device family for tags (``qcom/adreno-vulkan`` sets
``device="adreno"``).

No tags: a Vulkan device describes itself at run time (``python -m tvm devices`` style queries
are the runtime's, :func:`tvm_backend_vulkan.runtime.device_info`).
"""

from __future__ import annotations

from typing import Any

from tvm.backend import sdk
from tvm.target import Attr, TargetKind

__all__ = ["KIND", "KINDS", "TAGS"]

KIND = "vulkan"


def _validate(attrs: dict[str, Any]) -> None:
    threads = attrs["max_threads_per_block"]
    if threads < 1:
        raise ValueError(f"max_threads_per_block must be positive, got {threads}")
    sdk.check_thread_counts(attrs)
    if attrs["thread_warp_size"] < 1:
        raise ValueError(f"thread_warp_size must be positive, got {attrs['thread_warp_size']}")
    if attrs["max_push_constants_size"] < 0:
        raise ValueError("max_push_constants_size must not be negative")


def _flag(default: bool, doc: str) -> Attr:
    return Attr(bool, default, doc)


KINDS = [TargetKind(
    KIND,
    attrs={
        "device": Attr(str, doc="device family, for tags (adreno, ...)"),
        "mattr": Attr(tuple, (), "extra device capabilities, as the seed's mattr list"),
        "supports_float16": _flag(False, "float16 arithmetic (shaderFloat16)"),
        "supports_float32": _flag(True, "float32 arithmetic"),
        "supports_float64": _flag(False, "float64 arithmetic (shaderFloat64)"),
        "supports_int8": _flag(False, "int8 arithmetic (shaderInt8)"),
        "supports_int16": _flag(False, "int16 arithmetic (shaderInt16)"),
        "supports_int32": _flag(True, "int32 arithmetic"),
        "supports_int64": _flag(False, "int64 arithmetic (shaderInt64)"),
        "supports_8bit_buffer": _flag(False, "8-bit types in storage buffers"),
        "supports_16bit_buffer": _flag(False, "16-bit types in storage buffers"),
        "supports_storage_buffer_storage_class": _flag(True, "SPV_KHR_storage_buffer_storage_class"),
        "supports_push_descriptor": _flag(False, "VK_KHR_push_descriptor"),
        "supports_dedicated_allocation": _flag(False, "VK_KHR_dedicated_allocation"),
        "supports_integer_dot_product": _flag(False, "VK_KHR_shader_integer_dot_product"),
        "supports_cooperative_matrix": _flag(False, "VK_KHR_cooperative_matrix"),
        "supported_subgroup_operations": Attr(int, 0, "VkSubgroupFeatureFlags of the device"),
        "max_num_threads": Attr(int, 256, "threads per workgroup the compiler assumes"),
        "max_threads_per_block": Attr(int, 256, "threads per workgroup at most"),
        "thread_warp_size": Attr(int, 1, "threads per subgroup the compiler may assume"),
        "max_block_size_x": Attr(int, 1024, "maxComputeWorkGroupSize[0]"),
        "max_block_size_y": Attr(int, 1024, "maxComputeWorkGroupSize[1]"),
        "max_block_size_z": Attr(int, 64, "maxComputeWorkGroupSize[2]"),
        "max_push_constants_size": Attr(int, 128, "push-constant bytes (scalar arguments)"),
        "max_uniform_buffer_range": Attr(int, 16384, "maxUniformBufferRange"),
        "max_storage_buffer_range": Attr(int, 1 << 27, "maxStorageBufferRange"),
        "max_per_stage_descriptor_storage_buffer": Attr(
            int, 4, "storage buffers a shader may bind (maxPerStageDescriptorStorageBuffers)"),
        "max_shared_memory_per_block": Attr(int, 16384, "shared memory bytes per workgroup"),
        "device_type": Attr(str, doc="VkPhysicalDeviceType of the device"),
        "device_name": Attr(str, doc="the device's name"),
        "driver_name": Attr(str, doc="the driver's name"),
        "driver_version": Attr(int, 0, "the driver's version"),
        "vulkan_api_version": Attr(int, 0, "the Vulkan API version of the device"),
        "max_spirv_version": Attr(int, 0x10300, "the newest SPIR-V version the device reads"),
    },
    default_keys=(KIND, "gpu"),
    device_type="vulkan",
    validate=_validate,
    doc="GPUs (and lavapipe on a CPU) through Vulkan compute shaders: GLSL compiled to SPIR-V.",
)]

TAGS: dict[str, dict[str, Any]] = {}
