"""The ``T.nki`` script namespace: one member per declared NKI instruction
(:data:`tvm_backend_trn.op.INTRINSICS`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from tvm.ir.intrin import IntrinNamespace

from .op import INTRINSICS

__all__ = ["NKINamespace", "OpWrapper"]

OpWrapper = Callable[[Callable[..., Any]], Callable[..., Any]]


class NKINamespace(IntrinNamespace):
    """``T.nki``: the NKI instructions (``T.nki.load(dst, src)``, ``T.nki.matmul(...)``, ...).

    ``op_wrapper`` (the seed's hook) wraps every member; the wrapper keeps the member's op name,
    which the printer looks for."""

    def __init__(self, op_wrapper: OpWrapper | None = None) -> None:
        members = INTRINSICS.members("nki")
        if op_wrapper is not None:
            members = {name: _wrapped(op_wrapper, member) for name, member in members.items()}
        super().__init__("nki", members)


def _wrapped(op_wrapper: OpWrapper, member: Any) -> Any:
    fn = op_wrapper(member)
    # a wrapper that cannot carry attributes prints through T.call_intrin
    with contextlib.suppress(AttributeError):
        fn.__tir_op_name__ = member.__tir_op_name__  # type: ignore[attr-defined]
    return fn
