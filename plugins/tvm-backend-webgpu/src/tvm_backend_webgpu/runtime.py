"""Run WGSL compute shaders through WebGPU, with wgpu-py (wgpu-native ships in its wheel).

Device and driver access only; :mod:`.executable` decides what runs. ``wgpu`` is imported inside
the functions that use it (it takes a second to import), so importing this module is cheap. On
Linux the adapter comes from the Vulkan backend of wgpu-native (its OpenGL backend cannot run
compute here), which finds a GPU or, on a machine without one, Mesa's CPU driver lavapipe
(Debian ``mesa-vulkan-drivers``). Without an adapter every entry point raises
:class:`WebGPURuntimeUnavailable` with the reason and the fix.

One call of a function is one submission: every array is copied into a storage buffer, each
launch gets a bind group (its buffers, then its scalars as a uniform struct) and a dispatch, and
after the queue is done the buffers are read back into the arrays.
"""

from __future__ import annotations

import functools
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvm.backend import sdk
from tvm.error import CompileError, DeviceUnavailableError

if TYPE_CHECKING:
    from .codegen import KernelLayout

__all__ = ["Launch", "WebGPURuntimeUnavailable", "check_module", "device_info", "is_available",
           "run", "unavailable_reason"]

_FIX = ("install Mesa's CPU driver lavapipe (and the Vulkan loader): as root, bash "
        "scripts/system-deps.sh (Debian: apt-get install libvulkan1 mesa-vulkan-drivers)")
_PACK = {"int32": "i", "uint32": "I", "float32": "f"}
# the adapter's own value is requested for these (WebGPU's defaults are lower)
_LIMITS = ("max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
           "max-compute-workgroup-size-y", "max-compute-workgroup-size-z",
           "max-compute-workgroup-storage-size", "max-compute-workgroups-per-dimension",
           "max-storage-buffers-per-shader-stage", "max-storage-buffer-binding-size",
           "max-buffer-size")


class WebGPURuntimeUnavailable(DeviceUnavailableError):
    """No WebGPU adapter here (no wgpu, no driver); the message says which and how to fix it.
    Catch :class:`tvm.error.DeviceUnavailableError` for any backend."""


@dataclass
class Launch:
    """One dispatch: a kernel's WGSL module and binding layout, its grid and block, and its
    arguments in parameter order (arrays for buffers, numbers for the uniform struct)."""

    wgsl: str
    layout: KernelLayout
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: list[Any]


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """None when WebGPU kernels can run here; otherwise why not (and how to fix it)."""
    return sdk.probe_device("wgpu", "pip install wgpu; tvm-backend-webgpu depends on it", _device,
                            WebGPURuntimeUnavailable, "WebGPU")


def is_available() -> bool:
    return unavailable_reason() is None


def device_info() -> dict[str, Any]:
    """The adapter: name, backend, type, whether it has subgroups, and the compute limits."""
    return dict(_device().info)


def run(launches: Sequence[Launch]) -> None:
    """Run ``launches`` in order as one submission; arrays are updated in place."""
    _require().run(launches)


def check_module(wgsl: str, name: str) -> None:
    """Have wgpu-native parse and validate one WGSL module (CompileError with its report)."""
    _require().shader(wgsl, name)


def _require() -> _Device:
    reason = unavailable_reason()
    if reason is not None:
        raise WebGPURuntimeUnavailable(f"cannot run WebGPU kernels here: {reason}")
    return _device()


@functools.lru_cache(maxsize=1)
def _device() -> _Device:
    import wgpu

    with sdk.driver_noise_filtered():
        return _Device(wgpu)


