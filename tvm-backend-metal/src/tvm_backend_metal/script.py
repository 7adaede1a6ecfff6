"""The ``T.metal`` script namespace: Metal's SIMD-group matrix and SIMD-group intrinsics, one
member per declared intrinsic (:data:`tvm_backend_metal.op.INTRINSICS`).

``T.metal.simdgroup_load(A_sg.data, 0, T.address_of(A[0]), 8)`` builds a call of
``tirx.metal.simdgroup_load``; the printer writes it back in the same form. Arguments and
defaults are the seed's.
"""

from __future__ import annotations

from tvm.ir.intrin import IntrinNamespace

from .op import INTRINSICS

__all__ = ["MetalNamespace"]


class MetalNamespace(IntrinNamespace):
    """``T.metal``. One member per ``tirx.metal.*`` intrinsic (see :mod:`tvm_backend_metal.op`)."""

    def __init__(self) -> None:
        super().__init__("metal", INTRINSICS.members("metal"))
