"""NVSHMEM for the CUDA backend: link kernels against NVSHMEM's device library, and run them.

Everything comes from PyPI wheels; no CUDA toolkit and no NVSHMEM install are needed:

- ``nvidia-nvshmem-cu13``: the headers (``nvidia/nvshmem/include``), the device library
  (``lib/libnvshmem_device.a``: host objects that embed relocatable device code) and the host
  library (``lib/libnvshmem_host.so.3`` with its bootstrap plugins beside it);
- ``nvidia-cuda-cccl`` (a dependency of that wheel): ``cuda/std/*``, which NVSHMEM's device
  headers include;
- ``nvidia-nvjitlink``: the device linker, through ``cuda.bindings.nvjitlink``.

**Compiling** (``nvshmem_link.py``; its public names are importable from here too). A kernel that calls ``nvshmem_*`` device functions is compiled by NVRTC with
relocatable device code (``-rdc=true``; the relocatable cubin is cached by
:func:`~tvm_backend_cuda.compiler.compile_cuda`) and then linked with nvJitLink against
``libnvshmem_device.a`` into an ordinary cubin. Neither step needs a driver, so CI checks both. A
kernel that calls no NVSHMEM function takes the normal path (:func:`compile_auto` chooses).

**Running** (this module; the ctypes bindings of the host library are ``nvshmem_host.py``).
NVSHMEM is process-global: one process per GPU, one :class:`NvshmemContext` per
process. We bootstrap with NVSHMEM's unique-id (UID) plugin, so neither MPI nor PMI is needed: PE 0
makes a 128-byte id (:func:`get_unique_id`), the others receive it through ``torch.distributed``
(:meth:`NvshmemContext.from_torch_distributed`), a file (:meth:`NvshmemContext.from_file`) or any
channel of yours (``NvshmemContext.init(rank, world_size, unique_id=...)``). A single process needs
nothing: ``NvshmemContext.init()``. The host library is initialised with
``nvshmemx_hostlib_init_attr`` (what NVSHMEM's own Python bindings use) and every module we load is
bound to it with ``nvshmemx_culibrary_init`` (``nvshmemx_cumodule_init`` on older NVSHMEM), which
sets the module's copy of NVSHMEM's device state; launching before that would read a null state.

Kernels that synchronise across PEs on the device (``nvshmem_barrier_all``, ``wait_until``, ...)
must have all their blocks resident at once on every PE, or a PE can wait forever for a block that
never runs: :meth:`NvshmemContext.launch` with ``collective=True`` launches cooperatively, after
checking that the grid fits, which is what ``nvshmemx_collective_launch`` does for runtime-API
kernels.

**NVLink multicast stays off.** Before NVSHMEM initialises we set ``NVSHMEM_DISABLE_NVLS=1`` and
``NCCL_NVLS_ENABLE=0`` (and ``TORCH_SYMM_MEM_DISABLE_MULTICAST=1``), overriding the caller: on the
shared multi-GPU hosts we run on, a program using multicast objects can take the host's GPUs out of
service. Nothing here calls ``cuMulticastCreate``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import runtime as rt
from . import streams as _streams
from .nvshmem_host import (
    _INIT_WITH_UNIQUEID,
    _UID_SIZE,
    _check_cu,
    _device_arch,
    _device_count,
    _HostLib,
    _init_attr,
    _set_device,
    _stream_handle,
    _synchronize,
    _UniqueId,
)
from .nvshmem_host import _host_lib as _host_lib
from .nvshmem_host import get_unique_id as get_unique_id
from .nvshmem_link import _PUT_SIGNAL_SHIM as _PUT_SIGNAL_SHIM
from .nvshmem_link import PIP_HINT as PIP_HINT
from .nvshmem_link import NvshmemInstall as NvshmemInstall
from .nvshmem_link import _find as _find
from .nvshmem_link import _with_put_signal_shim as _with_put_signal_shim
from .nvshmem_link import compile_and_link_nvshmem as compile_and_link_nvshmem
from .nvshmem_link import compile_auto as compile_auto
from .nvshmem_link import compile_nvshmem as compile_nvshmem
from .nvshmem_link import find_nvshmem as find_nvshmem
from .nvshmem_link import is_available as is_available
from .nvshmem_link import link_nvshmem as link_nvshmem
from .nvshmem_link import nvjitlink_version as nvjitlink_version
from .nvshmem_link import nvshmem_compile_options as nvshmem_compile_options
from .nvshmem_link import toolchain_key as toolchain_key
from .nvshmem_link import unavailable_reason as unavailable_reason
from .nvshmem_link import uses_nvshmem as uses_nvshmem
from .runtime import CudaModule

__all__ = [
    "NvshmemContext",
    "NvshmemInstall",
    "NvshmemModule",
    "compile_and_link_nvshmem",
    "compile_auto",
    "compile_nvshmem",
    "current_context",
    "find_nvshmem",
    "get_unique_id",
    "is_available",
    "link_nvshmem",
    "nvshmem_compile_options",
    "unavailable_reason",
    "uses_nvshmem",
]


# Environment that every NVSHMEM process of ours gets before initialisation (see module doc).
SAFETY_ENV = {
    "NVSHMEM_DISABLE_NVLS": "1",
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
}


# -- symmetric tensors -----------------------------------------------------------------------------


class _DeviceBytes:
    """``nbytes`` of device memory at ``ptr`` seen through ``__cuda_array_interface__`` (uint8),
    so torch can wrap it without a copy; torch keeps this object alive with the tensor."""

    def __init__(self, ptr: int, nbytes: int, context: NvshmemContext) -> None:
        self.ptr = ptr
        self.nbytes = nbytes
        self.context = context  # the heap must outlive every tensor on it
        self.__cuda_array_interface__ = {
            "shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
            "strides": None, "stream": None,
        }


# -- the context -----------------------------------------------------------------------------------

_CURRENT: NvshmemContext | None = None
_CURRENT_LOCK = threading.Lock()


def current_context() -> NvshmemContext | None:
    """The initialised NVSHMEM context of this process, or None."""
    return _CURRENT


class NvshmemContext:
    """NVSHMEM in this process: one PE on one GPU. Make it with :meth:`init` (or
    :meth:`from_torch_distributed`, :meth:`from_file`); it is process-global until
    :meth:`finalize`, which every PE must call (NVSHMEM's finalize is collective).

    ``zeros``/``empty`` allocate on the symmetric heap (collective: every PE must make the same
    allocations in the same order); ``load``/``compile`` give modules bound to NVSHMEM;
    ``launch(kernel, grid, block, args, collective=True)`` launches cooperatively, and
    ``run(ex, *args, collective=True)`` does that for a ``tvm.compile``d executable.
    """

    def __init__(self, *, rank: int, world_size: int, device: int, lib: _HostLib,
                 version: tuple[int, int, int]) -> None:
        self.rank = rank
        self.world_size = world_size
        self.device = device
        self._lib = lib
        self.version = version
        self._allocs: dict[int, int] = {}  # ptr -> nbytes
        self._bound: set[int] = set()  # CUlibrary / CUmodule handles given to NVSHMEM
        self._finalized = False

    # -- construction ----------------------------------------------------------------------------

    @classmethod
    def init(
        cls,
        rank: int = 0,
        world_size: int = 1,
        *,
        device: int | None = None,
        unique_id: bytes | None = None,
        symmetric_size: int | str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> NvshmemContext:
        """Initialise NVSHMEM as PE ``rank`` of ``world_size`` on GPU ``device``.

        ``device`` defaults to ``rank % (visible GPUs)``. ``unique_id`` is PE 0's
        :func:`get_unique_id`; with one PE it is made here. ``symmetric_size`` (bytes, or NVSHMEM's
        ``"1G"`` form) sets ``NVSHMEM_SYMMETRIC_SIZE`` unless the environment already does.
        ``env`` adds NVSHMEM_* settings; the multicast switches (module doc) always win.

        Under the CUDA emulator (``TVM_CUDA_EMULATE=1``) this is the emulator's one-PE context
        (:mod:`~tvm_backend_cuda.nvshmem_emu`), on CPU tensors.
        """
        global _CURRENT
        from .executable import CudaOptions, emulating  # noqa: PLC0415 - it imports this module

        if emulating(CudaOptions()):
            from . import nvshmem_emu  # noqa: PLC0415 - it subclasses NvshmemContext

            return nvshmem_emu.init(rank, world_size)
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in range for world_size {world_size}")
        with _CURRENT_LOCK:
            if _CURRENT is not None:
                cur = _CURRENT
                if (cur.rank, cur.world_size) != (rank, world_size) or (
                        device is not None and device != cur.device):
                    raise cur._already_initialised()
                return cur
            n_dev = _device_count()
            if device is None:
                device = rank % max(n_dev, 1)
            rt._require_device(device)
            _prepare_env(env, symmetric_size, single_host=True)
            lib = _host_lib()
            if unique_id is None:
                if world_size != 1:
                    raise ValueError(
                        f"PE {rank} of {world_size} needs PE 0's unique_id; use "
                        "NvshmemContext.from_torch_distributed() or from_file(), or pass "
                        "unique_id=get_unique_id() made on PE 0")
            _set_device(device)
            if unique_id is None:
                unique_id = get_unique_id()
            if len(unique_id) != _UID_SIZE:
                raise ValueError(f"unique_id must be {_UID_SIZE} bytes, got {len(unique_id)}")
            uid = _UniqueId.from_buffer_copy(unique_id)
            attr = _init_attr()
            rc = lib.nvshmemx_set_attr_uniqueid_args(  # type: ignore[attr-defined]
                rank, world_size, ctypes.byref(uid), ctypes.byref(attr))
            if rc != 0:
                raise RuntimeError(f"nvshmemx_set_attr_uniqueid_args failed with status {rc}")
            rc = lib.nvshmemx_hostlib_init_attr(  # type: ignore[attr-defined]
                _INIT_WITH_UNIQUEID, ctypes.byref(attr))
            if rc != 0:
                raise RuntimeError(
                    f"NVSHMEM initialisation failed on PE {rank} of {world_size} (status {rc}); "
                    "set NVSHMEM_DEBUG=INFO for NVSHMEM's own log")
            ctx = cls(rank=rank, world_size=world_size, device=device, lib=lib,
                      version=lib.version())
            mine, n = ctx.my_pe(), ctx.n_pes()
            if (mine, n) != (rank, world_size):
                raise RuntimeError(f"NVSHMEM says PE {mine} of {n}; asked for {rank} of "
                                   f"{world_size}")
            _CURRENT = ctx
            return ctx

    @classmethod
    def from_torch_distributed(cls, group: Any = None, *, device: int | None = None,
                               **kwargs: Any) -> NvshmemContext:
        """One PE per torch.distributed rank (already initialised); the id goes by broadcast."""
        import torch.distributed as dist

        rank, world = dist.get_rank(group), dist.get_world_size(group)
        if device is None:
            device = int(os.environ.get("LOCAL_RANK", rank % max(_device_count(), 1)))
        _set_device(device)
        box = [get_unique_id() if rank == 0 else None]
        dist.broadcast_object_list(box, src=dist.get_global_rank(group, 0) if group else 0,
                                   group=group)
        return cls.init(rank, world, device=device, unique_id=box[0], **kwargs)

    @classmethod
    def from_file(cls, path: str | os.PathLike, rank: int, world_size: int, *,
                  timeout: float = 120.0, device: int | None = None,
                  **kwargs: Any) -> NvshmemContext:
        """PE 0 writes its unique id to ``path`` (atomically); the others wait for it there.

        Use a fresh path per job: a file left by an earlier job would hand out a dead id.
        """
        p = Path(path)
        if rank == 0:
            if device is not None:
                _set_device(device)
            uid = get_unique_id()
            fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.")
            with os.fdopen(fd, "wb") as f:
                f.write(uid)
            os.replace(tmp, p)
        else:
            deadline = time.monotonic() + timeout
            while True:
                with contextlib.suppress(OSError):
                    data = p.read_bytes()
                    if len(data) == _UID_SIZE:
                        uid = data
                        break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"PE {rank}: no NVSHMEM unique id in {p} after {timeout} s")
                time.sleep(0.05)
        return cls.init(rank, world_size, device=device, unique_id=uid, **kwargs)

    def finalize(self) -> None:
        """Free what is left on the symmetric heap and shut NVSHMEM down (collective)."""
        if self._finalized:
            return
        _set_device(self.device)
        _synchronize(self.device)
        for ptr in list(self._allocs):
            self._free_ptr(ptr)
        for h in list(self._bound):
            fin = self._lib.nvshmemx_culibrary_finalize or self._lib.nvshmemx_cumodule_finalize
            if fin is not None:
                fin(h)
        self._bound.clear()
        self._lib.nvshmemx_hostlib_finalize()  # type: ignore[attr-defined]
        self._forget()

    def _forget(self) -> None:
        """Mark this context finalized; it is no longer the process's context."""
        global _CURRENT
        self._finalized = True
        with _CURRENT_LOCK:
            if _CURRENT is self:
                _CURRENT = None

    def _already_initialised(self) -> RuntimeError:
        """The error of an ``init`` that asks for another PE than this, the current one."""
        return RuntimeError(
            f"NVSHMEM is already initialised in this process as PE {self.rank} of "
            f"{self.world_size} {self._where}; finalize() it first")

    @property
    def _where(self) -> str:
        return f"on cuda:{self.device}"

    def __enter__(self) -> NvshmemContext:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.finalize()

    def __repr__(self) -> str:
        state = "finalized" if self._finalized else "active"
        return (f"<NvshmemContext PE {self.rank}/{self.world_size} cuda:{self.device} "
                f"NVSHMEM {'.'.join(map(str, self.version))} {state}>")

    # -- queries ---------------------------------------------------------------------------------

    @property
    def torch_device(self) -> str:
        """Where this PE's tensors live, as torch names it (``cuda:N``)."""
        return f"cuda:{self.device}"

    def _check(self) -> None:
        if self._finalized:
            raise RuntimeError("this NvshmemContext was finalized")

    def my_pe(self) -> int:
        return int(self._lib.nvshmem_my_pe())  # type: ignore[attr-defined]

    def n_pes(self) -> int:
        return int(self._lib.nvshmem_n_pes())  # type: ignore[attr-defined]

    def barrier_all(self, stream: Any = None) -> None:
        """Barrier across PEs after all GPU work of this PE: on ``stream`` when given (enqueued),
        else the device is synchronised and the host waits for every PE."""
        self._check()
        if stream is not None:
            self._lib.nvshmemx_barrier_all_on_stream(_stream_handle(stream))  # type: ignore[attr-defined]
            return
        _synchronize(self.device)
        self._lib.nvshmem_barrier_all()  # type: ignore[attr-defined]

    # -- symmetric memory --------------------------------------------------------------------------

    def malloc(self, nbytes: int) -> int:
        """``nvshmem_malloc`` (collective): a device pointer valid on every PE at the same offset."""
        self._check()
        if nbytes <= 0:
            raise ValueError(f"nbytes must be positive, got {nbytes}")
        ptr = self._lib.nvshmem_malloc(nbytes)  # type: ignore[attr-defined]
        if not ptr:
            raise MemoryError(
                f"nvshmem_malloc({nbytes}) failed: the symmetric heap is full (raise "
                "NVSHMEM_SYMMETRIC_SIZE or pass symmetric_size= to NvshmemContext.init)")
        self._allocs[int(ptr)] = nbytes
        return int(ptr)

    def empty(self, shape: int | Sequence[int], dtype: Any = "float32") -> Any:
        """A torch tensor on the symmetric heap (uninitialised). Collective."""
        import torch

        tdtype = _torch_dtype(dtype)
        shape_t = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        numel = 1
        for s in shape_t:
            numel *= s
        nbytes = max(numel * torch.empty((), dtype=tdtype).element_size(), 1)
        ptr = self.malloc(nbytes)
        raw = torch.as_tensor(_DeviceBytes(ptr, nbytes, self), device=f"cuda:{self.device}")
        return raw.view(tdtype)[:numel].view(shape_t)

    def zeros(self, shape: int | Sequence[int], dtype: Any = "float32") -> Any:
        """A zero-filled torch tensor on the symmetric heap. Collective."""
        t = self.empty(shape, dtype)
        t.zero_()
        return t

    def free(self, tensor_or_ptr: Any) -> None:
        """``nvshmem_free`` (collective). The tensor must not be used afterwards."""
        ptr = self._allocation(tensor_or_ptr, self._allocs)
        _synchronize(self.device)
        self._free_ptr(ptr)

    def _allocation(self, tensor_or_ptr: Any, allocations: Mapping[int, Any]) -> int:
        """The address of ``tensor_or_ptr``, which must start one of ``allocations``."""
        self._check()
        ptr = _address(tensor_or_ptr)
        if ptr not in allocations:
            raise ValueError(f"0x{ptr:x} is not the start of a symmetric allocation of this PE")
        return ptr

    def _free_ptr(self, ptr: int) -> None:
        self._lib.nvshmem_free(ptr)  # type: ignore[attr-defined]
        self._allocs.pop(ptr, None)

    def peer_pointer(self, tensor_or_ptr: Any, pe: int) -> int | None:
        """``nvshmem_ptr``: the address of PE ``pe``'s copy as this PE can load/store it, or None
        when that PE is not reachable by plain loads and stores (other node)."""
        out = self._lib.nvshmem_ptr(_address(tensor_or_ptr), pe)  # type: ignore[attr-defined]
        return int(out) if out else None

    # -- modules and launches ----------------------------------------------------------------------

    def bind_library(self, kernel_handle: Any) -> None:
        """Bind the library holding ``kernel_handle`` (a cuda.core Kernel's handle) to NVSHMEM:
        sets its device state. Idempotent; done by :class:`NvshmemModule` on load."""
        self._check()
        from cuda.bindings import driver

        if isinstance(kernel_handle, driver.CUkernel):
            err, library = driver.cuKernelGetLibrary(kernel_handle)
            _check_cu(err, "cuKernelGetLibrary")
            if self._lib.nvshmemx_culibrary_init is not None:
                key = int(library)
                if key not in self._bound:
                    _check_nvshmem(self._lib.nvshmemx_culibrary_init(key), "nvshmemx_culibrary_init")
                    self._bound.add(key)
                return
            err, module = driver.cuLibraryGetModule(library)
            _check_cu(err, "cuLibraryGetModule")
        else:  # a CUfunction of a CUmodule
            err, module = driver.cuFuncGetModule(kernel_handle)
            _check_cu(err, "cuFuncGetModule")
        key = int(module)
        if key not in self._bound:
            _check_nvshmem(self._lib.nvshmemx_cumodule_init(key), "nvshmemx_cumodule_init")  # type: ignore[attr-defined]
            self._bound.add(key)

    def load(self, cubin: Any, kernels: Sequence[str] | Mapping[str, Any], *,
             arch: str | None = None) -> NvshmemModule:
        """A module of a linked cubin (``compile_nvshmem(...)`` or its ``.cubin``) on this PE's GPU."""
        return NvshmemModule(cubin, kernels, device=self.device, arch=arch, context=self)

    def compile(self, source: str, kernels: Sequence[str] | Mapping[str, Any], *,
                arch: str | None = None, options: Sequence[str] = ()) -> NvshmemModule:
        """Compile, link and load CUDA source for this PE's GPU (``arch`` defaults to it)."""
        arch = arch or _device_arch(self.device)
        return self.load(compile_nvshmem(source, arch, options=options), kernels, arch=arch)

    def run(self, executable: Any, *args: Any, collective: bool = False, function: str | None = None,
            stream: Any = None) -> None:
        """Call a ``tvm.compile``d function whose kernels use NVSHMEM, as ``executable(*args)``
        does (the same argument checks and launch sizes), launching each kernel through
        :meth:`launch`: ``collective=True`` launches cooperatively, which kernels that wait on
        other PEs need. ``function`` picks another function of the executable than its entry."""
        self._check()
        func = executable.get_function(function or executable.entry_name)
        for kernel, grid, block, smem, kargs in func.launch_plan(args):
            self.launch(kernel, grid, block, kargs, collective=collective, shmem=smem,
                        stream=stream)

    def launch(
        self,
        kernel: Any,
        grid: int | Sequence[int],
        block: int | Sequence[int],
        args: Sequence[Any],
        *,
        collective: bool = False,
        shmem: int = 0,
        stream: Any = None,
    ) -> None:
        """Launch a kernel of an :class:`NvshmemModule` (a CudaKernel, or ``(module, name)``).

        ``collective=True`` is needed when the kernel synchronises across PEs on the device: it
        launches cooperatively (every block resident at once) after checking that the grid fits,
        and must be done by every PE. The stream is as for ``CudaModule.launch``.
        """
        self._check()
        if isinstance(kernel, tuple):
            module, name = kernel
            kernel = module.get_kernel(name)
        if not isinstance(kernel.module, NvshmemModule):
            raise TypeError(
                f"kernel {kernel.name} belongs to a plain CudaModule; load NVSHMEM kernels with "
                "NvshmemContext.load()/compile() (or NvshmemModule) so NVSHMEM is bound to them")
        if not collective:
            kernel.launch(grid, block, args, shmem=shmem, stream=stream)
            return
        _collective_launch(self, kernel, grid, block, args, shmem, stream)


def _collective_launch(ctx: NvshmemContext, kernel: Any, grid: Any, block: Any,
                       args: Sequence[Any], shmem: int, stream: Any) -> None:
    from cuda.core import LaunchConfig, launch

    values, device, kind = kernel._marshal(args)
    if device < 0:
        device = kernel.module.device_id
    loaded = kernel._loaded.get(device) or kernel._load(device)
    rt._make_current(device, loaded.device)
    if shmem > loaded.smem_limit:
        kernel._raise_smem_limit(loaded, shmem)
    g, b = rt._dim3(grid, "grid"), rt._dim3(block, "block")
    nblocks, nthreads = g[0] * g[1] * g[2], b[0] * b[1] * b[2]
    per_sm = loaded.kernel.occupancy.max_active_blocks_per_multiprocessor(nthreads, shmem)
    sms = loaded.device.properties.multiprocessor_count
    if nblocks > per_sm * sms:
        raise ValueError(
            f"collective launch of {kernel.name}: {nblocks} blocks of {nthreads} threads cannot all "
            f"be resident ({per_sm} per SM x {sms} SMs = {per_sm * sms}); a cross-PE barrier in "
            "the kernel would deadlock. Use fewer blocks")
    config = LaunchConfig(grid=g, block=b, shmem_size=shmem, is_cooperative=True)
    launch(_streams.launch_stream(device, stream), config, loaded.kernel, *values)


class NvshmemModule(CudaModule):
    """A :class:`~tvm_backend_cuda.runtime.CudaModule` whose library is bound to NVSHMEM when it is
    loaded on a device, before its first launch. Same constructor, plus ``context`` (default:
    :func:`current_context` at load time)."""

    def __init__(self, cubin: Any, kernels: Any, *, device: int = 0, arch: str | None = None,
                 context: NvshmemContext | None = None) -> None:
        super().__init__(cubin, kernels, device=device, arch=arch)
        self._context = context

    def _load(self, dev_id: int) -> dict[str, Any]:
        fresh = dev_id not in self._modules
        mod = super()._load(dev_id)
        if fresh and mod:
            ctx = self._context or current_context()
            if ctx is None or ctx._finalized:
                self._modules.pop(dev_id, None)
                raise RuntimeError(
                    "this module uses NVSHMEM: initialise it first in this process "
                    "(NvshmemContext.init(), from_torch_distributed() or from_file())")
            ctx.bind_library(next(iter(mod.values())).handle)
        return mod


# -- helpers ---------------------------------------------------------------------------------------


def _prepare_env(env: Mapping[str, str] | None, symmetric_size: int | str | None,
                 *, single_host: bool) -> None:
    for k, v in (env or {}).items():
        os.environ[k] = str(v)
    if symmetric_size is not None:
        os.environ.setdefault("NVSHMEM_SYMMETRIC_SIZE", str(symmetric_size))
    if single_host:
        # One host, GPUs over NVLink/PCIe: no InfiniBand transport to probe (and warn about).
        os.environ.setdefault("NVSHMEM_REMOTE_TRANSPORT", "none")
    os.environ.update(SAFETY_ENV)


def _address(tensor_or_ptr: Any) -> int:
    """A pointer as it is, or the address of a tensor's data."""
    return tensor_or_ptr if isinstance(tensor_or_ptr, int) else int(tensor_or_ptr.data_ptr())












def _torch_dtype(dtype: Any) -> Any:
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    t = getattr(torch, str(dtype), None)
    if not isinstance(t, torch.dtype):
        raise TypeError(f"unknown dtype {dtype!r}")
    return t




def _check_nvshmem(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed with status {rc} (is NVSHMEM initialised?)")
