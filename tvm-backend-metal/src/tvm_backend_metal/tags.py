"""Target tags of Apple GPUs, as data: one line per tag.

The first three are the seed's, with its exact configs: threadgroup limits, 32 KiB of
threadgroup memory, SIMD groups of 32 threads, and the chip as an ``llvm`` host target
(``arm64-apple-macos``). Later chips follow with the same limits (Apple's Metal Feature Set
Tables). The Metal GPU family (``gpu_family``, default ``apple7`` = M1) is a target attribute of
its own; the M3 and M4 tags set ``apple9``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXTRA_TAGS", "SEED_TAGS", "TAGS"]

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
