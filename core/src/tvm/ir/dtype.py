"""Data types: ``int4``..``int64``, ``uint4``..``uint64``, ``float16/32/64``, ``bfloat16``,
``float8_e4m3fn``, ``float8_e5m2``, ``float4_e2m1fn`` (a storage type: tensor cores read it
from memory), ``float8_e8m0fnu`` (a power-of-two scale factor of block-scaled MMAs: a storage
type too), ``bool``, ``handle``, ``void`` (also spelled ``""``, as in
Apache TVM), and vectors such as ``float32x4``."""

from __future__ import annotations

import re
from functools import cache

from ._attr_is import AttrIs

__all__ = ["DataType", "dtype_of"]

_CODES = ("int", "uint", "float", "bfloat", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn",
          "float8_e8m0fnu", "bool", "handle", "void")
_FIXED_BITS = {"float8_e4m3fn": 8, "float8_e5m2": 8, "float4_e2m1fn": 4, "float8_e8m0fnu": 8,
               "bool": 1, "handle": 64, "void": 0}
_ALLOWED_BITS = {
    "int": (4, 8, 16, 32, 64),
    "uint": (4, 8, 16, 32, 64),
    "float": (16, 32, 64),
    "bfloat": (16,),
}
_PATTERN = re.compile(r"^(float8_e4m3fn|float8_e5m2|float4_e2m1fn|float8_e8m0fnu|bool|handle|void|int|uint|"
                      r"float|bfloat)(\d*)(?:x(\d+))?$")


class DataType:
    """An immutable scalar or vector data type. Compares equal to its string spelling."""

    __slots__ = ("bits", "code", "lanes")
    code: str
    bits: int
    lanes: int

    def __new__(cls, spec: str | DataType) -> DataType:
        if isinstance(spec, DataType):
            return spec
        return _parse(str(spec))

    @classmethod
    def _make(cls, code: str, bits: int, lanes: int) -> DataType:
        obj = object.__new__(cls)
        object.__setattr__(obj, "code", code)
        object.__setattr__(obj, "bits", bits)
        object.__setattr__(obj, "lanes", lanes)
        return obj

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("DataType is immutable")

    # -- queries ---------------------------------------------------------------------------
    is_int = AttrIs("code", "int")
    is_uint = AttrIs("code", "uint")
    is_bool = AttrIs("code", "bool")
    is_handle = AttrIs("code", "handle")
    is_void = AttrIs("code", "void")

    @property
    def is_integer(self) -> bool:
        """int or uint (not bool)."""
        return self.code in ("int", "uint")

    @property
    def is_float(self) -> bool:
        """Any floating type: float16/32/64, bfloat16, float8, float4."""
        return self.code in ("float", "bfloat", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn",
                             "float8_e8m0fnu")

    @property
    def is_vector(self) -> bool:
        return self.lanes > 1

    @property
    def bytes(self) -> int:
        """Storage size of one element of all lanes (bool counts as one byte)."""
        bits = 8 if self.code == "bool" else self.bits
        return (bits * self.lanes + 7) // 8

    def element_of(self) -> DataType:
        return self.with_lanes(1)

    def with_lanes(self, lanes: int) -> DataType:
        return _cached(self.code, self.bits, lanes)

    # -- protocol --------------------------------------------------------------------------
    def __str__(self) -> str:
        if self.code in _FIXED_BITS:
            base = self.code
        else:
            base = f"{self.code}{self.bits}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DataType):
            return self is other or (
                self.code == other.code and self.bits == other.bits and self.lanes == other.lanes
            )
        if isinstance(other, str):
            try:
                return self == DataType(other)
            except ValueError:
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (DataType, (str(self),))


_FLOAT32_MAX = 3.4028234663852886e38


@cache
def _cached(code: str, bits: int, lanes: int) -> DataType:
    return DataType._make(code, bits, lanes)


@cache
def _parse(spec: str) -> DataType:
    text = spec.strip()
    aliases = {"float": "float32", "int": "int32", "uint": "uint32", "double": "float64",
               "half": "float16", "bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
               "": "void"}
    text = aliases.get(text, text)
    m = _PATTERN.match(text)
    if m is None:
        raise ValueError(
            f"unknown data type {spec!r}; expected e.g. 'int32', 'uint8', 'float16', 'bfloat16', "
            f"'float8_e4m3fn', 'bool', 'handle' or a vector such as 'float32x4'"
        )
    code, bits_s, lanes_s = m.group(1), m.group(2), m.group(3)
    if code in _FIXED_BITS:
        if bits_s:
            raise ValueError(f"data type {spec!r}: {code} takes no bit width")
        bits = _FIXED_BITS[code]
    else:
        if not bits_s:
            raise ValueError(f"data type {spec!r} needs a bit width, e.g. {code}32")
        bits = int(bits_s)
        if bits not in _ALLOWED_BITS[code]:
            raise ValueError(f"data type {spec!r}: {code} supports widths {_ALLOWED_BITS[code]}")
    lanes = int(lanes_s) if lanes_s else 1
    if lanes < 1:
        raise ValueError(f"data type {spec!r}: lanes must be >= 1")
    return _cached(code, bits, lanes)


def dtype_of(value: object) -> DataType:
    """The natural IR data type of a Python scalar."""
    if isinstance(value, bool):
        return DataType("bool")
    if isinstance(value, int):
        return DataType("int32") if -(2**31) <= value < 2**31 else DataType("int64")
    if isinstance(value, float):  # float32, unless the value needs float64's range
        return DataType("float64") if _FLOAT32_MAX < abs(value) < float("inf") else DataType("float32")
    raise TypeError(f"cannot infer an IR data type for {type(value).__name__} value {value!r}")
