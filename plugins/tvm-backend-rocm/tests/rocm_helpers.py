"""Helpers of the ROCm backend's tests: load the backend; read an AMD GPU code object."""

from __future__ import annotations

import struct

import tvm_backend_rocm

tvm_backend_rocm.register_backend()  # a source checkout has no entry point: load in-process

EM_AMDGPU = 224
#: EF_AMDGPU_MACH_* (the low byte of e_flags) of a few architectures, from LLVM's ELF.h
MACH = {"gfx900": 0x2C, "gfx906": 0x2F, "gfx908": 0x30, "gfx90a": 0x3F, "gfx1010": 0x33,
        "gfx1030": 0x36}


def elf_machine_and_mach(code: bytes) -> tuple[int, int]:
    """(e_machine, EF_AMDGPU_MACH) of a 64-bit little-endian ELF file."""
    assert code[:4] == b"\x7fELF", "not an ELF file"
    return struct.unpack_from("<H", code, 18)[0], struct.unpack_from("<I", code, 48)[0] & 0xFF
