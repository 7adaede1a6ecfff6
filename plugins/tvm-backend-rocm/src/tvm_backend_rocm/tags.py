"""Target kind ``rocm`` and AMD GPU tags, as data: one line per GPU.

The seed has no AMD tags (its rocm package registers none; the kind lives in C++): every tag here
is ours, ``EXTRA_TAGS``, one per Instinct accelerator and Radeon card, with the architecture
(``mcpu``) from AMD's ROCm hardware tables. An architecture's wavefront is 64 work-items on GCN
and CDNA (``gfx6..gfx9``) and 32 on RDNA (``gfx10``, ``gfx11``, ``gfx12``): the hardware can run
RDNA in wave64 too, but HIP does not support it (hip_runtime.h refuses to compile it).
"""

from __future__ import annotations

import re
from typing import Any

from tvm.backend import sdk
from tvm.target import Attr, TargetKind

__all__ = ["ARCHS", "EXTRA_TAGS", "FEATURES", "KIND", "KINDS", "SEED_TAGS", "TAGS", "wave_sizes"]

KIND = "rocm"

# Every gfx architecture the kind accepts (LLVM's AMDGPU processors).
ARCHS = (
    "gfx600", "gfx601", "gfx602", "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705",
    "gfx801", "gfx802", "gfx803", "gfx805", "gfx810",
    "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c",
    "gfx940", "gfx941", "gfx942", "gfx950",
    "gfx1010", "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031", "gfx1032", "gfx1033",
    "gfx1034", "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
    "gfx1151", "gfx1200", "gfx1201",
)
#: the features of an AMD target ID (``gfx90a:xnack+:sramecc-``), set with ``mattr``
FEATURES = ("xnack", "sramecc")
_GFX = re.compile(r"^gfx[0-9]{1,2}[0-9a-f]{2}$")

_ROCM: dict[str, Any] = {"kind": KIND, "max_threads_per_block": 1024,
                         "max_shared_memory_per_block": 65536}

# fmt: off
SEED_TAGS: dict[str, dict[str, Any]] = {}

EXTRA_TAGS: dict[str, dict[str, Any]] = {
    # AMD Instinct (CDNA, GCN): wavefronts of 64
    "amd/instinct-mi300x":   {**_ROCM, "mcpu": "gfx942", "thread_warp_size": 64},
    "amd/instinct-mi300a":   {**_ROCM, "mcpu": "gfx942", "thread_warp_size": 64},
    "amd/instinct-mi250x":   {**_ROCM, "mcpu": "gfx90a", "thread_warp_size": 64},
    "amd/instinct-mi250":    {**_ROCM, "mcpu": "gfx90a", "thread_warp_size": 64},
    "amd/instinct-mi210":    {**_ROCM, "mcpu": "gfx90a", "thread_warp_size": 64},
    "amd/instinct-mi100":    {**_ROCM, "mcpu": "gfx908", "thread_warp_size": 64},
    "amd/instinct-mi60":     {**_ROCM, "mcpu": "gfx906", "thread_warp_size": 64},
    "amd/instinct-mi50":     {**_ROCM, "mcpu": "gfx906", "thread_warp_size": 64},
    "amd/instinct-mi25":     {**_ROCM, "mcpu": "gfx900", "thread_warp_size": 64},
    # AMD Radeon (RDNA 3, RDNA 2, RDNA 1, Vega): RDNA runs wavefronts of 32
    "amd/radeon-rx-7900-xtx": {**_ROCM, "mcpu": "gfx1100", "thread_warp_size": 32},
    "amd/radeon-rx-7900-xt":  {**_ROCM, "mcpu": "gfx1100", "thread_warp_size": 32},
    "amd/radeon-rx-7800-xt":  {**_ROCM, "mcpu": "gfx1101", "thread_warp_size": 32},
    "amd/radeon-rx-7600":     {**_ROCM, "mcpu": "gfx1102", "thread_warp_size": 32},
    "amd/radeon-pro-w7900":   {**_ROCM, "mcpu": "gfx1100", "thread_warp_size": 32},
    "amd/radeon-pro-w7800":   {**_ROCM, "mcpu": "gfx1100", "thread_warp_size": 32},
    "amd/radeon-rx-6950-xt":  {**_ROCM, "mcpu": "gfx1030", "thread_warp_size": 32},
    "amd/radeon-rx-6900-xt":  {**_ROCM, "mcpu": "gfx1030", "thread_warp_size": 32},
    "amd/radeon-rx-6800-xt":  {**_ROCM, "mcpu": "gfx1030", "thread_warp_size": 32},
    "amd/radeon-pro-w6800":   {**_ROCM, "mcpu": "gfx1030", "thread_warp_size": 32},
    "amd/radeon-rx-6700-xt":  {**_ROCM, "mcpu": "gfx1031", "thread_warp_size": 32},
    "amd/radeon-rx-6600-xt":  {**_ROCM, "mcpu": "gfx1032", "thread_warp_size": 32},
    "amd/radeon-rx-5700-xt":  {**_ROCM, "mcpu": "gfx1010", "thread_warp_size": 32},
    "amd/radeon-vii":         {**_ROCM, "mcpu": "gfx906", "thread_warp_size": 64},
    "amd/radeon-pro-vii":     {**_ROCM, "mcpu": "gfx906", "thread_warp_size": 64},
    "amd/radeon-rx-vega-64":  {**_ROCM, "mcpu": "gfx900", "thread_warp_size": 64},
}
# fmt: on

