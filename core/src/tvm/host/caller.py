"""The fast call path of host executables: the ``_tvm_host_caller`` C extension.

``kernels/caller.c`` is compiled once per Python, numpy and compiler (and cached like kernels);
it depends on no kernel. :func:`make_caller` turns a function's C parameters and its argument
:class:`~tvm.runtime.arguments.Signature` into a plan of precomputed checks and returns a
callable that checks numpy arguments in C and calls the kernel's packed entry
(``<symbol>__tvm_packed``), or calls ``fallback`` (the full Python path: core's checker, every
error message, other array types) when a check does not pass.

Why a C extension (measured in ``bench/host_call_overhead.py``, written down in
``docs/decisions.md``): per call, ctypes spends microseconds converting arguments and numpy's
``.ctypes.data`` builds an object per array; cffi still needs an address per array from Python;
reading the array structs in C costs tens of nanoseconds. Where the extension cannot be built
(no ``Python.h``, no compiler), calls take the ctypes path; :func:`unavailable_reason` says why.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.machinery
import importlib.util
import sys
import sysconfig
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..codegen.c_style import FunctionInfo
from ..error import CompileError
from ..runtime.arguments import Signature
from ..runtime.cache import CompileCache, cache_key
from .codegen import ERROR_SYMBOL, PACKED_SUFFIX, kernel_source
from .compiler import get_toolchain

__all__ = ["caller_module", "make_caller", "unavailable_reason"]

MODULE_NAME = "_tvm_host_caller"
_ARRAY, _INT, _FLOAT, _BOOL = 0, 1, 2, 3
_FROM_ARG, _FROM_SLOT = 0, 1
_CACHE = CompileCache("c-caller")
_failure: list[str] = []


def unavailable_reason() -> str | None:
    """Why the C caller is not available in this process (None when it is, or untried)."""
    return _failure[0] if _failure else None


@functools.cache
def caller_module() -> ModuleType | None:
    """The compiled ``_tvm_host_caller`` module, or None (the reason: :func:`unavailable_reason`)."""
    try:
        import numpy as np

        return _load(_build(np))
    except (CompileError, ImportError, OSError) as err:
        _failure.append(f"{type(err).__name__}: {err}".splitlines()[0])
        return None


def _build(np: Any) -> str:
    toolchain = get_toolchain()
    source = kernel_source("caller.c")
    flags = ["-O2", "-fPIC", "-shared", "-std=gnu11",
             f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}"]
    if sys.platform == "darwin":
        flags += ["-undefined", "dynamic_lookup"]
    key = cache_key("caller", source, sys.version, np.__version__, toolchain.display,
                    toolchain.version, flags)
    path = _CACHE.get_path(key)
    if path is None:
        binary = toolchain.compile_shared(source, flags, what="the host's C caller (caller.c)")
        path = _CACHE.put(key, binary, {"python": sys.version, "numpy": np.__version__})
    return str(path)


def _load(path: str) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(MODULE_NAME, path)
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path, loader=loader)
    if spec is None:
        raise ImportError(f"cannot load the host's C caller from {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def make_caller(lib: ctypes.CDLL, info: FunctionInfo, signature: Signature,
                fallback: Callable[..., Any], error_cls: type[Exception]) -> Any | None:
    """A C callable for ``info`` that falls back to ``fallback``; None when the C caller is not
    available or the signature has something the plan cannot check (expression dims, explicit
    strides, handles, dtypes numpy does not know)."""
    plan = build_plan(info, signature)
    if plan is None:
        return None
    module = caller_module()
    packed = getattr(lib, info.symbol + PACKED_SUFFIX, None)
    if module is None or packed is None:
        return None
    error = getattr(lib, ERROR_SYMBOL, None)
    return module.Caller(ctypes.cast(packed, ctypes.c_void_p).value,
                         ctypes.cast(error, ctypes.c_void_p).value if error is not None else 0,
                         plan[0], plan[1], fallback, error_cls, info.name)


def build_plan(info: FunctionInfo, signature: Signature) -> tuple[tuple, tuple] | None:
    """(per-argument checks, per-C-parameter values) for ``_tvm_host_caller.Caller``."""
    if signature.device != "cpu":
        return None
    slots: dict[str, int] = {}

    def slot(name: str) -> int:
        return slots.setdefault(name, len(slots))

    checks: list[tuple[int, ...]] = []
    for sig in signature.params:
        check = _check(sig, slot)
        if check is None:
            return None
        checks.append(check)
    user = [p for p in info.params if p.kind != "shape_var"]
    if len(user) != len(signature.params):
        return None
    index = {id(p): i for i, p in enumerate(user)}
    values: list[tuple[int, int]] = []
    for cp in info.params:
        if cp.kind != "shape_var":
            values.append((_FROM_ARG, index[id(cp)]))
            continue
        if not cp.source or cp.source[0][1] != "shape":
            return None
        arg, _, dim = cp.source[0]
        name = signature.params[arg].shape[dim]
        if not isinstance(name, str) or name not in slots:
            return None
        values.append((_FROM_SLOT, slots[name]))
    return tuple(checks), tuple(values)


def _check(p: Any, slot: Callable[[str], int]) -> tuple[int, ...] | None:
    if p.kind == "buffer":
        num = _type_num(p.dtype)
        if num is None or p.strides or p.scope not in ("global", ""):
            return None
        dims: list[int] = []
        for d in p.shape:
            if isinstance(d, bool) or not isinstance(d, (int, str)):
                return None  # an expression: the full checker evaluates it
            dims.append(d if isinstance(d, int) else -slot(d) - 1)
        return (_ARRAY, num, 1, *dims)
    if p.kind != "scalar":
        return None
    var = slot(p.var or p.name)
    if p.dtype == "bool":
        return (_BOOL, var)
    if p.dtype.startswith(("int", "uint")):
        bits = int(p.dtype.lstrip("uint") or 32)
        lo, hi = ((0, 2**bits - 1) if p.dtype.startswith("u")
                  else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
        if hi >= 2**63:  # uint64 beyond int64: the full path converts it
            return None
        return (_INT, lo, hi, var)
    return (_FLOAT, -1)


def _type_num(dtype: str) -> int | None:
    import numpy as np

    try:
        if dtype == "bfloat16":
            import ml_dtypes

            return int(np.dtype(ml_dtypes.bfloat16).num)
        return int(np.dtype(dtype).num)
    except (ImportError, TypeError):
        return None
