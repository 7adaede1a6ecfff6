"""The ``T.metal`` script namespace: Metal's SIMD-group matrix and SIMD-group intrinsics.

``T.metal.simdgroup_load(A_sg.data, 0, T.address_of(A[0]), 8)`` builds a call of
``tirx.metal.simdgroup_load``; the printer writes it back in the same form. Arguments and
defaults are the seed's.
"""

from __future__ import annotations

from typing import Any

from . import op as _op

__all__ = ["MetalNamespace"]


def _bind(name: str) -> Any:
    builder = getattr(_op, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return builder(*args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"MetalNamespace.{name}"
    method.__doc__ = builder.__doc__
    # The printer resolves T.metal.<name> through this attribute.
    method.__tir_op_name__ = _op.op_name(name)  # type: ignore[attr-defined]
    return method


class MetalNamespace:
    """``T.metal``. One method per ``tirx.metal.*`` intrinsic (see :mod:`tvm_backend_metal.op`)."""

    make_filled_simdgroup_matrix = _bind("make_filled_simdgroup_matrix")
    simdgroup_load = _bind("simdgroup_load")
    simdgroup_store = _bind("simdgroup_store")
    simdgroup_multiply_accumulate = _bind("simdgroup_multiply_accumulate")
    simd_shuffle = _bind("simd_shuffle")
    simd_shuffle_up = _bind("simd_shuffle_up")
    simd_shuffle_down = _bind("simd_shuffle_down")
    simd_shuffle_xor = _bind("simd_shuffle_xor")
    simd_broadcast = _bind("simd_broadcast")
    simd_sum = _bind("simd_sum")
    simd_max = _bind("simd_max")
    simd_min = _bind("simd_min")
    threadgroup_barrier = _bind("threadgroup_barrier")
    simdgroup_barrier = _bind("simdgroup_barrier")

    def __repr__(self) -> str:
        return "T.metal"
