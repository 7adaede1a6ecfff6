"""Target kind ``metal`` and the tags of Apple GPUs: data, one line per tag.

The first three are the seed's (``apple/m1-gpu``, ``apple/m1-gpu-restricted``, ``apple/m2-gpu``);
later chips follow the same limits, from Apple's Metal Feature Set Tables: at most 1024 threads
per threadgroup, 32 KiB of threadgroup memory, SIMD groups of 32 threads. ``gpu_family`` is the
Metal GPU family (``apple7`` = M1, ``apple8`` = M2, ``apple9`` = M3 and M4); simdgroup matrices
need ``apple7`` or later. The seed's tags also named an LLVM host (``arm64-apple-macos``); this
project has no LLVM target kind, so the chip is recorded as the ``mcpu`` attribute instead.
"""

from __future__ import annotations

from typing import Any

from tvm.target import Attr, TargetKind

__all__ = ["KIND", "KINDS", "TAGS", "metal_tag"]

KIND = "metal"
_KIB = 1024


def _validate(attrs: dict[str, Any]) -> None:
    threads = attrs["max_threads_per_block"]
    if not 1 <= threads <= 1024:
        raise ValueError(f"max_threads_per_block must be 1..1024 on Apple GPUs, got {threads}")
    if attrs["max_num_threads"] > threads:
        raise ValueError(f"max_num_threads ({attrs['max_num_threads']}) exceeds "
                         f"max_threads_per_block ({threads})")
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


def metal_tag(max_threads: int, shared_mem: int, warp_size: int, mcpu: str,
              gpu_family: str) -> dict[str, Any]:
    """The config of one Apple GPU tag (the seed's ``_register_metal_tag`` fields)."""
    return {
        "kind": KIND,
        "keys": ["metal", "gpu"],
        "max_num_threads": max_threads,
        "max_threads_per_block": max_threads,
        "max_shared_memory_per_block": shared_mem,
        "thread_warp_size": warp_size,
        "mcpu": mcpu,
        "gpu_family": gpu_family,
    }


TAGS: dict[str, dict[str, Any]] = {
    "apple/m1-gpu": metal_tag(1024, 32 * _KIB, 32, "apple-m1", "apple7"),
    "apple/m1-gpu-restricted": metal_tag(256, 32 * _KIB, 32, "apple-m1", "apple7"),
    "apple/m2-gpu": metal_tag(1024, 32 * _KIB, 32, "apple-m2", "apple8"),
    "apple/m3-gpu": metal_tag(1024, 32 * _KIB, 32, "apple-m3", "apple9"),
    "apple/m4-gpu": metal_tag(1024, 32 * _KIB, 32, "apple-m4", "apple9"),
}
