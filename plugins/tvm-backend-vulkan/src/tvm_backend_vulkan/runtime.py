"""Run SPIR-V compute shaders through Vulkan, with the ``vulkan`` Python binding (cffi).

Device and driver access only; :mod:`.executable` decides what runs. The binding is imported
inside the functions that use it, so importing this module is cheap everywhere. What a run
needs besides the binding: the Vulkan loader (Debian ``libvulkan1``) and a driver; on a machine
without a GPU, Mesa's CPU driver lavapipe (``mesa-vulkan-drivers``). Without them every entry
point raises :class:`VulkanRuntimeUnavailable` with the reason and the fix.

One call of a function is one submission: every array is copied into a host-visible storage
buffer, the launches are recorded in one command buffer (a compute-to-compute memory barrier
between launches), and after the fence the buffers are copied back into the arrays.

``TVM_VULKAN_DEVICE`` picks a device by index or by a part of its name (``llvmpipe``); by
default the first GPU, else the first device.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvm.backend import sdk
from tvm.error import DeviceUnavailableError

if TYPE_CHECKING:
    from .codegen import KernelLayout

__all__ = ["Launch", "VulkanRuntimeUnavailable", "device_info", "is_available", "run",
           "unavailable_reason"]

_FIX = ("install the Vulkan loader and Mesa's CPU driver lavapipe: as root, bash "
        "scripts/system-deps.sh (Debian: apt-get install libvulkan1 mesa-vulkan-drivers)")
_PACK = {"int32": "i", "uint32": "I", "float32": "f", "int64": "q", "uint64": "Q",
         "float64": "d"}
_TIMEOUT_NS = 120 * 10**9


class VulkanRuntimeUnavailable(DeviceUnavailableError):
    """No Vulkan device here (no binding, no loader, no driver); the message says which and how
    to fix it. Catch :class:`tvm.error.DeviceUnavailableError` for any backend."""


@dataclass
class Launch:
    """One dispatch: a kernel's SPIR-V and parameter layout, its grid and block, and its
    arguments in parameter order (arrays for buffers, numbers for push constants)."""

    spirv: bytes
    layout: KernelLayout
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: list[Any]


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """None when Vulkan kernels can run here; otherwise why not (and how to fix it)."""
    return sdk.probe_device("vulkan", "pip install vulkan; tvm-backend-vulkan depends on it", _device,
                            VulkanRuntimeUnavailable, "Vulkan")


def is_available() -> bool:
    return unavailable_reason() is None


def device_info() -> dict[str, Any]:
    """The chosen device: name, type, API version, subgroup size and compute limits."""
    return dict(_device().info)


def run(launches: Sequence[Launch]) -> None:
    """Run ``launches`` in order as one submission; arrays are updated in place."""
    reason = unavailable_reason()
    if reason is not None:
        raise VulkanRuntimeUnavailable(f"cannot run Vulkan kernels here: {reason}")
    _device().run(launches)


def _vk() -> Any:
    try:
        import vulkan
    except OSError as err:  # the binding loads libvulkan.so.1 when imported
        raise VulkanRuntimeUnavailable(f"the Vulkan loader libvulkan.so.1 is missing ({err}); "
                                       f"{_FIX}") from None
    return vulkan


@functools.lru_cache(maxsize=1)
def _device() -> _Device:
    with sdk.driver_noise_filtered():
        return _Device(_vk())


class _Device:
    """The instance, device, queue and caches of one Vulkan device."""

    def __init__(self, vk: Any) -> None:
        self.vk = vk
        app = vk.VkApplicationInfo(pApplicationName="tvm", applicationVersion=1,
                                   pEngineName="tvm", engineVersion=1,
                                   apiVersion=vk.VK_MAKE_VERSION(1, 1, 0))
        try:
            self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app),
                                                None)
            physical = vk.vkEnumeratePhysicalDevices(self.instance)
        except vk.VkError as err:
            raise VulkanRuntimeUnavailable(f"no Vulkan driver could be loaded "
                                           f"({type(err).__name__}); {_FIX}") from None
        if not physical:
            raise VulkanRuntimeUnavailable(f"the Vulkan loader found no device; {_FIX}")
        self.physical = _choose(vk, physical)
        self.props = vk.vkGetPhysicalDeviceProperties(self.physical)
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.physical)
        self.family = next(i for i, f in enumerate(families)
                           if f.queueFlags & vk.VK_QUEUE_COMPUTE_BIT)
        have = vk.vkGetPhysicalDeviceFeatures(self.physical)
        features = vk.VkPhysicalDeviceFeatures(
            shaderFloat64=have.shaderFloat64, shaderInt64=have.shaderInt64,
            shaderInt16=have.shaderInt16)
        queue_info = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.family, queueCount=1,
                                                pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(self.physical, vk.VkDeviceCreateInfo(
            pQueueCreateInfos=[queue_info], pEnabledFeatures=features), None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.family, 0)
        self.pool = vk.vkCreateCommandPool(self.device, vk.VkCommandPoolCreateInfo(
            queueFamilyIndex=self.family,
            flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT), None)
        self.shaders: dict[str, _Shader] = {}
        limits = self.props.limits
        self.info = {
            "name": _name(self.props),
            "type": _DEVICE_TYPES.get(self.props.deviceType, str(self.props.deviceType)),
            "api_version": _version(self.props.apiVersion),
            "max_workgroup_invocations": limits.maxComputeWorkGroupInvocations,
            "max_workgroup_size": tuple(limits.maxComputeWorkGroupSize),
            "max_workgroup_count": tuple(limits.maxComputeWorkGroupCount),
            "max_push_constants_size": limits.maxPushConstantsSize,
            "max_shared_memory": limits.maxComputeSharedMemorySize,
            "shader_float64": bool(have.shaderFloat64), "shader_int64": bool(have.shaderInt64),
        }

    # -- memory -------------------------------------------------------------------------------
    def _memory_type(self, bits: int) -> int:
        vk = self.vk
        want = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        for i in range(self.memory.memoryTypeCount):
            if bits & (1 << i) and (self.memory.memoryTypes[i].propertyFlags & want) == want:
                return i
        raise VulkanRuntimeUnavailable("the Vulkan device has no host-visible coherent memory")

    def _buffer(self, nbytes: int) -> tuple[Any, Any, Any]:
        """(buffer, memory, mapped bytes) of a host-visible storage buffer."""
        vk = self.vk
        size = max(nbytes, 4)
        buf = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(
            size=size, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None)
        req = vk.vkGetBufferMemoryRequirements(self.device, buf)
        mem = vk.vkAllocateMemory(self.device, vk.VkMemoryAllocateInfo(
            allocationSize=req.size, memoryTypeIndex=self._memory_type(req.memoryTypeBits)), None)
        vk.vkBindBufferMemory(self.device, buf, mem, 0)
        return buf, mem, vk.vkMapMemory(self.device, mem, 0, size, 0)

    def _free(self, buf: Any, mem: Any) -> None:
        self.vk.vkUnmapMemory(self.device, mem)
        self.vk.vkDestroyBuffer(self.device, buf, None)
        self.vk.vkFreeMemory(self.device, mem, None)

    # -- running ------------------------------------------------------------------------------
    def shader(self, spirv: bytes, layout: KernelLayout) -> _Shader:
        key = hashlib.sha256(spirv).hexdigest()
        found = self.shaders.get(key)
        if found is None:
            found = self.shaders[key] = _Shader(self, spirv, layout)
        return found

    def run(self, launches: Sequence[Launch]) -> None:
        import numpy as np

        for launch in launches:
            self._check_sizes(launch)
        arrays: dict[int, tuple[Any, Any, Any, Any]] = {}  # id -> (array, buf, mem, mapped)
        try:
            for launch in launches:
                for (kind, _, _), arg in zip(launch.layout.params, launch.args):
                    if kind == "buffer" and id(arg) not in arrays:
                        host = np.asarray(arg)
                        buf, mem, mapped = self._buffer(host.nbytes)
                        if host.nbytes:
                            np.frombuffer(mapped, np.uint8, host.nbytes)[:] = \
                                host.reshape(-1).view(np.uint8)
                        arrays[id(arg)] = (host, buf, mem, mapped)
            self._submit(launches, {k: v[1] for k, v in arrays.items()})
            for host, _, _, mapped in arrays.values():
                if host.nbytes and host.flags.writeable:
                    host.reshape(-1).view(np.uint8)[:] = np.frombuffer(mapped, np.uint8,
                                                                       host.nbytes)
        finally:
            for _, buf, mem, _ in arrays.values():
                self._free(buf, mem)

    def _check_sizes(self, launch: Launch) -> None:
        info, name = self.info, launch.layout.name
        threads = launch.block[0] * launch.block[1] * launch.block[2]
        if threads > info["max_workgroup_invocations"]:
            raise ValueError(f"kernel {name!r}: {threads} threads per workgroup exceed the "
                             f"device's {info['max_workgroup_invocations']} "
                             f"({info['name']})")
        for axis, (n, limit) in enumerate(zip(launch.grid, info["max_workgroup_count"])):
            if n > limit:
                raise ValueError(f"kernel {name!r}: {n} workgroups along axis {axis} exceed the "
                                 f"device's {limit} ({info['name']})")

    def _submit(self, launches: Sequence[Launch], buffers: dict[int, Any]) -> None:
        vk, dev = self.vk, self.device
        n_buffers = max(1, sum(launch.layout.n_buffers for launch in launches))
        pool = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(
            maxSets=len(launches), pPoolSizes=[vk.VkDescriptorPoolSize(
                type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=n_buffers)]), None)
        fence = vk.vkCreateFence(dev, vk.VkFenceCreateInfo(), None)
        cmd = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(
            commandPool=self.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            commandBufferCount=1))[0]
        keep: list[Any] = []  # cffi objects that must outlive the recording
        try:
            vk.vkBeginCommandBuffer(cmd, vk.VkCommandBufferBeginInfo(
                flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
            for i, launch in enumerate(launches):
                if i:
                    _compute_barrier(vk, cmd)
                shader = self.shader(launch.spirv, launch.layout)
                keep += shader.record(cmd, pool, launch, buffers)
            vk.vkEndCommandBuffer(cmd)
            vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(pCommandBuffers=[cmd])], fence)
            vk.vkWaitForFences(dev, 1, [fence], vk.VK_TRUE, _TIMEOUT_NS)
        finally:
            vk.vkFreeCommandBuffers(dev, self.pool, 1, [cmd])
            vk.vkDestroyFence(dev, fence, None)
            vk.vkDestroyDescriptorPool(dev, pool, None)
        del keep


def _compute_barrier(vk: Any, cmd: Any) -> None:
    """What one launch wrote is visible to the next."""
    access = vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT
    barrier = vk.VkMemoryBarrier(srcAccessMask=vk.VK_ACCESS_SHADER_WRITE_BIT,
                                 dstAccessMask=access)
    stage = vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
    vk.vkCmdPipelineBarrier(cmd, stage, stage, 0, 1, [barrier], 0, None, 0, None)


class _Shader:
    """A shader module, its layouts, and a pipeline per workgroup size."""

    def __init__(self, owner: _Device, spirv: bytes, layout: KernelLayout) -> None:
        vk, dev = owner.vk, owner.device
        self.owner = owner
        self.layout = layout
        self.module = vk.vkCreateShaderModule(dev, vk.VkShaderModuleCreateInfo(
            codeSize=len(spirv), pCode=spirv), None)
        bindings = [vk.VkDescriptorSetLayoutBinding(
            binding=slot, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1,
            stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
            for kind, slot, _ in layout.params if kind == "buffer"]
        self.set_layout = vk.vkCreateDescriptorSetLayout(
            dev, vk.VkDescriptorSetLayoutCreateInfo(pBindings=bindings), None)
        ranges = [vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0,
                                         size=layout.push_size)] if layout.push_size else []
        self.pipeline_layout = vk.vkCreatePipelineLayout(dev, vk.VkPipelineLayoutCreateInfo(
            pSetLayouts=[self.set_layout], pPushConstantRanges=ranges), None)
        self.pipelines: dict[tuple[int, int, int], Any] = {}

    def pipeline(self, block: tuple[int, int, int]) -> Any:
        found = self.pipelines.get(block)
        if found is not None:
            return found
        vk = self.owner.vk
        data = vk.ffi.new("uint32_t[3]", list(block))
        entries = [vk.VkSpecializationMapEntry(constantID=i, offset=4 * i, size=4)
                   for i in range(3)]
        spec = vk.VkSpecializationInfo(pMapEntries=entries, dataSize=12, pData=data)
        # cffi copies nested structs by value: keep every one alive until the call returns
        stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT,
                                                   module=self.module, pName="main",
                                                   pSpecializationInfo=spec)
        info = vk.VkComputePipelineCreateInfo(stage=stage, layout=self.pipeline_layout)
        found = vk.vkCreateComputePipelines(self.owner.device, vk.VK_NULL_HANDLE, 1, [info],
                                            None)[0]
        self.pipelines[block] = found
        del data, entries, spec, stage, info
        return found

    def record(self, cmd: Any, pool: Any, launch: Launch, buffers: dict[int, Any]) -> list[Any]:
        vk, dev = self.owner.vk, self.owner.device
        bind = vk.VK_PIPELINE_BIND_POINT_COMPUTE
        dset = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(
            descriptorPool=pool, pSetLayouts=[self.set_layout]))[0]
        infos, writes = [], []
        push = bytearray(self.layout.push_size)
        for (kind, slot, dtype), arg in zip(self.layout.params, launch.args):
            if kind == "push":
                struct.pack_into("<" + _PACK[dtype], push, slot, arg)
                continue
            info = vk.VkDescriptorBufferInfo(buffer=buffers[id(arg)], offset=0,
                                             range=vk.VK_WHOLE_SIZE & 0xFFFFFFFFFFFFFFFF)
            infos.append(info)
            writes.append(vk.VkWriteDescriptorSet(
                dstSet=dset, dstBinding=slot, descriptorCount=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, pBufferInfo=[info]))
        if writes:
            vk.vkUpdateDescriptorSets(dev, len(writes), writes, 0, None)
        vk.vkCmdBindPipeline(cmd, bind, self.pipeline(launch.block))
        vk.vkCmdBindDescriptorSets(cmd, bind, self.pipeline_layout, 0, 1, [dset], 0, None)
        data = vk.ffi.from_buffer(push) if push else None
        if data is not None:
            vk.vkCmdPushConstants(cmd, self.pipeline_layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                  len(push), data)
        vk.vkCmdDispatch(cmd, *launch.grid)
        return [infos, writes, push, data]


def _choose(vk: Any, devices: list[Any]) -> Any:
    wanted = os.environ.get("TVM_VULKAN_DEVICE", "").strip()
    names = [_name(vk.vkGetPhysicalDeviceProperties(d)) for d in devices]
    if wanted.isdigit():
        index = int(wanted)
        if index >= len(devices):
            raise VulkanRuntimeUnavailable(f"TVM_VULKAN_DEVICE={wanted}, but there are only "
                                           f"{len(devices)} devices: {names}")
        return devices[index]
    if wanted:
        for d, name in zip(devices, names):
            if wanted.lower() in name.lower():
                return d
        raise VulkanRuntimeUnavailable(f"TVM_VULKAN_DEVICE={wanted!r} names none of the "
                                       f"Vulkan devices {names}")
    gpus = (vk.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, vk.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU)
    for d in devices:
        if vk.vkGetPhysicalDeviceProperties(d).deviceType in gpus:
            return d
    return devices[0]


_DEVICE_TYPES = {0: "other", 1: "integrated GPU", 2: "discrete GPU", 3: "virtual GPU", 4: "CPU"}


def _name(props: Any) -> str:
    name = props.deviceName  # the binding gives a str; raw cffi a char array
    return name if isinstance(name, str) else bytes(name).split(b"\0")[0].decode()


def _version(v: int) -> str:
    return f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"
