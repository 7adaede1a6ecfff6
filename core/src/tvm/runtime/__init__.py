"""The runtime: executables (what ``tvm.compile`` returns), loading saved ones, the compile cache.

>>> ex = tvm.compile(func, target="c")
>>> ex(a, b, c)                       # numpy arrays or any DLPack producer
>>> ex.export_library("vadd.tvmex")
>>> ex2 = tvm.runtime.load_module("vadd.tvmex")
>>> A = tvm.runtime.tensor(np.ones(4, "float32"), tvm.cuda(0)); ex(A); A.numpy()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ir.dtype import DataType
from .cache import CompileCache, cache_dir, cache_enabled, cache_key, compile_cache
from .executable import Executable, load_module, read_container, write_container
from .launch_plan import BoundLaunch, LaunchPlan, LaunchStep

if TYPE_CHECKING:
    from .devices import Device, DeviceTensor, ShapeTuple, Tensor, cpu, cuda, device, tensor

#: devices and tensors (tvm.runtime.devices), loaded when first named
_DEVICE_NAMES = {"Device", "DeviceTensor", "ShapeTuple", "Tensor", "cpu", "cuda", "device",
                 "tensor"}


def __getattr__(name: str) -> Any:
    if name in _DEVICE_NAMES:
        from . import devices  # noqa: PLC0415 - devices load with the first tensor, not at import tvm

        return getattr(devices, name)
    raise AttributeError(f"module 'tvm.runtime' has no attribute {name!r}")

__all__ = [
    "BoundLaunch",
    "CompileCache",
    "DataType",
    "Device",
    "DeviceTensor",
    "Executable",
    "LaunchPlan",
    "LaunchStep",
    "ShapeTuple",
    "Tensor",
    "cache_dir",
    "cache_enabled",
    "cache_key",
    "compile_cache",
    "cpu",
    "cuda",
    "device",
    "load_module",
    "read_container",
    "tensor",
    "write_container",
]
