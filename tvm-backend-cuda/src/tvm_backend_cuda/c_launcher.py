"""The C launcher of the hot call: ``cuLaunchKernel`` from a small CPython extension.

``cuda.core.launch`` validates its stream, config and kernel and builds a parameter holder on
every call; the hot call (:mod:`.fast_call`) has checked all of that once. The extension
(``c_launcher.c``, shipped with the package) holds one kernel's launch (the driver's
``cuLaunchKernel``, the kernel handle and its constant launch sizes) and launches with the raw
stream handle and the argument pointers, or with a prebuilt parameter array (tensor-map
kernels), in one C call. A ``TensorLauncher`` takes the tensors themselves: it checks them
against the tensors of the call it was made from and reads their pointers and the current
stream through the DLPack C exchange API of their type (torch 2.10 and later), so that the hot
call of a torch caller makes no Python call into torch at all. Issue 21's budget (1.2x a bare ``cuda.core.launch``) is what it is
for: ``docs/perf.md``, ``bench/cuda_launch_overhead.py``.

It is compiled on first use with the system C compiler (``$CC``, as the host backend's) against
this interpreter's headers, and cached in the compile cache (namespace ``cuda-launcher``) keyed
by its source, the interpreter's ABI and the compiler. Where that cannot be done (no compiler,
no ``Python.h``, a failed build, ``TVM_CUDA_C_LAUNCHER=0``), :func:`launcher_type` is None and
the hot call launches with ``cuda.core.launch`` as before; the reason is logged once (logger
``tvm_backend_cuda.c_launcher``, INFO) and :func:`status` tells it
(``bench/cuda_launch_overhead.py`` prints it)."""

from __future__ import annotations

import ctypes
import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import sys
import sysconfig
import threading
from pathlib import Path
from typing import Any

from tvm.backend.sdk import cache_key, compile_cache, get_toolchain

__all__ = ["cu_launch_kernel_address", "launcher_type", "make_launcher", "make_tensor_launcher",
           "status"]

_LOG = logging.getLogger(__name__)
_CACHE = "cuda-launcher"
_MODULE = "tvm_c_launcher"
_SOURCE = Path(__file__).with_name("c_launcher.c")
_ENV = "TVM_CUDA_C_LAUNCHER"

_lock = threading.Lock()
_state: dict[str, Any] = {}  # "module": the extension or None, "why": the reason it is None


def _disabled() -> bool:
    return os.environ.get(_ENV, "1").strip().lower() in ("0", "false", "no", "off")


def _build_key(source: bytes, toolchain: Any) -> str:
    return cache_key("c-launcher", hashlib.sha256(source).hexdigest(),
                     sys.implementation.cache_tag, sysconfig.get_config_var("EXT_SUFFIX"),
                     sys.platform, toolchain.version)


