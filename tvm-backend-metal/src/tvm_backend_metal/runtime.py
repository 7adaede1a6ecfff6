"""Run MSL compute kernels on an Apple GPU through pyobjc-framework-Metal (macOS only).

Install with ``pip install 'tvm-backend-metal[runtime]'`` on a Mac. Metal is imported lazily,
inside the functions that need it, so importing this module is cheap everywhere; off macOS (or
without pyobjc) every entry point raises :class:`MetalRuntimeUnavailable` with the reason.

Usage::

    from tvm_backend_metal.runtime import run
    run(src, "vadd", grid=16, threadgroup=64, buffers=[a, b, c, np.uint32(n)])

`grid` counts threadgroups (``dispatchThreadgroups:threadsPerThreadgroup:``), as in
:func:`tvm_backend_metal.emulator.run_msl`, so the same call runs on either.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

from tvm.error import CompileError, DeviceUnavailableError

__all__ = [
    "MetalKernel",
    "MetalRuntimeUnavailable",
    "compile",
    "is_available",
    "run",
    "unavailable_reason",
]

_INSTALL_HINT = (
    "Metal runtime needs macOS with pyobjc-framework-Metal (the 'runtime' extra of "
    "tvm-backend-metal); install it on a Mac with 'pip install pyobjc-framework-Metal'. "
    "Elsewhere, check kernels with "
    "tvm_backend_metal.msl_check.check_msl or run them on the CPU with "
    "tvm_backend_metal.emulator.run_msl"
)


class MetalRuntimeUnavailable(DeviceUnavailableError):
    """No Metal runtime here (not macOS, no pyobjc-framework-Metal, or no Metal GPU); the
    message says which, and what works instead (the emulator, the syntax check). Also
    ``tvm_backend_metal.MetalRuntimeUnavailable``; catch :class:`tvm.error.DeviceUnavailableError`
    for any backend."""


def unavailable_reason() -> str | None:
    """None when the Metal runtime can be used here; otherwise why not (and how to fix it)."""
    if sys.platform != "darwin":
        return f"{_INSTALL_HINT} (this is {sys.platform})"
    if importlib.util.find_spec("Metal") is None:
        return f"{_INSTALL_HINT} (pyobjc-framework-Metal is not installed)"
    if _device() is None:
        return "Metal runtime: MTLCreateSystemDefaultDevice() found no Metal GPU"
    return None


def is_available() -> bool:
    return unavailable_reason() is None


def _require() -> Any:
    reason = unavailable_reason()
    if reason is not None:
        raise MetalRuntimeUnavailable(reason)
    import Metal

    return Metal


@functools.lru_cache(maxsize=1)
def _device() -> Any:
    import Metal

    return Metal.MTLCreateSystemDefaultDevice()


@functools.lru_cache(maxsize=1)
def _queue() -> Any:
    return _device().newCommandQueue()


def _dim3(value: int | Sequence[int], what: str) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, int) else tuple(int(v) for v in value)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must be an int or 1 to 3 ints, got {value!r}")
    return (*dims, *(1,) * (3 - len(dims)))  # type: ignore[return-value]


@dataclasses.dataclass
class MetalKernel:
    """A compute pipeline for one kernel of an MSL library."""

    name: str
    source: str
    pipeline: Any

    @property
    def max_threads_per_threadgroup(self) -> int:
        return int(self.pipeline.maxTotalThreadsPerThreadgroup())

    def __call__(
        self, grid: int | Sequence[int], threadgroup: int | Sequence[int], buffers: Sequence[Any]
    ) -> None:
        """Dispatch and wait; numpy arrays in `buffers` are updated in place."""
        import numpy as np

        Metal = _require()
        g, t = _dim3(grid, "grid"), _dim3(threadgroup, "threadgroup")
        if t[0] * t[1] * t[2] > self.max_threads_per_threadgroup:
            raise ValueError(
                f"kernel {self.name!r}: {t} threads per threadgroup exceed the "
                f"pipeline's limit of {self.max_threads_per_threadgroup}"
            )
        device = _device()
        bound: list[tuple[Any, Any, Any]] = []  # (original array or None, staged, MTLBuffer)
        for value in buffers:
            arr = value if isinstance(value, np.ndarray) else np.asarray(value).reshape(1)
            staged = np.ascontiguousarray(arr)
            # Shared storage: on Apple silicon the GPU reads and writes this memory directly.
            buf = device.newBufferWithBytes_length_options_(
                staged.tobytes(), max(staged.nbytes, 1), Metal.MTLResourceStorageModeShared
            )
            if buf is None:
                raise RuntimeError(f"Metal: could not allocate a {staged.nbytes}-byte buffer")
            bound.append((value if isinstance(value, np.ndarray) else None, staged, buf))
        cmd = _queue().commandBuffer()
        enc = cmd.computeCommandEncoder()
        enc.setComputePipelineState_(self.pipeline)
        for index, (_, _, buf) in enumerate(bound):
            enc.setBuffer_offset_atIndex_(buf, 0, index)
        enc.dispatchThreadgroups_threadsPerThreadgroup_(
            Metal.MTLSizeMake(*g), Metal.MTLSizeMake(*t)
        )
        enc.endEncoding()
        cmd.commit()
        cmd.waitUntilCompleted()
        if cmd.error() is not None:
            raise RuntimeError(f"Metal: kernel {self.name!r} failed: {cmd.error()}")
        for original, staged, buf in bound:
            if original is None or not original.flags.writeable:
                continue
            data = buf.contents().as_buffer(staged.nbytes)
            result = np.frombuffer(data, dtype=staged.dtype, count=staged.size)
            original[...] = result.reshape(staged.shape)


def compile(source: str, kernel_name: str) -> MetalKernel:  # noqa: A001 - mirrors tvm.compile
    """Compile MSL with the system Metal compiler and build the kernel's compute pipeline."""
    _require()
    device = _device()
    library, err = device.newLibraryWithSource_options_error_(source, None, None)
    if library is None:
        raise CompileError(
            f"Metal could not compile the library for {kernel_name!r}",
            log=str(err),
            command="MTLDevice.newLibraryWithSource:options:error:",
        )
    function = library.newFunctionWithName_(kernel_name)
    if function is None:
        names = ", ".join(library.functionNames() or [])
        raise CompileError(f"no kernel named {kernel_name!r} in the library; found: {names}")
    pipeline, err = device.newComputePipelineStateWithFunction_error_(function, None)
    if pipeline is None:
        raise CompileError(
            f"Metal could not build a pipeline for {kernel_name!r}",
            log=str(err),
            command="MTLDevice.newComputePipelineStateWithFunction:error:",
        )
    return MetalKernel(kernel_name, source, pipeline)


def run(
    source: str,
    kernel_name: str,
    grid: int | Sequence[int],
    threadgroup: int | Sequence[int],
    buffers: Sequence[Any],
) -> None:
    """Compile and run one kernel on the GPU; `buffers` are bound at indices 0, 1, ..."""
    compile(source, kernel_name)(grid, threadgroup, buffers)
