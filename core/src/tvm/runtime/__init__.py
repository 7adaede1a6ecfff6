"""The runtime: executables (what ``tvm.compile`` returns), loading saved ones, the compile cache.

>>> ex = tvm.compile(func, target="c")
>>> ex(a, b, c)                       # numpy arrays or any DLPack producer
>>> ex.export_library("vadd.tvmex")
>>> ex2 = tvm.runtime.load_module("vadd.tvmex")
"""

from __future__ import annotations

from ..ir.dtype import DataType
from .cache import CompileCache, cache_dir, cache_enabled, cache_key, compile_cache
from .executable import Executable, load_module, read_container, write_container
from .launch_plan import BoundLaunch, LaunchPlan, LaunchStep

__all__ = [
    "BoundLaunch",
    "CompileCache",
    "DataType",
    "Executable",
    "LaunchPlan",
    "LaunchStep",
    "cache_dir",
    "cache_enabled",
    "cache_key",
    "compile_cache",
    "load_module",
    "read_container",
    "write_container",
]
