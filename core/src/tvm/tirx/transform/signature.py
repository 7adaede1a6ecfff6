"""What a compiled function expects of its arguments, and the check runtimes run before any
launch: rank, shape, dtype, device and strides of every array; type of every scalar.

>>> specs = function_signature(func)
>>> values = check_arguments(specs, [a, b, n], device_type="cpu")   # ValueError naming the param
>>> evaluate(launch.grid[0], values)                                  # launch sizes from the args
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...ir import expr as E
from ...ir.buffer import Buffer
from ...ir.dtype import DataType
from ...ir.function import PrimFunc

__all__ = ["ParamSpec", "check_arguments", "evaluate", "function_signature"]

# DLPack device type codes (dlpack.h) -> our device names.
_DLPACK_DEVICES = {1: "cpu", 2: "cuda", 3: "cpu", 4: "opencl", 7: "vulkan", 8: "metal",
                   10: "rocm", 13: "cuda", 14: "oneapi"}


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: ``kind`` is ``"buffer"`` or ``"scalar"``; for buffers ``shape`` and
    ``strides`` are expressions (``strides`` empty means contiguous row-major) and ``scope`` the
    storage scope; ``var`` is the parameter variable and ``data`` the buffer's data handle (the
    variable kernels receive)."""

    name: str
    kind: str
    dtype: str
    shape: tuple[E.PrimExpr, ...] = ()
    strides: tuple[E.PrimExpr, ...] = ()
    scope: str = "global"
    var: E.Var | None = None
    data: E.Var | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)


def function_signature(func: PrimFunc) -> list[ParamSpec]:
    """The :class:`ParamSpec` of every parameter of ``func``, in order."""
    specs = []
    for param in func.params:
        buf: Buffer | None = func.buffer_map.get(param)
        if buf is None:
            specs.append(ParamSpec(param.name, "scalar", str(param.dtype), var=param))
        else:
            specs.append(ParamSpec(buf.name, "buffer", str(buf.dtype), tuple(buf.shape),
                                   tuple(buf.strides), buf.scope, param, buf.data))
    return specs


# -- evaluation --------------------------------------------------------------------------------
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.Min: min, E.Max: max,
    E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b, E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b,
    E.And: lambda a, b: bool(a) and bool(b), E.Or: lambda a, b: bool(a) or bool(b),
}


def evaluate(expr: Any, values: Mapping[E.Var, int | float]) -> int | float:
    """The value of a scalar expression with variables taken from ``values``."""
    e = E.convert(expr)
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return e.value
    if isinstance(e, E.Var):
        for k, v in values.items():
            if k is e:
                return v
        raise ValueError(f"cannot evaluate `{e.name}`: its value is not known")
    if isinstance(e, E.Cast):
        v = evaluate(e.value, values)
        return float(v) if e.dtype.is_float else int(v)
    if isinstance(e, E.Not):
        return not evaluate(e.a, values)
    if isinstance(e, E.Select):
        return evaluate(e.true_value if evaluate(e.condition, values) else e.false_value, values)
    if isinstance(e, E.BinaryOp):
        a, b = evaluate(e.a, values), evaluate(e.b, values)
        fn = _BINARY.get(type(e))
        if fn is not None:
            return fn(a, b)
        return _divide(e, a, b)
    raise ValueError(f"cannot evaluate a {type(e).__name__} on the host")


def _divide(e: E.BinaryOp, a: Any, b: Any) -> int | float:
    if b == 0:
        raise ZeroDivisionError(f"division by zero evaluating {type(e).__name__}")
    integer = e.dtype.is_integer
    if isinstance(e, E.FloorDiv):
        return a // b if integer else math.floor(a / b)
    if isinstance(e, E.FloorMod):
        return a % b
    if isinstance(e, E.Div):
        return int(a / b) if integer else a / b
    if isinstance(e, E.Mod):
        return int(math.fmod(a, b)) if integer else math.fmod(a, b)
    raise ValueError(f"cannot evaluate a {type(e).__name__} on the host")


# -- checking ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _ArrayInfo:
    shape: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...] | None  # in elements; None = contiguous row-major
    device: str


