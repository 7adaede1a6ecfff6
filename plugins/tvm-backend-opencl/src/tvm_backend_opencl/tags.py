"""Target kind ``opencl``, as data.

The seed defines no OpenCL tags of its own (Adreno's live in ``tvm-backend-adreno``); the kind's
attributes are Apache TVM's OpenCL target attributes plus how to pick a device at run time:
``device_type`` (``all``, ``gpu``, ``cpu``, ``accelerator``, ``default``) and ``platform`` (a
substring of the platform's name, empty for any). ``max_threads_per_block`` is the largest
work-group the compiler may use; ``fp16`` says the device has ``cl_khr_fp16`` (else ``half``
data is stored as 16 bits and computed in ``float`` through ``vload_half``/``vstore_half``).
"""

from __future__ import annotations

from typing import Any

from tvm.backend import sdk
from tvm.target import Attr, TargetKind

__all__ = ["DEVICE_TYPES", "KIND", "KINDS", "TAGS"]

KIND = "opencl"
DEVICE_TYPES = ("all", "default", "gpu", "cpu", "accelerator")

#: no tags of our own: the kind takes a device by type and platform (Adreno's tags are Adreno's)
TAGS: dict[str, dict[str, Any]] = {}


def _validate(attrs: dict[str, Any]) -> None:
    if attrs["device_type"] not in DEVICE_TYPES:
        raise ValueError(f"device_type must be one of {', '.join(DEVICE_TYPES)}, got "
                         f"{attrs['device_type']!r}")
    threads = attrs["max_threads_per_block"]
    if threads < 1:
        raise ValueError(f"max_threads_per_block (the largest work-group) must be positive, "
                         f"got {threads}")
    sdk.check_thread_counts(attrs)
    if attrs["max_shared_memory_per_block"] <= 0:
        raise ValueError("max_shared_memory_per_block (local memory in bytes) must be positive")


KINDS = [TargetKind(
    KIND,
    attrs={
        "max_num_threads": Attr(int, 256, "work-items per work-group the compiler assumes"),
        "max_threads_per_block": Attr(int, 1024, "the largest work-group (max work-group size)"),
        "max_shared_memory_per_block": Attr(int, 32768, "__local memory per work-group, bytes"),
        "thread_warp_size": Attr(int, 1, "work-items that run in lock step (1: assume none)"),
        "texture_spatial_limit": Attr(int, 16384, "largest image dimension"),
        "max_function_args": Attr(int, 128, "kernel arguments at most"),
        "image_base_address_alignment": Attr(int, 64, "bytes"),
        "device": Attr(str, "", "the device family (e.g. adreno)"),
        "device_type": Attr(str, "all", "the OpenCL device type to run on"),
        "platform": Attr(str, "", "a substring of the OpenCL platform's name (empty: any)"),
        "fp16": Attr(bool, False, "the device computes in half (cl_khr_fp16)"),
        "fp64": Attr(bool, True, "the device has double (cl_khr_fp64)"),
    },
    default_keys=(KIND, "gpu"),
    device_type="opencl",
    validate=_validate,
    doc="OpenCL devices (GPUs, CPUs through PoCL) through OpenCL C and pyopencl.",
)]