class _Device:
    """The adapter, device and caches of one WebGPU device."""

    def __init__(self, wgpu: Any) -> None:
        self.wgpu = wgpu
        if sys.platform.startswith("linux"):
            _vulkan_only()
        try:
            adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        except Exception as err:
            raise WebGPURuntimeUnavailable(f"wgpu found no adapter ({err}); {_FIX}") from None
        features = [f for f in ("subgroup",) if f in adapter.features]
        limits = {k: adapter.limits[k] for k in _LIMITS if k in adapter.limits}
        self.device = adapter.request_device_sync(required_features=features,
                                                  required_limits=limits)
        self.limits = dict(self.device.limits)
        info = adapter.info
        self.info = {
            "name": info.get("device", ""), "backend": info.get("backend_type", ""),
            "type": info.get("adapter_type", ""), "subgroups": bool(features),
            "max_workgroup_invocations": self.limits["max-compute-invocations-per-workgroup"],
            "max_workgroups_per_dimension": self.limits["max-compute-workgroups-per-dimension"],
            "max_workgroup_storage": self.limits["max-compute-workgroup-storage-size"],
        }
        self.shaders: dict[str, Any] = {}
        self.layouts: dict[str, Any] = {}
        self.pipelines: dict[tuple[str, tuple[int, int, int]], Any] = {}

    # -- modules and pipelines ------------------------------------------------------------
    def shader(self, wgsl: str, name: str) -> Any:
        found = self.shaders.get(wgsl)
        if found is None:
            try:
                found = self.device.create_shader_module(label=name, code=wgsl)
            except Exception as err:  # wgpu's GPUValidationError carries naga's report
                raise CompileError(f"wgpu-native rejected the WGSL of kernel {name!r}",
                                   log=str(err),
                                   command="wgpu: GPUDevice.create_shader_module(code=...)"
                                   ) from None
            self.shaders[wgsl] = found
        return found

    def _pipeline_layout(self, layout: KernelLayout) -> Any:
        key = repr(layout.to_dict())
        found = self.layouts.get(key)
        if found is None:
            stage = self.wgpu.ShaderStage.COMPUTE
            entries = [{"binding": slot, "visibility": stage, "buffer": {"type": "storage"}}
                       for kind, slot, _ in layout.params if kind == "buffer"]
            if layout.uniform_size:
                entries.append({"binding": layout.uniform_binding, "visibility": stage,
                                "buffer": {"type": "uniform"}})
            group = self.device.create_bind_group_layout(entries=entries)
            found = (group, self.device.create_pipeline_layout(bind_group_layouts=[group]))
            self.layouts[key] = found
        return found

    def pipeline(self, launch: Launch) -> tuple[Any, Any]:
        """(pipeline, bind group layout) of a launch's kernel and workgroup size."""
        group, layout = self._pipeline_layout(launch.layout)
        key = (launch.wgsl, launch.block)
        found = self.pipelines.get(key)
        if found is None:
            module = self.shader(launch.wgsl, launch.layout.name)
            constants = dict(zip(("tvm_block_x", "tvm_block_y", "tvm_block_z"), launch.block))
            found = self.device.create_compute_pipeline(layout=layout, compute={
                "module": module, "entry_point": launch.layout.name, "constants": constants})
            self.pipelines[key] = found
        return found, group

    # -- running ------------------------------------------------------------------------------
    def run(self, launches: Sequence[Launch]) -> None:
        import numpy as np

        wgpu, device = self.wgpu, self.device
        for launch in launches:
            self._check_sizes(launch)
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        arrays: dict[int, tuple[Any, Any]] = {}  # id -> (host array, buffer)
        for launch in launches:
            for (kind, _, _), arg in zip(launch.layout.params, launch.args):
                if kind == "buffer" and id(arg) not in arrays:
                    host = np.asarray(arg)
                    data = host.reshape(-1).view(np.uint8)
                    padded = np.zeros(max(4, -(-data.size // 4) * 4), np.uint8)
                    padded[:data.size] = data
                    arrays[id(arg)] = (host, device.create_buffer_with_data(data=padded,
                                                                            usage=usage))
        encoder = device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        for launch in launches:
            pipeline, group = self.pipeline(launch)
            compute.set_pipeline(pipeline)
            compute.set_bind_group(0, self._bind_group(group, launch, arrays))
            compute.dispatch_workgroups(*launch.grid)
        compute.end()
        device.queue.submit([encoder.finish()])
        for host, buf in arrays.values():
            if host.nbytes and host.flags.writeable:
                data = np.frombuffer(device.queue.read_buffer(buf), np.uint8, host.nbytes)
                host.reshape(-1).view(np.uint8)[:] = data
            buf.destroy()

    def _bind_group(self, group: Any, launch: Launch, arrays: dict[int, tuple[Any, Any]]) -> Any:
        layout = launch.layout
        entries = []
        uniform = bytearray(layout.uniform_size)
        for (kind, slot, dtype), arg in zip(layout.params, launch.args):
            if kind == "buffer":
                entries.append({"binding": slot, "resource": {"buffer": arrays[id(arg)][1]}})
            else:
                struct.pack_into("<" + _PACK[dtype], uniform, slot, arg)
        if layout.uniform_size:
            buf = self.device.create_buffer_with_data(data=bytes(uniform),
                                                      usage=self.wgpu.BufferUsage.UNIFORM)
            entries.append({"binding": layout.uniform_binding, "resource": {"buffer": buf}})
        return self.device.create_bind_group(layout=group, entries=entries)

    def _check_sizes(self, launch: Launch) -> None:
        info, name = self.info, launch.layout.name
        threads = launch.block[0] * launch.block[1] * launch.block[2]
        if threads > info["max_workgroup_invocations"]:
            raise ValueError(f"kernel {name!r}: {threads} threads per workgroup exceed the "
                             f"device's {info['max_workgroup_invocations']} ({info['name']})")
        limit = info["max_workgroups_per_dimension"]
        for axis, n in enumerate(launch.grid):
            if n > limit:
                raise ValueError(f"kernel {name!r}: {n} workgroups along axis {axis} exceed the "
                                 f"device's {limit} ({info['name']})")


def _vulkan_only() -> None:
    """Ask wgpu-native for its Vulkan backend alone (before its instance exists): its OpenGL
    backend cannot run compute shaders here, and probing it prints EGL errors."""
    try:
        from wgpu.backends.wgpu_native.extras import set_instance_extras
    except ImportError:
        return
    try:
        set_instance_extras(backends=["Vulkan"])
    except Exception:  # an instance exists already: use what it enumerates
        return
