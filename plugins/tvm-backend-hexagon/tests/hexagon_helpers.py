"""Helpers of the Hexagon backend's tests: load the backend; read a Hexagon object file."""

from __future__ import annotations

import struct

import tvm_backend_hexagon

tvm_backend_hexagon.register_backend()  # a source checkout has no entry point: load in-process

EM_HEXAGON = 164


def elf_machine_and_flags(code: bytes) -> tuple[int, int]:
    """(e_machine, e_flags) of a 32-bit little-endian ELF file (Hexagon's e_flags hold the
    version: 0x68 for v68)."""
    assert code[:4] == b"\x7fELF" and code[4] == 1, "not a 32-bit ELF file"
    return struct.unpack_from("<H", code, 18)[0], struct.unpack_from("<I", code, 36)[0]
