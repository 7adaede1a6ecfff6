"""OpenCL device and driver access through pyopencl (imported here, lazily; never by ``import
tvm``).

A device is picked by the target's ``device_type`` (``all`` prefers a GPU, then any device) and
``platform`` (a substring of the platform's name); its context and queue are made once per
process. Programs are built once per (device, source, build options). On a machine without a GPU
the CPU driver PoCL (Debian: ``apt-get install pocl-opencl-icd``) runs the same kernels.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tvm.error import CompileError, DeviceUnavailableError

__all__ = ["Device", "OpenCLRuntimeUnavailable", "Program", "device_for", "is_available",
           "repro_command", "unavailable_reason"]

_INSTALL = ("install an OpenCL driver (on Debian/Ubuntu for the CPU: apt-get install "
            "pocl-opencl-icd; `bash scripts/system-deps.sh` as root installs it)")


def repro_command(source: str, options: str = "") -> str:
    """Write ``source`` to a kept temporary file; the command that builds it again
    (``python -m tvm_backend_opencl.compiler``: a failed build's report names it)."""
    folder = tempfile.mkdtemp(prefix="tvm-opencl-")
    path = os.path.join(folder, "kernels.cl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    command = [sys.executable, "-m", "tvm_backend_opencl.compiler", path]
    if options:
        command += ["--options", options]
    return shlex.join(command)

class OpenCLRuntimeUnavailable(DeviceUnavailableError):
    """No OpenCL runtime or device here (pyopencl missing, no driver, no matching device)."""


@dataclass(frozen=True)
class _Query:
    device_type: str = "all"
    platform: str = ""


_DEVICES: dict[_Query, Device] = {}
_REASONS: dict[_Query, str | None] = {}


def unavailable_reason(device_type: str = "all", platform: str = "") -> str | None:
    """None when a device of this type (and platform) can run kernels here, else why not."""
    query = _Query(device_type, platform)
    if query not in _REASONS:
        try:
            _find(query)
            _REASONS[query] = None
        except OpenCLRuntimeUnavailable as err:
            _REASONS[query] = str(err)
    return _REASONS[query]


def is_available(device_type: str = "all", platform: str = "") -> bool:
    return unavailable_reason(device_type, platform) is None


def device_for(device_type: str = "all", platform: str = "") -> Device:
    """The process's :class:`Device` for this query (made on first use); raises
    :class:`OpenCLRuntimeUnavailable` saying what is missing."""
    query = _Query(device_type, platform)
    found = _DEVICES.get(query)
    if found is None:
        found = _DEVICES[query] = Device(*_find(query))
    return found


def _find(query: _Query) -> tuple[Any, Any]:
    """(pyopencl, cl.Device) for the query."""
    try:
        import pyopencl as cl
    except ImportError as err:
        raise OpenCLRuntimeUnavailable(f"pyopencl is not installed ({err}); pip install "
                                       "pyopencl") from None
    try:
        platforms = cl.get_platforms()
    except cl.Error as err:  # the ICD loader finds no driver: CL_PLATFORM_NOT_FOUND_KHR
        raise OpenCLRuntimeUnavailable(f"no OpenCL platform ({err}); {_INSTALL}") from None
    platforms = [p for p in platforms if query.platform.lower() in p.name.lower()]
    if not platforms:
        raise OpenCLRuntimeUnavailable(f"no OpenCL platform named like {query.platform!r}; "
                                       f"{_INSTALL}")
    devices = [(p, d) for p in platforms for d in _devices(cl, p)]
    wanted = {"gpu": cl.device_type.GPU, "cpu": cl.device_type.CPU,
              "accelerator": cl.device_type.ACCELERATOR}.get(query.device_type)
    if wanted is not None:
        devices = [(p, d) for p, d in devices if d.type & wanted]
    elif query.device_type == "all":  # prefer a GPU
        devices.sort(key=lambda pd: not pd[1].type & cl.device_type.GPU)
    if not devices:
        names = ", ".join(p.name for p in platforms)
        raise OpenCLRuntimeUnavailable(f"no OpenCL device of type {query.device_type!r} on "
                                       f"{names}; {_INSTALL}")
    return cl, devices[0][1]


def _devices(cl: Any, platform: Any) -> list[Any]:
    try:
        return list(platform.get_devices())
    except cl.Error:  # a platform with no device of any type
        return []


class Device:
    """One OpenCL device with its context and in-order queue, and the programs built for it."""

    def __init__(self, cl: Any, device: Any) -> None:
        self.cl = cl
        self.device = device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(self.context)
        self._programs: dict[tuple[str, str], Any] = {}

    @property
    def name(self) -> str:
        return f"{self.device.name.strip()} ({self.device.platform.name.strip()})"

    @property
    def max_work_group_size(self) -> int:
        return int(self.device.max_work_group_size)

    @property
    def local_mem_size(self) -> int:
        return int(self.device.local_mem_size)

    def has_extension(self, name: str) -> bool:
        return name in self.device.extensions.split()

    def program(self, source: str, options: str = "", *, what: str = "the OpenCL C") -> Program:
        """The built program of ``source`` (built once per source and options); a build
        failure raises :class:`~tvm.error.CompileError` with the driver's log."""
        key = (hashlib.sha256(source.encode()).hexdigest(), options)
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = self._build(source, options, what)
        return prog

    def _build(self, source: str, options: str, what: str) -> Program:
        cl = self.cl
        try:
            return Program(cl, cl.Program(self.context, source).build(options=options.split()))
        except cl.RuntimeError as err:  # a failed clBuildProgram (pyopencl's RuntimeError)
            raise CompileError(f"the OpenCL driver could not build {what} for {self.name}",
                               log=str(err), command=repro_command(source, options)) from None

    def run(self, program: Program, launches: Sequence[Any], arrays: Sequence[Any]) -> None:
        """Enqueue ``launches`` (kernel, global size, local size, arguments) with the numpy
        ``arrays`` copied to device buffers first and back after the last launch; arguments
        name arrays by index (``("array", i)``), else they are passed as they are."""
        cl = self.cl
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
        buffers = [cl.Buffer(self.context, flags, hostbuf=a) if a.nbytes else
                   cl.Buffer(self.context, cl.mem_flags.READ_WRITE, 1) for a in arrays]
        for name, global_size, local_size, args in launches:
            kernel = program.kernel(name)
            values = [buffers[a[1]] if isinstance(a, tuple) and a[:1] == ("array",) else a
                      for a in args]
            kernel.set_args(*values)
            cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)
        for array, buffer in zip(arrays, buffers):
            if array.nbytes:
                cl.enqueue_copy(self.queue, array, buffer)
        self.queue.finish()

    def local_memory(self, nbytes: int) -> Any:
        """The argument that gives a kernel's ``__local`` pointer parameter ``nbytes``."""
        return self.cl.LocalMemory(max(int(nbytes), 1))

    def kernel_work_group_limit(self, program: Program, name: str) -> int:
        """The largest work-group this device runs kernel ``name`` with."""
        info = self.cl.kernel_work_group_info.WORK_GROUP_SIZE
        return int(program.kernel(name).get_work_group_info(info, self.device))


class Program:
    """A built program and its kernels (each made once: a kernel's arguments are taken when
    it is enqueued, so one object serves every launch)."""

    def __init__(self, cl: Any, program: Any) -> None:
        self.cl = cl
        self.program = program
        self._kernels: dict[str, Any] = {}

    def kernel(self, name: str) -> Any:
        found = self._kernels.get(name)
        if found is None:
            found = self._kernels[name] = self.cl.Kernel(self.program, name)
        return found
