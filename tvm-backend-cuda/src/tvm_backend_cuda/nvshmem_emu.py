"""NVSHMEM under the CUDA emulator: one PE on the CPU.

With ``TVM_CUDA_EMULATE=1``, ``NvshmemContext.init()`` (one PE) returns an
:class:`EmulatedNvshmemContext`, so host code written for the GPU runs unchanged on CPU torch
tensors: ``zeros``/``empty`` allocate CPU tensors (the "symmetric heap" of a one-PE job is this
process's memory), ``compile`` builds CUDA source for the emulator against its ``nvshmem.h``
(``emu/nvshmem.h``: puts and gets with PE 0 are copies, signals atomic words, ``wait_until`` a
fiber wait), ``run`` and ``launch`` launch on the emulator, cooperatively with
``collective=True`` (every block together, within the emulated device's residency, as
:func:`~tvm_backend_cuda.emulator.check_resident` checks).

Not modelled: more than one PE (``world_size > 1`` raises
:class:`~tvm.error.NotModelledError`, and so does a device call naming another PE), and the
bootstrap (unique ids, torch.distributed).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from tvm.error import NotModelledError

from . import nvshmem as _nv
from .emulator import EmulatedKernel, EmulatedModule, load_source

__all__ = ["EmulatedNvshmemContext", "init"]


class EmulatedNvshmemContext(_nv.NvshmemContext):
    """An :class:`~tvm_backend_cuda.nvshmem.NvshmemContext` of one PE under the CUDA emulator
    (module doc). ``device`` is ``-1``; ``torch_device`` is ``"cpu"``."""

    def __init__(self) -> None:
        super().__init__(rank=0, world_size=1, device=-1, lib=None,  # type: ignore[arg-type]
                         version=(0, 0, 0))
        self._tensors: dict[int, Any] = {}  # data_ptr -> the allocation

    @property
    def torch_device(self) -> str:
        return "cpu"

    def __repr__(self) -> str:
        state = "finalized" if self._finalized else "active"
        return f"<NvshmemContext PE 0/1 on the CUDA emulator (CPU) {state}>"

    @property
    def _where(self) -> str:
        return "on the CUDA emulator"

    def finalize(self) -> None:
        if self._finalized:
            return
        self._tensors.clear()
        self._forget()

    def my_pe(self) -> int:
        return 0

    def n_pes(self) -> int:
        return 1

    def barrier_all(self, stream: Any = None) -> None:
        """Launches are synchronous and there is one PE: nothing to wait for."""
        self._check()

    # -- symmetric memory: CPU tensors ------------------------------------------------------------

    def malloc(self, nbytes: int) -> int:
        raise NotModelledError("the emulated NVSHMEM context allocates tensors, not raw "
                               "pointers: use zeros() or empty()")

    def empty(self, shape: int | Sequence[int], dtype: Any = "float32") -> Any:
        """A CPU torch tensor standing for a symmetric allocation (uninitialised)."""
        import torch

        self._check()
        shape_t = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        t = torch.empty(shape_t, dtype=_nv._torch_dtype(dtype))
        self._tensors[int(t.data_ptr())] = t
        return t

    def free(self, tensor_or_ptr: Any) -> None:
        del self._tensors[self._allocation(tensor_or_ptr, self._tensors)]

    def peer_pointer(self, tensor_or_ptr: Any, pe: int) -> int | None:
        return _nv._address(tensor_or_ptr) if pe == 0 else None

    # -- modules and launches ----------------------------------------------------------------------

    def bind_library(self, kernel_handle: Any) -> None:
        """Nothing to bind: the emulator's NVSHMEM has no device state."""

    def load(self, cubin: Any, kernels: Sequence[str] | Mapping[str, Any], *,
             arch: str | None = None) -> Any:
        raise NotModelledError("the CUDA emulator runs CUDA source, not cubins: use "
                               "NvshmemContext.compile(source, kernels)")

    def compile(  # type: ignore[override]  # returns the emulator's module, not a cubin's
            self, source: str, kernels: Sequence[str] | Mapping[str, Any], *,
            arch: str | None = None, options: Sequence[str] = ()) -> EmulatedModule:
        """Build CUDA ``source`` for the emulator; ``kernels`` as
        :func:`~tvm_backend_cuda.emulator.load_source` takes them: each kernel's parameter types
        (``"ptr"`` or a scalar dtype, or ``(name, type)`` pairs), or its name alone (its
        parameters read from the source)."""
        self._check()
        return load_source(source, kernels)

    def launch(self, kernel: Any, grid: int | Sequence[int], block: int | Sequence[int],
               args: Sequence[Any], *, collective: bool = False, shmem: int = 0,
               stream: Any = None) -> None:
        """Launch an emulated kernel (an :class:`~tvm_backend_cuda.emulator.EmulatedKernel`,
        or ``(module, name)``); ``collective=True`` runs its blocks together."""
        self._check()
        if isinstance(kernel, tuple):
            module, name = kernel
            kernel = module.get_kernel(name)
        if not isinstance(kernel, EmulatedKernel):
            raise TypeError(
                f"kernel {kernel.name} belongs to a plain CudaModule, which runs on a GPU; under "
                "the CUDA emulator, build NVSHMEM kernels with NvshmemContext.compile() or "
                "tvm.compile(..., emulate=True)")
        kernel.launch(grid, block, args, shmem=shmem, stream=stream, cooperative=collective)


def init(rank: int = 0, world_size: int = 1, **_: Any) -> EmulatedNvshmemContext:
    """The process's emulated context (``NvshmemContext.init`` under ``TVM_CUDA_EMULATE=1``):
    made on first use, the same one after; only one PE."""
    with _nv._CURRENT_LOCK:
        cur = _nv._CURRENT
        if cur is not None:
            if not isinstance(cur, EmulatedNvshmemContext) or (rank, world_size) != (0, 1):
                raise cur._already_initialised()
            return cur
        if world_size != 1 or rank != 0:
            raise NotModelledError(
                f"PE {rank} of {world_size}: the CUDA emulator runs NVSHMEM with one PE; "
                "several PEs need one GPU each")
        os.environ.update(_nv.SAFETY_ENV)  # as on the GPU (nothing here reads them)
        ctx = _nv._CURRENT = EmulatedNvshmemContext()
        return ctx