TAGS: dict[str, dict[str, Any]] = {**SEED_TAGS, **EXTRA_TAGS}


def wave_sizes(mcpu: str) -> tuple[int, ...]:
    """The wavefront sizes HIP supports on an architecture."""
    major = mcpu[3:-2]
    return (32,) if major.isdigit() and int(major) >= 10 else (64,)


def _validate(attrs: dict[str, Any]) -> dict[str, Any]:
    mcpu = attrs["mcpu"]
    if not _GFX.match(mcpu):
        raise ValueError(f"mcpu must be an AMD GPU architecture such as gfx90a or gfx1100, "
                         f"got {mcpu!r}")
    if mcpu not in ARCHS:
        raise ValueError(f"unknown AMD GPU architecture {mcpu!r}; known: {', '.join(ARCHS)}")
    sizes = wave_sizes(mcpu)
    wave = attrs.setdefault("thread_warp_size", sizes[0])
    if wave not in sizes:
        raise ValueError(f"thread_warp_size (the wavefront size) must be "
                         f"{' or '.join(map(str, sizes))} on {mcpu}, got {wave}")
    for feature in attrs["mattr"]:
        if not (isinstance(feature, str) and feature[:1] in "+-" and feature[1:] in FEATURES):
            raise ValueError(f"mattr entries are +feature or -feature with a feature of the "
                             f"target ID ({', '.join(FEATURES)}), got {feature!r}")
    sdk.check_thread_counts(attrs, most=1024, device="AMD GPUs")
    return attrs


KINDS = [TargetKind(
    KIND,
    attrs={
        "mcpu": Attr(str, "gfx90a", "the GPU architecture (gfx90a, gfx942, gfx1100, ...)"),
        "mtriple": Attr(str, "amdgcn-amd-amdhsa-hcc", "the device triple"),
        "mattr": Attr(tuple, (), "target features (+xnack, -sramecc, ...)"),
        "max_num_threads": Attr(int, 256, "threads per block the compiler assumes"),
        "max_threads_per_block": Attr(int, 1024, "threads per block at most"),
        "max_shared_memory_per_block": Attr(int, 65536, "LDS bytes per block"),
        "thread_warp_size": Attr(int, doc="the wavefront size (64 on GCN/CDNA, 32 on RDNA)"),
    },
    default_keys=(KIND, "gpu"),
    device_type="rocm",
    validate=_validate,
    doc="AMD GPUs through HIP C++ compiled by hipcc.",
    arch_attr="mcpu",  # Target("gfx942") is Target("rocm -mcpu=gfx942")
    arch_pattern=_GFX.pattern.strip("^$"),
)]
