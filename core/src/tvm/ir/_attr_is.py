"""``AttrIs``: a read-only boolean attribute that tests one field against a constant, the
``is_<kind>`` queries of :class:`~tvm.ir.dtype.DataType`, layout axes and dispatch contexts."""

from __future__ import annotations

from typing import Any, overload

__all__ = ["AttrIs", "Flag", "FlagIs"]


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


class Flag:
    """A truth value that can also be called: ``axis.is_thread`` and the seed's
    ``axis.is_thread()`` both read it."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __bool__(self) -> bool:
        return self.value

    def __call__(self) -> bool:
        return self.value

    def __eq__(self, other: object) -> bool:
        return self.value == (bool(other) if isinstance(other, Flag) else other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


class FlagIs(AttrIs):
    """:class:`AttrIs` whose value is a :class:`Flag` (readable as a property and a call)."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return Flag(getattr(obj, self.field) == self.value)
