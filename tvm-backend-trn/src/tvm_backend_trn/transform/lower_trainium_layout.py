"""``LowerTrainiumLayout``: check a dispatched kernel against the Trainium memory model.

After dispatch, a trn kernel is loops, allocations and ``T.nki.*`` instructions on buffer
regions; codegen turns each region into an NKI access pattern through its buffer's layout
(:mod:`tvm_backend_trn.access`). This pass checks what codegen relies on and reports it at
the statement: every trn.sbuf / trn.psum buffer has a Trainium layout (``P``/``F``/``Bank``
axes; one without a layout gets the default ``P`` on dim 0), nothing reads or writes an
on-chip buffer element by element, and no tile primitive is left.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.backend.sdk import target_of
from tvm.error import CompileError
from tvm.ir import Buffer, PrimFunc, Visitor
from tvm.ir.function import IRModule
from tvm.transform import PassContext, PrimFuncPass

from ..access import ON_CHIP, buffer_layout
from ..layout import is_trainium_layout

__all__ = ["LowerTrainiumLayout"]


@dataclasses.dataclass(frozen=True)
class LowerTrainiumLayout(PrimFuncPass):
    """Check on-chip buffers and accesses of trn kernels (see the module doc)."""

    name = "tirx.backend.trn.LowerTrainiumLayout"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        target = target_of(func, ctx)
        if target is not None and target.kind.name != "trn":
            return func
        _Check(func.name).visit(func.body)
        return func


class _Check(Visitor):
    def __init__(self, func: str) -> None:
        self.func = func
        self.seen: set[int] = set()

    def _buffer(self, buf: Buffer) -> None:
        if id(buf) in self.seen or buf.scope not in ON_CHIP:
            return
        self.seen.add(id(buf))
        layout = buffer_layout(buf)
        if not is_trainium_layout(layout):
            raise CompileError(f"{self.func}: buffer {buf.name!r} in {buf.scope} has layout "
                               f"{layout}, which is not a Trainium layout; build it with "
                               f"trainium_layout(annotation, shape)")

    def visit_AllocBuffer(self, node: Any) -> None:
        self._buffer(node.buffer)

    def visit_BufferRegion(self, node: Any) -> None:
        self._buffer(node.buffer)
        self.generic_visit(node)

    def visit_BufferLoad(self, node: Any) -> None:
        self._direct(node.buffer, "BufferLoad")

    def visit_BufferStore(self, node: Any) -> None:
        self._direct(node.buffer, "BufferStore")

    def _direct(self, buf: Buffer, what: str) -> None:
        if buf.scope in ON_CHIP:
            raise CompileError(
                f"{self.func}: cannot lower direct {what} on {buf.scope} buffer {buf.name!r}: "
                f"Trainium engines work on whole tiles; use tile primitives (Tx.*) or T.nki.* "
                f"instructions on regions")

    def visit_Call(self, node: Any) -> None:
        if node.op.name.startswith("tirx.nki."):
            # element arguments of NKI instructions name tiles, not scalar accesses
            for a in node.args:
                if hasattr(a, "buffer"):
                    self._buffer(a.buffer)
            return
        self.generic_visit(node)

    def visit_TilePrimitiveCall(self, node: Any) -> None:
        raise CompileError(f"{self.func}: tile primitive {node.op.name} was not dispatched; "
                           f"run TilePrimitiveDispatch first")
