"""Check call arguments against a compiled function's signature, before anything runs.

Arrays may be numpy arrays or any DLPack producer on the expected device (CPU arrays are taken
zero-copy with ``numpy.from_dlpack``). Every problem is a ``ValueError`` (``TypeError`` for a
wrong argument count or kind) that names the function and the parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..codegen.c_style import FunctionInfo, ParamInfo

__all__ = ["bind_arguments"]

_DLPACK_DEVICES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                   10: "rocm", 13: "cuda_managed", 14: "oneapi"}


def bind_arguments(info: FunctionInfo, args: Sequence[Any], device_type: str = "cpu") -> list[Any]:
    """Values for every C parameter of ``info``, in order: numpy arrays for buffers, Python
    numbers for scalars and for the shape variables derived from the arrays."""
    import numpy as np

    user = info.user_params
    if len(args) != len(user):
        names = ", ".join(p.name for p in user)
        raise TypeError(f"{info.name}() takes {len(user)} argument(s) ({names}), "
                        f"got {len(args)}")
    values: dict[str, Any] = {}
    arrays: list[Any] = []
    for p, arg in zip(user, args):
        if p.kind == "buffer":
            arrays.append(_as_array(np, info, p, arg, device_type))
        else:
            arrays.append(None)
            values[p.c_name] = _as_scalar(np, info, p, arg)
    for p, arr in zip(user, arrays):
        if arr is not None:
            _check_array(info, p, arr, values)
    out: list[Any] = []
    index = 0
    for p in info.params:
        if p.kind == "shape_var":
            out.append(values[p.c_name])
        else:
            out.append(arrays[index] if arrays[index] is not None else values[p.c_name])
            index += 1
    return out


def _as_array(np: Any, info: FunctionInfo, p: ParamInfo, arg: Any, device_type: str) -> Any:
    if isinstance(arg, np.ndarray):
        return arg
    if hasattr(arg, "__dlpack__"):
        device = _dlpack_device(arg)
        if device != device_type:
            raise ValueError(f"{info.name}: argument {p.name!r} is a {device} array; this "
                             f"function runs on {device_type} and needs a {device_type} array")
        try:
            return np.from_dlpack(arg)
        except (TypeError, ValueError, BufferError, RuntimeError) as err:
            raise ValueError(f"{info.name}: argument {p.name!r} could not be read through "
                             f"DLPack ({err})") from err
    raise TypeError(f"{info.name}: argument {p.name!r} must be an array ({p.dtype}, shape "
                    f"{_shape_text(p.shape)}): a numpy array or a DLPack producer, got "
                    f"{type(arg).__name__}")


def _dlpack_device(arg: Any) -> str:
    try:
        code, index = arg.__dlpack_device__()
    except Exception:  # a producer without the method is taken as CPU, as numpy does
        return "cpu"
    name = _DLPACK_DEVICES.get(int(code), f"device type {int(code)}")
    return "cpu" if name == "cpu" else f"{name}:{int(index)}"


def _as_scalar(np: Any, info: FunctionInfo, p: ParamInfo, arg: Any) -> Any:
    if p.kind == "handle":
        if isinstance(arg, np.ndarray):
            return arg.ctypes.data
        if arg is None or isinstance(arg, int):
            return arg
        raise TypeError(f"{info.name}: argument {p.name!r} is a pointer; pass an int address, "
                        f"None or a numpy array, got {type(arg).__name__}")
    if isinstance(arg, np.ndarray) and arg.ndim == 0:
        arg = arg.item()
    if isinstance(arg, np.generic):
        arg = arg.item()
    dtype = p.dtype
    if dtype == "bool":
        if not isinstance(arg, (bool, int)):
            raise TypeError(f"{info.name}: argument {p.name!r} must be a bool, got "
                            f"{type(arg).__name__}")
        return bool(arg)
    if dtype.startswith(("int", "uint")):
        if isinstance(arg, bool) or not isinstance(arg, int):
            raise TypeError(f"{info.name}: argument {p.name!r} must be an int ({dtype}), got "
                            f"{type(arg).__name__} {arg!r}")
        bits = int(dtype.lstrip("uint") or 32)
        lo, hi = (0, 2**bits - 1) if dtype.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if not lo <= arg <= hi:
            raise ValueError(f"{info.name}: argument {p.name!r} = {arg} does not fit in {dtype}")
        return arg
    if isinstance(arg, bool) or not isinstance(arg, (int, float)):
        raise TypeError(f"{info.name}: argument {p.name!r} must be a number ({dtype}), got "
                        f"{type(arg).__name__}")
    return float(arg)


def _check_array(info: FunctionInfo, p: ParamInfo, arr: Any, values: dict[str, Any]) -> None:
    where = f"{info.name}: argument {p.name!r}"
    got = _dtype_name(arr)
    if got != p.dtype:
        raise ValueError(f"{where} has dtype {got}, expected {p.dtype}")
    shape = p.shape or []
    if arr.ndim != len(shape):
        raise ValueError(f"{where} has {arr.ndim} dimension(s) (shape {tuple(arr.shape)}), "
                         f"expected {len(shape)} (shape {_shape_text(shape)})")
    for k, (want, have) in enumerate(zip(shape, arr.shape)):
        _match(where, "dimension", k, want, int(have), values, shape)
    itemsize = arr.dtype.itemsize
    if p.strides is None:
        if not arr.flags["C_CONTIGUOUS"]:
            raise ValueError(f"{where} must be C-contiguous (row-major and dense); got strides "
                             f"{tuple(arr.strides)} in bytes for shape {tuple(arr.shape)}. Pass "
                             "numpy.ascontiguousarray(x)")
        return
    for k, (want, have) in enumerate(zip(p.strides, arr.strides)):
        if have % itemsize:
            raise ValueError(f"{where} has stride {have} bytes in dimension {k}, not a multiple "
                             f"of its element size {itemsize}")
        _match(where, "stride", k, want, have // itemsize, values, p.strides)


def _match(where: str, what: str, k: int, want: Any, have: int, values: dict[str, Any],
           expected: list[Any]) -> None:
    if want is None:
        return  # an expression the runtime does not evaluate
    if isinstance(want, int):
        if want != have:
            raise ValueError(f"{where} has {what} {k} = {have}, expected {want} "
                             f"({what}s {_shape_text(expected)})")
        return
    bound = values.get(want)
    if bound is None:
        values[want] = have
    elif bound != have:
        raise ValueError(f"{where} has {what} {k} = {have}, but {want!r} is {bound} "
                         f"(from another argument)")


def _dtype_name(arr: Any) -> str:
    name = str(arr.dtype)
    return {"bool": "bool"}.get(name, name)


def _shape_text(shape: list[Any] | None) -> str:
    if shape is None:
        return "?"
    items = ["?" if s is None else str(s) for s in shape]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
