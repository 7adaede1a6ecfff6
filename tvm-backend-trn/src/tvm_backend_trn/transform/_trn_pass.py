"""The base of the passes that only act on functions compiled for a ``trn`` target."""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.backend.sdk import target_of
from tvm.ir import PrimFunc
from tvm.ir.function import IRModule
from tvm.transform import PassContext, PrimFuncPass


@dataclasses.dataclass(frozen=True)
class TrnFunctionPass(PrimFuncPass):
    """A function pass that leaves functions without a ``trn`` target as they are and hands the
    others, with their target, to :meth:`transform_trn`."""

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        target = target_of(func, ctx)
        if target is None or target.kind.name != "trn":
            return func
        return self.transform_trn(func, target)

    def transform_trn(self, func: PrimFunc, target: Any) -> PrimFunc:
        raise NotImplementedError(f"pass {self.pass_name} does not implement transform_trn")
