"""``tvm.ir.type``: the types of variables, as Apache TVM spells them.

A :class:`tvm.ir.Var` takes one as its ``dtype``: ``Var("x", PrimType("float32"))`` is a
float32 variable, ``Var("p", PointerType(PrimType("float16"), "shared"))`` a handle to float16
shared memory, ``Var("tm", TensorMapType())`` a TMA descriptor passed by value (the handle
``T.TensorMap`` annotates).
"""

from __future__ import annotations

from typing import Any

from .dtype import DataType
from .node import Node

__all__ = ["PointerType", "PrimType", "TensorMapType", "Type", "type_of_var", "var_fields"]


class Type(Node):
    """The base of variable types. Types compare by value (``PrimType("float32") ==
    PrimType("float32")``); a :class:`PrimType` also equals its data type (the seed's tests
    compare ``buffer.dtype == PrimType("float32")``)."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (DataType, str)) and isinstance(self, PrimType):
            return self.dtype == other
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(str(getattr(self, f)) for f in self._fields)))


class PrimType(Type):
    """A scalar or vector data type."""

    _fields = ("dtype",)

    def __init__(self, dtype: str | DataType) -> None:
        self.dtype = DataType(dtype)


class TensorMapType(Type):
    """A CUDA TMA descriptor (``CUtensorMap``), passed to kernels by value."""

    _fields = ()


class PointerType(Type):
    """A pointer to ``element_type`` in ``storage_scope`` ("" is global memory). A pointer to a
    :class:`TensorMapType` is the seed's type of a host-encoded map (``T.handle("tensormap")``),
    the same variable as a ``TensorMapType()`` one here."""

    _fields = ("element_type", "storage_scope")

    def __init__(self, element_type: PrimType | TensorMapType | str | DataType,
                 storage_scope: str = "") -> None:
        self.element_type: PrimType | TensorMapType = (
            element_type if isinstance(element_type, (PrimType, TensorMapType))
            else PrimType(element_type))
        self.storage_scope = storage_scope


def var_fields(t: Type) -> dict[str, Any]:
    """The ``dtype``, ``ptr_dtype`` and ``ptr_scope`` of a :class:`tvm.ir.Var` of type ``t``."""
    if isinstance(t, PrimType):
        return {"dtype": t.dtype, "ptr_dtype": None, "ptr_scope": None}
    if isinstance(t, PointerType) and isinstance(t.element_type, PrimType):
        return {"dtype": DataType("handle"), "ptr_dtype": t.element_type.dtype,
                "ptr_scope": t.storage_scope or None}
    if isinstance(t, (TensorMapType, PointerType)):  # a map, or a pointer to one
        return {"dtype": DataType("handle"), "ptr_dtype": None, "ptr_scope": "grid_constant"}
    raise TypeError(f"not a variable type: {t!r}")


def type_of_var(dtype: DataType, ptr_dtype: DataType | None, ptr_scope: str | None) -> Type:
    """The :class:`Type` of a variable with these fields (the inverse of :func:`var_fields`)."""
    if not dtype.is_handle:
        return PrimType(dtype)
    if ptr_scope == "grid_constant":
        return TensorMapType()
    return PointerType(PrimType(ptr_dtype if ptr_dtype is not None else "void"),
                       ptr_scope or "")
