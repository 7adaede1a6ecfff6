"""The ``T.nki`` script namespace: one member per declared NKI instruction
(:data:`tvm_backend_trn.op.INTRINSICS`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm.ir.intrin import IntrinNamespace

from .op import INTRINSICS

__all__ = ["NKINamespace", "OpWrapper"]

OpWrapper = Callable[[Callable[..., Any]], Callable[..., Any]]


class NKINamespace(IntrinNamespace):
    """``T.nki``: the NKI instructions (``T.nki.load(dst, src)``, ``T.nki.matmul(...)``, ...).

    ``op_wrapper`` (the seed's hook) wraps every member, keeping its op name."""

    def __init__(self, op_wrapper: OpWrapper | None = None) -> None:
        super().__init__("nki", INTRINSICS.members("nki", wrap=op_wrapper))
