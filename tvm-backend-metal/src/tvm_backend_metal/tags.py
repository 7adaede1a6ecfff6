"""Target tags of Apple GPUs: data, one line per tag.

The first three are the seed's (``apple/m1-gpu``, ``apple/m1-gpu-restricted``, ``apple/m2-gpu``);
later chips follow the same limits, from Apple's Metal Feature Set Tables: at most 1024 threads
per threadgroup, 32 KiB of threadgroup memory, SIMD groups of 32 threads. ``gpu_family`` is the
Metal GPU family (``apple7`` = M1, ``apple8`` = M2, ``apple9`` = M3 and M4); simdgroup matrices
need ``apple7`` or later. The seed's tags also named an LLVM host (``arm64-apple-macos``); this
project has no LLVM target kind, so the chip is recorded as the ``mcpu`` attribute instead.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TAGS", "metal_tag"]

_KIB = 1024


def metal_tag(max_threads: int, shared_mem: int, warp_size: int, mcpu: str,
              gpu_family: str) -> dict[str, Any]:
    """The config of one Apple GPU tag (the seed's ``_register_metal_tag`` fields)."""
    return {
        "kind": "metal",
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