def check_arguments(specs: Sequence[ParamSpec], args: Sequence[Any], device_type: str = "cpu",
                    *, func_name: str = "the function") -> dict[E.Var, int | float]:
    """Check ``args`` against ``specs``; raise ValueError naming the parameter at the first
    mismatch. Arrays may be numpy arrays or any object with ``__dlpack__``,
    ``__array_interface__`` or ``__cuda_array_interface__``. Returns the value of every scalar
    parameter and every symbolic shape or stride variable (keyed by the variable), for
    :func:`evaluate`.
    """
    if len(args) != len(specs):
        names = ", ".join(s.name for s in specs)
        raise TypeError(f"{func_name} expects {len(specs)} arguments ({names}), got {len(args)}")
    values: dict[E.Var, int | float] = {}
    arrays: list[tuple[ParamSpec, _ArrayInfo]] = []
    for spec, arg in zip(specs, args):
        if spec.kind == "scalar":
            value = _check_scalar(spec, arg)
            if spec.var is not None:
                values[spec.var] = value
            continue
        info = _array_info(spec, arg)
        _check_array_basics(spec, info, device_type)
        arrays.append((spec, info))
    # symbolic dims and strides: bind every plain variable first, then check all of them
    origin: dict[int, str] = {}
    for spec, info in arrays:
        for d, dim in enumerate(spec.shape):
            _bind(values, origin, dim, info.shape[d], f"{spec.name}.shape[{d}]")
        for d, st in enumerate(spec.strides):
            _bind(values, origin, st, _strides_of(info)[d], f"{spec.name}.strides[{d}]")
    for spec, info in arrays:
        _check_shape(spec, info, values, origin)
        _check_strides(spec, info, values)
    return values


def _check_scalar(spec: ParamSpec, arg: Any) -> int | float:
    dt = DataType(spec.dtype)
    if dt.is_bool:
        if isinstance(arg, bool) or type(arg).__name__ == "bool_":
            return int(bool(arg))
        raise ValueError(f"{spec.name}: expected a bool, got {type(arg).__name__} {arg!r}")
    if dt.is_integer or dt.is_handle:
        if isinstance(arg, bool) or not hasattr(arg, "__index__"):
            raise ValueError(f"{spec.name}: expected an integer ({spec.dtype}), got "
                             f"{type(arg).__name__} {arg!r}")
        return int(arg.__index__())
    if dt.is_float:
        if isinstance(arg, bool) or not isinstance(arg, (int, float)) and not hasattr(arg, "__float__"):
            raise ValueError(f"{spec.name}: expected a number ({spec.dtype}), got "
                             f"{type(arg).__name__} {arg!r}")
        return float(arg)
    return arg


def _check_array_basics(spec: ParamSpec, info: _ArrayInfo, device_type: str) -> None:
    if len(info.shape) != spec.ndim:
        raise ValueError(f"{spec.name}: expected a {spec.ndim}-D array, got a {len(info.shape)}-D "
                         f"array of shape {info.shape}")
    if _norm_dtype(info.dtype) != _norm_dtype(spec.dtype):
        raise ValueError(f"{spec.name}: expected dtype {spec.dtype}, got {info.dtype}")
    if info.device != device_type:
        raise ValueError(f"{spec.name}: expected an array on {device_type}, got one on {info.device}")


def _bind(values: dict[E.Var, int | float], origin: dict[int, str], expr: E.PrimExpr,
          actual: int, where: str) -> None:
    if isinstance(expr, E.Var) and not any(k is expr for k in values):
        values[expr] = actual
        origin[id(expr)] = where


def _check_shape(spec: ParamSpec, info: _ArrayInfo, values: Mapping[E.Var, int | float],
                 origin: Mapping[int, str]) -> None:
    for d, dim in enumerate(spec.shape):
        expected = evaluate(dim, values)
        got = info.shape[d]
        if expected == got:
            continue
        shown = tuple(_show(x) for x in spec.shape)
        if isinstance(dim, E.Var) and id(dim) in origin:
            raise ValueError(f"{spec.name}: shape[{d}] is {got} but {dim.name} is {expected} "
                             f"(from {origin[id(dim)]}); expected shape {shown}, got {info.shape}")
        raise ValueError(f"{spec.name}: expected shape {shown}, got {info.shape} (dimension {d} "
                         f"is {got}, expected {expected})")


