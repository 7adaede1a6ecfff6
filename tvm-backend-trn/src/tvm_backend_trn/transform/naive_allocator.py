"""``TrnNaiveAllocator``: an address per partition for every SBUF and PSUM buffer.

Naive: every on-chip buffer lives for the whole kernel. SBUF buffers are packed one after
another (32-byte aligned) in each partition; PSUM buffers start on a 2 KiB bank boundary and
take whole banks. The address is the allocation's ``allocated_addr`` (``T.alloc_buffer(...,
allocated_addr=[a])``, the seed's spelling): the byte address in each partition; for PSUM,
bank ``a // 2048`` at offset ``a % 2048``. Codegen reads it. A buffer that already has an
address keeps it, and the others are placed after the highest end of those. A function
without a target is placed with the default ``trn`` target's limits when it allocates
on-chip memory. A buffer that does not fit the target's ``max_sbuf_size_per_partition`` /
``max_psum_size_per_partition`` raises :class:`~tvm.error.CompileError` listing what is
allocated.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.backend.sdk import target_of
from tvm.error import CompileError, located
from tvm.ir import AllocBuffer, Buffer, Mutator, PrimFunc, post_order_visit
from tvm.ir.function import IRModule
from tvm.ir.stmt import ALLOCATED_ADDR
from tvm.target import Target
from tvm.transform import PassContext

from ..access import ON_CHIP, axis_size, axis_span, buffer_layout
from ..layout import is_trainium_layout
from ._trn_pass import TrnFunctionPass

__all__ = ["TrnNaiveAllocator", "allocated_address", "bytes_per_partition"]

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

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        if target_of(func, ctx) is None and _on_chip_allocs(func):
            return self.transform_trn(func, Target("trn"))
        return super().transform_function(func, mod, ctx)

    def transform_trn(self, func: PrimFunc, target: Any) -> PrimFunc:
        placer = _Place(func.name, target)
        for node in _on_chip_allocs(func):
            placer.reserve(node)
        return func.with_body(placer.visit(func.body))


def allocated_address(node: AllocBuffer) -> int | None:
    """The byte address in each partition where the allocator placed ``node``'s buffer (its
    ``allocated_addr``), or None while it is not placed."""
    addr = node.allocated_addr
    if addr is None:
        return None
    if len(addr) != 1 or not isinstance(addr[0], int):
        raise CompileError(f"{node.buffer.name!r} in {node.buffer.scope}: allocated_addr="
                           f"{addr} should be one constant byte address in each partition, "
                           f"e.g. allocated_addr=[0]")
    return addr[0]


def _on_chip_allocs(func: PrimFunc) -> list[AllocBuffer]:
    found: list[AllocBuffer] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, AllocBuffer)
                     and n.buffer.scope in ON_CHIP else None)
    return found


class _Place(Mutator):
    def __init__(self, func_name: str, target: Any) -> None:
        attrs = target.attrs
        self.func = func_name
        self.target = target
        self.partitions = int(attrs.get("partition_size", 128))
        self.caps = {"trn.sbuf": int(attrs.get("max_sbuf_size_per_partition", 196608)),
                     "trn.psum": int(attrs.get("max_psum_size_per_partition", 16384))}
        self.next = {"trn.sbuf": 0, "trn.psum": 0}
        self.placed: list[tuple[str, str, int]] = []

    def reserve(self, node: AllocBuffer) -> None:
        """A buffer the kernel already placed: the allocator places the others after it."""
        with located(node.span):
            addr = allocated_address(node)
            if addr is None:
                return
            scope = node.buffer.scope
            self.next[scope] = max(self.next[scope], addr + bytes_per_partition(node.buffer))

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
        if node.allocated_addr is not None:
            self.placed.append((buf.scope, buf.name, size))
            return node
        align = SBUF_ALIGN if buf.scope == "trn.sbuf" else BANK
        offset = -(-self.next[buf.scope] // align) * align
        cap = self.caps[buf.scope]
        if offset + size > cap:
            mem = "SBUF" if buf.scope == "trn.sbuf" else "PSUM"
            raise CompileError(self._overflow(mem, buf, size, offset, cap))
        self.next[buf.scope] = offset + size
        self.placed.append((buf.scope, buf.name, size))
        return AllocBuffer(buf, {**node.annotations, ALLOCATED_ADDR: [offset]})

    def _overflow(self, mem: str, buf: Buffer, size: int, offset: int, cap: int) -> str:
        scope = "trn.sbuf" if mem == "SBUF" else "trn.psum"
        live = ", ".join(f"{n} ({s} B)" for sc, n, s in self.placed if sc == scope) or "none"
        extra = f" ({cap // BANK} banks of 2 KiB)" if mem == "PSUM" else ""
        return (f"TrnNaiveAllocator: {mem} capacity exceeded in {self.func}: buffer "
                f"{buf.name!r} needs {size} B per partition at offset {offset}, ending at "
                f"{offset + size} B, but the target {self.target} has {cap} B per partition"
                f"{extra}. Already allocated: {live}. Use smaller tiles or a target with more "
                f"{mem}.")
