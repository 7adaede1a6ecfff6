"""``AttrIs``: a read-only boolean attribute that tests one field against a constant, the
``is_<kind>`` queries of :class:`~tvm.ir.dtype.DataType`, layout axes and dispatch contexts."""

from __future__ import annotations

from typing import Any, overload

__all__ = ["AttrIs"]


class AttrIs:
    """``obj.<name>`` is ``getattr(obj, field) == value``: ``is_int = AttrIs("code", "int")``
    reads as the property ``return self.code == "int"``."""

    def __init__(self, field: str, value: object) -> None:
        self.field = field
        self.value = value
        self.name = field
        self.__doc__ = f"``self.{field} == {value!r}``"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> AttrIs: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> bool: ...
    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj, self.field) == self.value

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"property {self.name!r} of {type(obj).__name__!r} object has no "
                             "setter")
