"""``TilePrimitiveDispatch``: lower tile-primitive calls through the dispatch table."""

from __future__ import annotations

import dataclasses

from ...ir import stmt as S
from ...ir.function import IRModule, PrimFunc
from ...transform import PassContext, PrimFuncPass
from ._util import contains, target_of

__all__ = ["LowerTIRx", "TilePrimitiveDispatch"]


@dataclasses.dataclass(frozen=True)
class TilePrimitiveDispatch(PrimFuncPass):
    """Lower TIRx tile primitive calls through the active backend dispatch table.

    The target is the function's ``target`` attribute, else the PassContext's
    ``config["target"]``, else ``Target.current()``. Functions without tile-primitive calls
    are left untouched (the dispatcher is not even imported).
    """

    name = "TilePrimitiveDispatch"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        if not contains(func.body, lambda n: isinstance(n, S.TilePrimitiveCall)):
            return func
        target = target_of(func, ctx)
        if target is None:
            raise ValueError(
                f"function {func.name} calls tile primitives but no target is known; compile "
                f"with tvm.compile(..., target=...), set the function's 'target' attribute or "
                f"use 'with tvm.target.Target(...):'")
        from ..operator.tile_primitive.dispatcher import lower_tile_primitives  # noqa: PLC0415 - the tile-primitive machinery (~15 ms) loads when the first kernel that calls one is lowered

        return lower_tile_primitives(func, target)


@dataclasses.dataclass(frozen=True)
class LowerTIRx(TilePrimitiveDispatch):
    """The seed's name for the first pass of the ``tirx`` pipeline, which lowers the tile
    primitives (here, :class:`TilePrimitiveDispatch`; the kernel form, layouts and allocations
    are lowered by the passes after it)."""

    name = "LowerTIRx"
