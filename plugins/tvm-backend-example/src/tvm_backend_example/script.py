"""The ``T.example`` script namespace: one member per declared intrinsic (``op.INTRINSICS``)."""

from __future__ import annotations

from tvm.ir.intrin import IntrinNamespace

from .op import INTRINSICS

__all__ = ["ExampleNamespace"]


class ExampleNamespace(IntrinNamespace):
    """``T.example``. Each member builds a call of one of the backend's intrinsics, and the
    printer writes the call back as that member."""

    def __init__(self) -> None:
        super().__init__("example", INTRINSICS.members("example"))
