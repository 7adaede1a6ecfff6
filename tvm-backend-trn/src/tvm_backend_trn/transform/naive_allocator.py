"""``TrnNaiveAllocator``: an address per partition for every SBUF and PSUM buffer.

Naive: every on-chip buffer lives for the whole kernel. SBUF buffers are packed one after
another (32-byte aligned) in each partition; PSUM buffers start on a 2 KiB bank boundary and
take whole banks. The address goes into the ``AllocBuffer``'s annotations (``trn.offset``,
and ``trn.bank`` for PSUM), which codegen reads. A buffer that does not fit the target's
``max_sbuf_size_per_partition`` / ``max_psum_size_per_partition`` raises
:class:`~tvm.error.CompileError` listing what is allocated.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.error import CompileError, located
from tvm.ir import AllocBuffer, Buffer, Mutator, PrimFunc

from ..access import ON_CHIP, axis_size, axis_span, buffer_layout
from ..layout import is_trainium_layout
from ._trn_pass import TrnFunctionPass

__all__ = ["TrnNaiveAllocator", "bytes_per_partition"]

SBUF_ALIGN = 32
BANK = 2048


def bytes_per_partition(buf: Buffer) -> int:
    """Bytes one partition holds of on-chip buffer ``buf`` (by its layout)."""
    layout = buffer_layout(buf)
    if not is_trainium_layout(layout):
        raise CompileError(f"buffer {buf.name!r} in {buf.scope} has layout {layout}, which is "
                           f"not a Trainium layout (axes P, F, Bank); build it with "
                           f"tvm_backend_trn.layout.trainium_layout")
    esz = buf.dtype.bytes
    banks = axis_span(layout, "Bank") if any(it.axis.name == "Bank"
                                                  for it in layout.shard) else 0
    if banks:
        return banks * BANK
    return axis_span(layout, "F") * esz


@dataclasses.dataclass(frozen=True)
class TrnNaiveAllocator(TrnFunctionPass):
    """Place every trn.sbuf / trn.psum buffer; fail clearly when a partition overflows."""

    name = "TrnNaiveAllocator"

    def transform_trn(self, func: PrimFunc, target: Any) -> PrimFunc:
        placer = _Place(func.name, target)
        return func.with_body(placer.visit(func.body))


class _Place(Mutator):
    def __init__(self, func_name: str, target: Any) -> None:
        attrs = target.attrs
        self.func = func_name
        self.target = target
        self.partitions = int(attrs.get("partition_size", 128))
        self.sbuf_cap = int(attrs.get("max_sbuf_size_per_partition", 196608))
        self.psum_cap = int(attrs.get("max_psum_size_per_partition", 16384))
        self.sbuf_next = 0
        self.psum_next = 0
        self.placed: list[tuple[str, str, int]] = []

    def visit_AllocBuffer(self, node: AllocBuffer) -> Any:
        with located(node.span):  # a layout or size it cannot place: at the allocation's line
            return self._place(node)

    def _place(self, node: AllocBuffer) -> Any:
        buf = node.buffer
        if buf.scope not in ON_CHIP:
            return node
        size = bytes_per_partition(buf)
        parts = axis_size(buffer_layout(buf), "P")
        if parts > self.partitions:
            raise CompileError(f"TrnNaiveAllocator: buffer {buf.name!r} spans {parts} "
                               f"partitions; the target has {self.partitions}")
        ann = dict(node.annotations)
        if buf.scope == "trn.sbuf":
            offset = -(-self.sbuf_next // SBUF_ALIGN) * SBUF_ALIGN
            if offset + size > self.sbuf_cap:
                raise CompileError(self._overflow("SBUF", buf, size, offset, self.sbuf_cap))
            self.sbuf_next = offset + size
            ann["trn.offset"] = offset
        else:
            offset = -(-self.psum_next // BANK) * BANK
            if offset + size > self.psum_cap:
                raise CompileError(self._overflow("PSUM", buf, size, offset, self.psum_cap))
            self.psum_next = offset + size
            ann["trn.bank"] = offset // BANK
            ann["trn.offset"] = 0
        self.placed.append((buf.scope, buf.name, size))
        return AllocBuffer(buf, ann)

    def _overflow(self, mem: str, buf: Buffer, size: int, offset: int, cap: int) -> str:
        scope = "trn.sbuf" if mem == "SBUF" else "trn.psum"
        live = ", ".join(f"{n} ({s} B)" for sc, n, s in self.placed if sc == scope) or "none"
        extra = f" ({cap // BANK} banks of 2 KiB)" if mem == "PSUM" else ""
        return (f"TrnNaiveAllocator: {mem} capacity exceeded in {self.func}: buffer "
                f"{buf.name!r} needs {size} B per partition at offset {offset}, ending at "
                f"{offset + size} B, but the target {self.target} has {cap} B per partition"
                f"{extra}. Already allocated: {live}. Use smaller tiles or a target with more "
                f"{mem}.")
