"""The host library of NVSHMEM (``libnvshmem_host.so``) through ctypes: its functions' signatures,
the init attributes of the unique-id bootstrap, and :func:`get_unique_id`. Loaded once, on first
use, from the wheel :func:`~.nvshmem_link.find_nvshmem` finds. Also the device side a context
needs on the host: making its device's primary context current, its arch, stream handles and
driver result checks."""

from __future__ import annotations

import ctypes
import functools
import sys
from pathlib import Path
from typing import Any

from . import runtime as rt
from . import streams as _streams
from .nvshmem_link import find_nvshmem

_UID_SIZE = 128  # sizeof(nvshmemx_uniqueid_t), a static_assert in nvshmem_uniqueid.h
_INIT_WITH_UNIQUEID = 1 << 3  # NVSHMEMX_INIT_WITH_UNIQUEID


class _UniqueId(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("internal", ctypes.c_char * 124)]


class _UniqueIdArgs(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("id", ctypes.POINTER(_UniqueId)),
                ("myrank", ctypes.c_int), ("nranks", ctypes.c_int)]


class _InitArgs(ctypes.Structure):  # nvshmemx_init_args_v1 (v2 puts cuda_device_id in content)
    _fields_ = [("version", ctypes.c_int), ("uid_args", _UniqueIdArgs),
                ("content", ctypes.c_char * 96)]


class _InitAttr(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("mpi_comm", ctypes.c_void_p), ("args", _InitArgs)]


assert ctypes.sizeof(_UniqueId) == _UID_SIZE
assert ctypes.sizeof(_UniqueIdArgs) == 24 and ctypes.sizeof(_InitArgs) == 128
assert ctypes.sizeof(_InitAttr) == 144


def _init_attr() -> _InitAttr:
    # nvshmemx_init_init_attr_ver_only(): the v1 identifiers, which every NVSHMEM 3.x accepts.
    attr = _InitAttr()
    attr.version = (1 << 16) + ctypes.sizeof(_InitAttr)
    attr.args.version = (1 << 16) + ctypes.sizeof(_InitArgs)
    attr.args.uid_args.version = (1 << 16) + ctypes.sizeof(_UniqueIdArgs)
    attr.args.uid_args.myrank = -1
    attr.args.uid_args.nranks = -1
    return attr


_c = ctypes
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "nvshmemx_get_uniqueid": (_c.c_int, [_c.POINTER(_UniqueId)]),
    "nvshmemx_set_attr_uniqueid_args": (
        _c.c_int, [_c.c_int, _c.c_int, _c.POINTER(_UniqueId), _c.POINTER(_InitAttr)]),
    "nvshmemx_hostlib_init_attr": (_c.c_int, [_c.c_uint, _c.POINTER(_InitAttr)]),
    "nvshmemx_hostlib_finalize": (None, []),
    "nvshmemx_init_status": (_c.c_int, []),
    "nvshmem_my_pe": (_c.c_int, []),
    "nvshmem_n_pes": (_c.c_int, []),
    "nvshmem_malloc": (_c.c_void_p, [_c.c_size_t]),
    "nvshmem_free": (None, [_c.c_void_p]),
    "nvshmem_ptr": (_c.c_void_p, [_c.c_void_p, _c.c_int]),
    "nvshmem_barrier_all": (None, []),
    "nvshmemx_barrier_all_on_stream": (None, [_c.c_void_p]),
    "nvshmemx_cumodule_init": (_c.c_int, [_c.c_void_p]),
    "nvshmemx_cumodule_finalize": (_c.c_int, [_c.c_void_p]),
    "nvshmemx_culibrary_init": (_c.c_int, [_c.c_void_p]),
    "nvshmemx_culibrary_finalize": (_c.c_int, [_c.c_void_p]),
    "nvshmemx_vendor_get_version_info": (None, [_c.POINTER(_c.c_int)] * 3),
}


class _HostLib:
    """libnvshmem_host.so through ctypes; functions the library lacks are None."""

    def __init__(self, path: Path) -> None:
        # RTLD_GLOBAL: the bootstrap and transport plugins it dlopens (found through its RPATH,
        # $ORIGIN) resolve symbols against it.
        self.path = path
        self.dll = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        for name, (res, argtypes) in _SIGNATURES.items():
            fn = getattr(self.dll, name, None)
            if fn is not None:
                fn.restype = res
                fn.argtypes = argtypes
            setattr(self, name, fn)

    def __getattr__(self, name: str) -> Any:  # for the type checker: the functions set above
        raise AttributeError(f"libnvshmem_host has no function {name}")

    def version(self) -> tuple[int, int, int]:
        major, minor, patch = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        self.nvshmemx_vendor_get_version_info(  # type: ignore[attr-defined]
            ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
        return major.value, minor.value, patch.value


@functools.lru_cache(maxsize=1)
def _host_lib() -> _HostLib:
    return _HostLib(find_nvshmem().host_library)


def get_unique_id() -> bytes:
    """A fresh 128-byte NVSHMEM unique id. Call on PE 0 only, in the process that becomes PE 0
    (the id names a socket that process listens on), then hand the bytes to the other PEs."""
    lib = _host_lib()
    uid = _UniqueId()
    uid.version = (1 << 16) + _UID_SIZE  # NVSHMEMX_UNIQUEID_INITIALIZER
    rc = lib.nvshmemx_get_uniqueid(ctypes.byref(uid))  # type: ignore[attr-defined]
    if rc != 0:
        raise RuntimeError(f"nvshmemx_get_uniqueid failed with status {rc}")
    return ctypes.string_at(ctypes.addressof(uid), _UID_SIZE)


# -- the device of a context: its primary context, arch, streams ---------------------------------


def _device_count() -> int:
    return rt._probe()[0]


def _set_device(device: int) -> None:
    """Make ``device``'s primary context current (NVSHMEM, torch and cuda.core share it)."""
    from cuda.core import Device

    dev = Device(device)
    dev.set_current()
    rt._TLS.device = device
    if "torch" in sys.modules:
        import torch

        if torch.cuda.is_available():
            torch.cuda.set_device(device)


def _synchronize(device: int) -> None:
    from cuda.core import Device

    Device(device).sync()


def _device_arch(device: int) -> str:
    from cuda.core import Device

    major, minor = Device(device).compute_capability
    num = major * 10 + minor
    return f"sm_{num}a" if num >= 90 else f"sm_{num}"


def _stream_handle(stream: Any) -> int:
    return int(_streams._explicit_stream(stream).handle)


def _check_cu(err: Any, what: str) -> None:
    from cuda.bindings import driver

    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed: {err.name}")
