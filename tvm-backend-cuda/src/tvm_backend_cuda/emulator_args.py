"""The arguments of an emulated launch (:class:`~tvm_backend_cuda.emulator.EmulatedKernel`):
arrays as numpy arrays in host memory, scalars at their parameter's C type.

An array the host cannot read (a CUDA or meta torch tensor, a CuPy array, any DLPack array whose
``__dlpack_device__`` is not host memory) is refused before its memory is touched, naming the
kernel, the parameter and what to pass instead; a scalar converts as the GPU's module converts
it (numpy's exact-type conversion: out of range is an error, not a wrap).
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["SCALAR_CTYPES", "host_array", "scalar_arg"]

#: each scalar dtype's ctypes type (float16 and bfloat16 as their bits)
SCALAR_CTYPES: dict[str, Any] = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
    "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float, "float64": ctypes.c_double,
    "float16": ctypes.c_uint16, "bfloat16": ctypes.c_uint16,
}


def _np_dtype(name: str) -> Any:
    import numpy as np

    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(name)


def scalar_arg(ptype: str, value: Any, pname: str, index: int, kernel: str) -> Any:
    """``value`` at the C type of a ``ptype`` parameter; out of its range or not a number, a
    TypeError naming the parameter (numpy's conversion: the GPU's module makes the same)."""
    import numpy as np

    try:
        if ptype in ("float16", "bfloat16"):
            bits = np.asarray(float(value), dtype=_np_dtype(ptype)).view(np.uint16)
            return ctypes.c_uint16(int(bits))
        return SCALAR_CTYPES[ptype](np.dtype(ptype).type(value))
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(f"kernel {kernel!r}: parameter {pname!r} (#{index}) is a {ptype} "
                        f"scalar; cannot convert {type(value).__name__} {value!r}: {e}") from None


def host_array(value: Any, pname: str, kernel: str, index: int | None = None
               ) -> tuple[Any, Any]:
    """(a numpy array sharing ``value``'s memory or a contiguous copy, the array to copy the
    result back into or None). An array that lives on a device (a CUDA torch tensor, a CuPy
    array, any DLPack array not in host memory) is refused before its memory is read."""
    import numpy as np

    if isinstance(value, np.ndarray):
        arr = value
    elif type(value).__module__.startswith("torch"):
        if value.device.type != "cpu":
            raise _not_on_host(f"a torch tensor on {value.device}", pname, kernel, index)
        t = value.detach()
        arr = _torch_bits(t).numpy()
    elif hasattr(value, "__dlpack__"):
        where = _dlpack_device(value)
        if where is not None:
            tp = type(value)
            raise _not_on_host(f"an array ({tp.__module__}.{tp.__qualname__}) on {where}",
                               pname, kernel, index)
        arr = np.from_dlpack(value)
    else:
        raise TypeError(f"kernel {kernel!r}: parameter {_param_name(pname, index)} expects a "
                        "host array (numpy, a CPU torch tensor, DLPack), got "
                        f"{type(value).__module__}.{type(value).__qualname__}")
    if arr.flags.c_contiguous and arr.flags.writeable:
        return arr, None
    tmp = np.ascontiguousarray(arr)
    return tmp, (arr if arr.flags.writeable else None)


#: DLPack device types of memory the host reads: CPU, CUDA pinned host, CUDA managed, ROCm host
_DL_HOST = frozenset({1, 3, 13, 11})
_DL_DEVICES = {2: "a CUDA device", 4: "an OpenCL device", 7: "a Vulkan device",
               8: "a Metal device", 10: "a ROCm device", 14: "a oneAPI device"}


def _dlpack_device(value: Any) -> str | None:
    """Where a DLPack array lives when the host cannot read it (None: host memory, or an
    array that does not say, which ``numpy.from_dlpack`` then checks)."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None:
        return None
    kind, ordinal = device()
    if int(kind) in _DL_HOST:
        return None
    return (f"{_DL_DEVICES.get(int(kind), 'a device')} (DLPack device type {int(kind)}, "
            f"device {int(ordinal)})")


def _param_name(pname: str, index: int | None) -> str:
    return f"{pname!r}" if index is None else f"{pname!r} (#{index})"


def _not_on_host(what: str, pname: str, kernel: str, index: int | None) -> ValueError:
    return ValueError(
        f"kernel {kernel!r}: parameter {_param_name(pname, index)} is {what}, but the CUDA "
        "emulator runs the kernel on the CPU; pass a host array instead (numpy, a CPU torch "
        "tensor, e.g. tensor.cpu(), or a DLPack array in host memory)")


def _torch_bits(t: Any) -> Any:
    """``t``, or a view of its bits where numpy has no such dtype (bfloat16, float8)."""
    import torch

    if t.dtype == torch.bfloat16:
        return t.view(torch.int16)
    if t.dtype.itemsize == 1 and t.dtype.is_floating_point:
        return t.view(torch.uint8)
    return t
