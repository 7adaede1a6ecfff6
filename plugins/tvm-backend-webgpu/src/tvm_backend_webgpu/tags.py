"""Target kind ``webgpu``, as data (the seed registers it in C++).

As in the seed: ``max_num_threads`` 256, ``supports_subgroups`` false and ``thread_warp_size``
1; a target with subgroups and no warp size gets 32, and a warp size above 1 without subgroups
is refused with the seed's message. The limits default to WebGPU's defaults (what every
adapter grants): 256 invocations and 16 KiB of workgroup memory per workgroup, 8 storage
buffers per shader.
"""

from __future__ import annotations

from typing import Any

from tvm.backend import sdk
from tvm.target import Attr, TargetKind

__all__ = ["KIND", "KINDS", "TAGS"]

KIND = "webgpu"


def _validate(attrs: dict[str, Any]) -> dict[str, Any]:
    warp = attrs["thread_warp_size"]
    if attrs["supports_subgroups"] and warp == 1:
        attrs["thread_warp_size"] = 32
    elif warp != 1 and not attrs["supports_subgroups"]:
        raise ValueError(f"WebGPU target with thread_warp_size={warp} requires "
                         "supports_subgroups=true")
    sdk.check_thread_counts(attrs)
    return attrs


KINDS = [TargetKind(
    KIND,
    attrs={
        "device": Attr(str, doc="device family, for tags"),
        "max_num_threads": Attr(int, 256, "invocations per workgroup the compiler assumes"),
        "max_threads_per_block": Attr(int, 256, "maxComputeInvocationsPerWorkgroup"),
        "max_shared_memory_per_block": Attr(int, 16384, "maxComputeWorkgroupStorageSize"),
        "max_storage_buffers_per_shader_stage": Attr(int, 8, "storage buffers a shader binds"),
        "supports_subgroups": Attr(bool, False, "the device has the 'subgroups' feature "
                                                "(T.webgpu.subgroup_shuffle*)"),
        "thread_warp_size": Attr(int, 1, "threads per subgroup the compiler may assume"),
    },
    default_keys=(KIND, "gpu"),
    device_type="webgpu",
    validate=_validate,
    doc="WebGPU: WGSL compute shaders (browsers; wgpu-native here).",
)]

TAGS: dict[str, dict[str, Any]] = {}