def _build() -> Any:
    """Compile (or take from the cache) and import the extension; its Launcher type."""
    include = sysconfig.get_paths().get("include") or ""
    if not os.path.isfile(os.path.join(include, "Python.h")):
        raise OSError(f"this interpreter's headers are not installed (no Python.h in "
                      f"{include or 'its include folder'}; e.g. the python3-dev package)")
    source = _SOURCE.read_bytes()
    toolchain = get_toolchain()
    store = compile_cache(_CACHE)
    key = _build_key(source, toolchain)
    path = store.get_path(key)
    if path is None:
        flags = ["-O2", "-fPIC", "-shared", f"-I{include}"]
        if sys.platform == "darwin":
            flags += ["-undefined", "dynamic_lookup"]
        binary = toolchain.compile_shared(source.decode("utf-8"), flags,
                                          what="the CUDA backend's C launcher")
        path = store.put(key, binary, {"python": sys.implementation.cache_tag})
    loader = importlib.machinery.ExtensionFileLoader(_MODULE, str(path))
    spec = importlib.util.spec_from_file_location(_MODULE, str(path), loader=loader)
    if spec is None:
        raise ImportError(f"cannot make an import spec for {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def launcher_type() -> Any:
    """The extension's ``Launcher`` type, built once per process; None where it is unavailable
    (the reason: :func:`status`)."""
    module = _module()
    return None if module is None else module.Launcher


def _module() -> Any:
    try:
        return _state["module"]
    except KeyError:
        pass
    with _lock:
        if "module" not in _state:
            if _disabled():
                _state.update(module=None, why=f"off ({_ENV}=0)")
            else:
                try:
                    _state.update(module=_build(), why="")
                except Exception as err:  # any failure: the cuda.core launch stays
                    why = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
                    _state.update(module=None, why=why)
                    _LOG.info("the C launcher is unavailable, launching with cuda.core: %s",
                              why)
    return _state["module"]


def status() -> str:
    """One line: whether the C launcher is in use here, and if not, why."""
    kind = launcher_type()
    if kind is None:
        return f"not in use: {_state.get('why', '')}"
    tensors = _state.get("tensors")
    return "in use" + (f"; tensors read in Python: {tensors}" if tensors else "")


def cu_launch_kernel_address() -> int:
    """The address of ``cuLaunchKernel`` in the driver library this process loaded (looked up
    once)."""
    address = _state.get("cuLaunchKernel")
    if address is None:
        name = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
        lib = ctypes.CDLL(name)
        address = ctypes.cast(lib.cuLaunchKernel, ctypes.c_void_p).value
        if not address:
            raise OSError(f"{name} has no cuLaunchKernel")
        _state["cuLaunchKernel"] = address = int(address)
    return int(address)


def make_launcher(function: int, grid: tuple[int, int, int], block: tuple[int, int, int],
                  smem: int, nptrs: int, launch: int | None = None) -> Any:
    """A launcher of the kernel handle ``function`` (a ``CUfunction``, or a ``CUkernel``, which
    ``cuLaunchKernel`` takes for the current context) with these sizes: called with
    ``(stream, *pointers)`` (``nptrs`` of them) or, with ``nptrs=-1``, ``(stream, params)``, it
    returns the ``CUresult`` (0: launched). ``launch`` is the address of the function to call
    (default: the driver's ``cuLaunchKernel``; tests pass a recorder). None where the
    extension is unavailable."""
    kind = launcher_type()
    if kind is None:
        return None
    address = cu_launch_kernel_address() if launch is None else launch
    return kind(address, int(function), tuple(grid), tuple(block), int(smem), int(nptrs))


def make_tensor_launcher(function: int, grid: tuple[int, int, int], block: tuple[int, int, int],
                         smem: int, tensors: tuple[Any, ...], aligns: tuple[int, ...],
                         blocks: dict[Any, Any] | None = None, launch: int | None = None) -> Any:
    """A launcher of ``function`` that takes tensors like ``tensors`` (the tensors of a call that
    passed the executable's checks): same exact Python type, device, dtype, shape and strides,
    each address a multiple of its entry of ``aligns``. Called with the tensors it returns 0
    (launched on their type's current work stream, torch's current stream), -1 (not such
    tensors: the caller's general path answers) or the failed launch's ``CUresult``. With
    ``blocks`` (tensor-map kernels: ``{(p0, ...): (parameter array address, ...)}``, filled by
    the general path) it launches with the array cached under the pointers, and says -1 for a
    pointer set not there yet. None where the extension or the type's DLPack C exchange API
    (``__dlpack_c_exchange_api__``) is unavailable; :func:`status` then says so."""
    module = _module()
    if module is None:
        return None
    address = cu_launch_kernel_address() if launch is None else launch
    try:
        return module.TensorLauncher(address, int(function), tuple(grid), tuple(block),
                                     int(smem), tuple(tensors), tuple(aligns), blocks)
    except (ValueError, TypeError, RuntimeError, BufferError) as err:
        # no exchange API on this type, or a tensor it will not export: the Python reads stay
        why = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        if _state.get("tensors") != why:
            _state["tensors"] = why
            _LOG.info("the C launcher reads tensors in Python: %s", why)
        return None
