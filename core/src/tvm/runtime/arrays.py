"""Reading an array argument without converting it: shape, dtype, strides, device and flags of
numpy arrays, torch tensors and anything with ``__cuda_array_interface__``,
``__array_interface__`` or ``__dlpack__``, for :class:`~tvm.runtime.arguments.ArgumentChecker`.
numpy is imported only when an array needs it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..ir.dtype import DataType
from .devices import numpy_dtype

# DLPack device type codes (dlpack.h) -> device kinds. Pinned host memory (3) is CPU memory.
_DLPACK_DEVICES = {1: "cpu", 2: "cuda", 3: "cpu", 4: "opencl", 7: "vulkan", 8: "metal",
                   10: "rocm", 13: "cuda", 14: "oneapi"}


@functools.lru_cache(maxsize=256)
def _canon_dtype(name: str) -> str:
    """One spelling per dtype: numpy's ``bool_``/torch's ``half`` -> ``bool``/``float16``."""
    name = name.removeprefix("torch.")
    aliases = {"bool_": "bool", "float": "float32", "half": "float16", "double": "float64",
               "int": "int32", "long": "int64", "float8_e4m3fn": "float8_e4m3",
               "float8_e5m2": "float8_e5m2"}
    name = aliases.get(name, name)
    try:
        return str(DataType(name))
    except (ValueError, TypeError):
        return name


@dataclass
class _Array:
    shape: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...] | None  # in elements; None = contiguous row-major
    device: str  # the kind: cpu, cuda, ...
    where: str = ""  # the device as shown: cpu, cuda:1
    readonly: bool = False
    byteorder: str = ""  # "big-endian" / "little-endian" when not the machine's own


def _read_array(x: Any) -> _Array | None:
    """Shape, dtype, strides and device of any supported array, else None."""
    if type(x).__module__ == "torch":  # torch.Tensor / Parameter: no conversion needed
        dev = x.device
        where = dev.type if dev.index is None else f"{dev.type}:{dev.index}"
        return _Array(tuple(x.shape), _canon_dtype(str(x.dtype)), tuple(x.stride()), dev.type,
                      where)
    cai = _interface(x, "__cuda_array_interface__")
    if cai is not None:
        return _from_interface(x, cai, "cuda")
    ai = _interface(x, "__array_interface__")
    if ai is not None:
        return _from_interface(x, ai, "cpu")
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x)
    return None


def _interface(x: Any, name: str) -> dict[str, Any] | None:
    try:
        value = getattr(x, name)
    except Exception:  # torch raises for __cuda_array_interface__ of CPU tensors
        return None
    return value if isinstance(value, dict) else None


def _from_interface(x: Any, iface: dict[str, Any], device: str) -> _Array:
    shape = tuple(int(s) for s in iface["shape"])
    npdt = _np_dtype(x, iface)
    strides = iface.get("strides")
    itemsize = npdt.itemsize or 1
    elem = None if strides is None else tuple(int(s) // itemsize for s in strides)
    data = iface.get("data")
    readonly = bool(data[1]) if isinstance(data, tuple) and len(data) > 1 else False
    return _Array(shape, _dtype_of(x, npdt), elem, device, device, readonly, _foreign_order(npdt))


def _np_dtype(x: Any, iface: dict[str, Any]) -> Any:
    """The numpy dtype of an interface array. The array's own ``dtype`` first (a numpy dtype, or
    a tvm dtype name as a device ``tvm.runtime.Tensor`` has): ml_dtypes' float8_e5m2 writes the
    typestr ``<f1``, which numpy cannot parse back."""
    import numpy as np

    own = getattr(x, "dtype", None)
    if isinstance(own, np.dtype):
        return own
    if isinstance(own, str):
        try:
            return numpy_dtype(own)
        except (TypeError, ValueError):  # a name numpy does not know: the typestr decides
            pass
    return np.dtype(iface["typestr"])


def _foreign_order(npdt: Any) -> str:
    """'big-endian' / 'little-endian' for a dtype not in the machine's byte order, else ''."""
    if npdt.isnative:
        return ""
    return "big-endian" if npdt.byteorder == ">" else "little-endian"


def _from_dlpack(x: Any) -> _Array:
    code, index = 1, 0
    if hasattr(x, "__dlpack_device__"):
        try:
            code, index = (int(v) for v in x.__dlpack_device__())
        except Exception:  # a producer whose device query fails is taken as CPU, as numpy does
            code, index = 1, 0
    device = _DLPACK_DEVICES.get(code, f"device type {code}")
    if device == "cpu":
        import numpy as np

        try:
            arr = np.from_dlpack(x)
        except Exception:  # e.g. a dtype numpy does not know: fall back to attributes
            arr = None
        if arr is not None:
            info = _from_interface(arr, arr.__array_interface__, "cpu")
            info.dtype = _dtype_of(x, arr.dtype)
            return info
    shape = tuple(int(s) for s in getattr(x, "shape", ()))
    stride = getattr(x, "stride", None)
    strides: tuple[int, ...] | None = None
    if callable(stride):
        strides = tuple(int(s) for s in stride())
    elif getattr(x, "strides", None) is not None:
        size = getattr(x, "itemsize", None) or getattr(getattr(x, "dtype", None), "itemsize", 1)
        strides = tuple(int(s) // int(size or 1) for s in x.strides)
    return _Array(shape, _dtype_of(x, None), strides, device, f"{device}:{index}")


def _dtype_of(x: Any, npdt: Any) -> str:
    dt = getattr(x, "dtype", None)
    if dt is not None:
        name = dt if isinstance(dt, str) else getattr(dt, "name", None)
        return _canon_dtype(name if isinstance(name, str) else str(dt))
    return _canon_dtype(str(npdt.name)) if npdt is not None else "unknown"


def _contiguous(shape: Sequence[int]) -> tuple[int, ...]:
    out = []
    acc = 1
    for ext in reversed(shape):
        out.append(acc)
        acc *= ext
    return tuple(reversed(out))
