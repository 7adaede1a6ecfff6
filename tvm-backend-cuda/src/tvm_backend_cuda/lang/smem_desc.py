"""Shared-memory matrix descriptors of ``wgmma`` (sm_90a) and ``tcgen05`` (sm_100a).

A descriptor is a 64-bit value: the operand's shared address, its leading and stride byte
offsets (each ``>> 4``: the encode intrinsics take them in 16-byte units) and its swizzle. ``desc = SmemDescriptor("wgmma")`` declares a local
``uint64`` register; ``desc.init(A_s[0, 0, 0], ldo, sdo, SwizzleMode.SWIZZLE_128B_ATOM)``
encodes it (``T.ptx.wgmma.encode_matrix_descriptor``); ``desc.value`` reads it;
``desc.add_16B_offset(k)`` is the descriptor of the operand ``16 * k`` bytes further on (the
start address is the low field, so the offset adds to it directly).
"""

from __future__ import annotations

from typing import Any

from tvm.ir import Buffer, BufferLoad, PrimExpr, Stmt, const
from tvm.tirx.op import shift_right

from .. import op as _op
from ..dispatch.common import smem_desc_add_16B_offset
from ..dispatch.tma_utils import SwizzleMode
from ._emit import alloc, evaluate

__all__ = ["SmemDescriptor"]

_KINDS = ("wgmma", "tcgen05")


def _units16(nbytes: Any, what: str) -> Any:
    """A byte offset in the 16-byte units the encode intrinsics take."""
    if isinstance(nbytes, int):
        if nbytes % 16:
            raise ValueError(f"SmemDescriptor.init: {what} must be a multiple of 16 bytes, got "
                             f"{nbytes}")
        return nbytes // 16
    return shift_right(nbytes, 4)


class SmemDescriptor:
    """A ``wgmma`` or ``tcgen05`` shared-memory matrix descriptor in a local register."""

    def __init__(self, kind: str = "wgmma", *, name: str = "desc") -> None:
        if kind not in _KINDS:
            raise ValueError(f"SmemDescriptor: kind must be one of {_KINDS}, got {kind!r}")
        self.kind = kind
        self.buffer = Buffer(name, [1], "uint64", scope="local")

    def __tvm_script_bind__(self, name: str) -> Stmt:
        self.buffer.name = name
        self.buffer.data.name = name
        return alloc(self.buffer)

    @property
    def value(self) -> BufferLoad:
        return BufferLoad(self.buffer, [const(0, "int32")])

    def init(self, addr: Any, ldo: Any, sdo: Any, swizzle: SwizzleMode | Any) -> Stmt:
        """Encode the descriptor of the operand starting at ``addr`` (a shared-memory element,
        e.g. ``A_s[stage, 0, 0]``); ``ldo``/``sdo`` in bytes."""
        mode = int(SwizzleMode.parse(swizzle))
        encode = (_op.ptx_wgmma_encode_matrix_descriptor if self.kind == "wgmma"
                  else _op.ptx_tcgen05_encode_matrix_descriptor)
        return evaluate(encode(self.value, addr, _units16(ldo, "ldo"), _units16(sdo, "sdo"),
                               mode))

    def add_16B_offset(self, offset: Any) -> PrimExpr:  # noqa: N802 - the seed's name
        return smem_desc_add_16B_offset(self.value, offset)
