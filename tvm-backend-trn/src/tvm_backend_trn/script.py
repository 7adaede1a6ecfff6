"""The ``T.nki`` script namespace: one attribute per NKI intrinsic."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import op as _op

__all__ = ["NKINamespace", "OpWrapper"]

OpWrapper = Callable[[Callable[..., Any]], Callable[..., Any]]


def _default_op_wrapper(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)  # keeps __tir_op_name__, which the printer looks for
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapped


class NKINamespace:
    """``T.nki``: the NKI instructions (``T.nki.load(dst, src)``, ``T.nki.matmul(...)``, ...)."""

    def __init__(self, op_wrapper: OpWrapper | None = None) -> None:
        wrap = op_wrapper or _default_op_wrapper
        self.load = wrap(_op.nki_load)
        self.store = wrap(_op.nki_store)
        self.tensor_copy = wrap(_op.nki_tensor_copy)
        self.matmul = wrap(_op.nki_matmul)
        self.activation = wrap(_op.nki_activation)
        self.activation_reduce = wrap(_op.nki_activation_reduce)
        self.reciprocal = wrap(_op.nki_reciprocal)
        self.tensorreduce = wrap(_op.nki_tensorreduce)
        self.tensortensor = wrap(_op.nki_tensortensor)
        self.tensorscalar = wrap(_op.nki_tensorscalar)
        self.tensorscalar_reduce = wrap(_op.nki_tensorscalar_reduce)
        self.scalar_tensor_tensor = wrap(_op.nki_scalar_tensor_tensor)
        self.scalar_tensor_scalar = wrap(_op.nki_scalar_tensor_scalar)
        self.memset = wrap(_op.nki_memset)
        self.identity = wrap(_op.nki_identity)
        self.affine_select = wrap(_op.nki_affine_select)

    def __repr__(self) -> str:
        return "T.nki"