def _check_strides(spec: ParamSpec, info: _ArrayInfo, values: Mapping[E.Var, int | float]) -> None:
    actual = _strides_of(info)
    if spec.strides:
        expected = tuple(int(evaluate(s, values)) for s in spec.strides)
    else:
        expected = _contiguous(info.shape)
    for d, (got, want) in enumerate(zip(actual, expected)):
        if got == want or info.shape[d] == 1:
            continue  # the stride of a dimension of extent 1 never matters
        if spec.strides:
            raise ValueError(f"{spec.name}: expected strides {expected} (in elements), got {actual}")
        raise ValueError(f"{spec.name}: expected a contiguous (row-major) array, got strides "
                         f"{actual} (in elements) for shape {info.shape}; pass a contiguous copy "
                         f"(numpy.ascontiguousarray(x) or x.contiguous())")


def _contiguous(shape: Sequence[int]) -> tuple[int, ...]:
    out = []
    acc = 1
    for ext in reversed(shape):
        out.append(acc)
        acc *= ext
    return tuple(reversed(out))


def _strides_of(info: _ArrayInfo) -> tuple[int, ...]:
    return info.strides if info.strides is not None else _contiguous(info.shape)


def _show(dim: E.PrimExpr) -> Any:
    if isinstance(dim, E.IntImm):
        return dim.value
    if isinstance(dim, E.Var):
        return dim.name
    return str(dim)


# -- reading arrays ----------------------------------------------------------------------------
def _array_info(spec: ParamSpec, x: Any) -> _ArrayInfo:
    cai = _interface(x, "__cuda_array_interface__")
    if cai is not None:
        return _from_interface(x, cai, "cuda")
    ai = _interface(x, "__array_interface__")
    if ai is not None:
        return _from_interface(x, ai, "cpu")
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(spec, x)
    raise ValueError(f"{spec.name}: expected an array (numpy, or an object with __dlpack__, "
                     f"__array_interface__ or __cuda_array_interface__), got {type(x).__name__}")


def _interface(x: Any, name: str) -> dict[str, Any] | None:
    try:
        value = getattr(x, name)
    except Exception:  # torch raises for __cuda_array_interface__ of CPU tensors
        return None
    return value if isinstance(value, dict) else None


def _from_interface(x: Any, iface: dict[str, Any], device: str) -> _ArrayInfo:
    import numpy as np

    shape = tuple(int(s) for s in iface["shape"])
    npdt = np.dtype(iface["typestr"])
    dtype = _dtype_name(x, npdt)
    strides = iface.get("strides")
    itemsize = npdt.itemsize or 1
    elem = None if strides is None else tuple(int(s) // itemsize for s in strides)
    return _ArrayInfo(shape, dtype, elem, device)


def _from_dlpack(spec: ParamSpec, x: Any) -> _ArrayInfo:
    code = 1
    if hasattr(x, "__dlpack_device__"):
        code = int(x.__dlpack_device__()[0])
    device = _DLPACK_DEVICES.get(code, f"device{code}")
    if device == "cpu":
        import numpy as np

        try:
            arr = np.from_dlpack(x)
        except Exception:  # e.g. a dtype numpy does not know: fall back to attributes
            arr = None
        if arr is not None:
            info = _from_interface(arr, arr.__array_interface__, "cpu")
            return _ArrayInfo(info.shape, _dtype_name(x, arr.dtype), info.strides, "cpu")
    shape = tuple(int(s) for s in getattr(x, "shape", ()))
    stride = getattr(x, "stride", None)
    strides: tuple[int, ...] | None = None
    if callable(stride):
        strides = tuple(int(s) for s in stride())
    elif getattr(x, "strides", None) is not None:
        size = getattr(x, "itemsize", None) or getattr(getattr(x, "dtype", None), "itemsize", None) or 1
        strides = tuple(int(s) // size for s in x.strides)
    return _ArrayInfo(shape, _dtype_name(x, None), strides, device)


def _dtype_name(x: Any, npdt: Any) -> str:
    dt = getattr(x, "dtype", None)
    if dt is not None:
        name = getattr(dt, "name", None) if not isinstance(dt, str) else dt
        text = name if isinstance(name, str) else str(dt)
        return text.removeprefix("torch.")
    return str(npdt.name) if npdt is not None else "unknown"


def _norm_dtype(name: str) -> str:
    aliases = {"bool_": "bool", "float": "float32", "half": "float16", "double": "float64",
               "bfloat16": "bfloat16", "int": "int32", "long": "int64"}
    name = aliases.get(name, name)
    try:
        return str(DataType(name))
    except ValueError:
        return name
