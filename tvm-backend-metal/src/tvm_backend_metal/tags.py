"""Target tags of Apple GPUs, as data: one line per tag.

The first three are the seed's, with its exact configs: threadgroup limits, 32 KiB of
threadgroup memory, SIMD groups of 32 threads, and the chip as an ``llvm`` host target
(``arm64-apple-macos``). Later chips follow with the same limits (Apple's Metal Feature Set
Tables). The Metal GPU family (``gpu_family``, default ``apple7`` = M1) is a target attribute of
its own; the M3 and M4 tags set ``apple9``.
"""

from __future__ import annotations

from typing import Any

from tvm.backend import sdk
from tvm.target import Attr, TargetKind

__all__ = ["EXTRA_TAGS", "KIND", "KINDS", "SEED_TAGS", "TAGS"]

_METAL: dict[str, Any] = {"kind": "metal", "max_shared_memory_per_block": 32768,
                          "thread_warp_size": 32}
_MACOS: dict[str, Any] = {"kind": "llvm", "mtriple": "arm64-apple-macos"}

# fmt: off
SEED_TAGS: dict[str, dict[str, Any]] = {
    "apple/m1-gpu":            {**_METAL, "max_threads_per_block": 1024, "host": {**_MACOS, "mcpu": "apple-m1"}},
    "apple/m1-gpu-restricted": {**_METAL, "max_threads_per_block": 256, "host": {**_MACOS, "mcpu": "apple-m1"}},
    "apple/m2-gpu":            {**_METAL, "max_threads_per_block": 1024, "host": {**_MACOS, "mcpu": "apple-m2"}},
}

EXTRA_TAGS: dict[str, dict[str, Any]] = {
    "apple/m3-gpu": {**_METAL, "max_threads_per_block": 1024, "gpu_family": "apple9",
                     "host": {**_MACOS, "mcpu": "apple-m3"}},
    "apple/m4-gpu": {**_METAL, "max_threads_per_block": 1024, "gpu_family": "apple9",
                     "host": {**_MACOS, "mcpu": "apple-m4"}},
}
# fmt: on

TAGS: dict[str, dict[str, Any]] = {**SEED_TAGS, **EXTRA_TAGS}


# -- the target kind (data, and the check of a target's attributes) ------------------------

KIND = "metal"


def _validate(attrs: dict[str, Any]) -> None:
    sdk.check_thread_counts(attrs, most=1024, device="Apple GPUs")
    if attrs["thread_warp_size"] != 32:
        raise ValueError(f"thread_warp_size must be 32 (the SIMD-group width of Apple GPUs), "
                         f"got {attrs['thread_warp_size']}")
    if attrs["max_shared_memory_per_block"] <= 0:
        raise ValueError("max_shared_memory_per_block must be positive")


KINDS = [TargetKind(
    KIND,
    attrs={
        "max_num_threads": Attr(int, 256, "threads per threadgroup the compiler assumes"),
        "max_threads_per_block": Attr(int, 256, "threads per threadgroup at most"),
        "max_shared_memory_per_block": Attr(int, 32768, "threadgroup memory in bytes"),
        "thread_warp_size": Attr(int, 32, "threads per SIMD group"),
        "max_function_args": Attr(int, 31, "buffer arguments a kernel may take"),
        "mcpu": Attr(str, doc="the Apple chip (apple-m1, apple-m2, ...)"),
        "gpu_family": Attr(str, "apple7", "Metal GPU family (apple7 = M1 and later)"),
    },
    default_keys=(KIND, "gpu"),
    device_type="metal",
    validate=_validate,
    doc="Apple GPUs through the Metal Shading Language.",
)]
