"""Load cubins and launch kernels with cuda.core.

``cuda.core`` (and torch/cupy, when the arguments come from them) is imported inside functions:
importing this module is cheap and works on a machine without a driver. There,
:func:`has_cuda_device` answers False and a launch raises :class:`CudaDeviceUnavailable` (a
``RuntimeError``) saying so.

The launch path is kept short because it runs once per kernel call: everything that does not
depend on the call's values (parameter plan, loaded kernels, launch configs, stream wrappers,
per-type pointer extractors) is computed once and cached. Tensor maps (``tensor_map.py``),
argument pointers (``pointers.py``) and the launch stream (``streams.py``) have their own
modules; the public names among them are still importable from here.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from tvm.error import DeviceUnavailableError

from . import streams as _streams
from .pointers import _EXTRACTORS, _OTHER, _TORCH, _TORCH_TYPES, _pointer, _SlowPath
from .streams import core_launch as core_launch
from .streams import core_stream as core_stream
from .streams import launch_stream as launch_stream
from .streams import torch_raw_stream_getter as torch_raw_stream_getter
from .tags import check_arch
from .tensor_map import TENSOR_MAP, TENSOR_MAP_KIND, _RawParam, derived_tensor_map, tensor_map_arg
from .tensor_map import TMA_DTYPES as TMA_DTYPES
from .tensor_map import array_geometry as array_geometry
from .tensor_map import encode_tiled_tensor_map as encode_tiled_tensor_map

__all__ = [
    "CudaKernel",
    "CudaModule",
    "has_cuda_device",
    "no_device_reason",
]

# Above this much dynamic shared memory a kernel must opt in through its attribute.
_DEFAULT_SMEM_LIMIT = 48 * 1024


# -- device probe ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[int, str]:
    """(number of devices, reason when there are none). Never raises."""
    try:
        from cuda.bindings import driver
    except Exception as e:  # no cuda-bindings, or it failed to load
        return 0, f"cuda.bindings is not importable ({type(e).__name__}: {e})"
    try:
        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return 0, f"cuInit failed with {err.name}"
        err, count = driver.cuDeviceGetCount()
        if err != driver.CUresult.CUDA_SUCCESS:
            return 0, f"cuDeviceGetCount failed with {err.name}"
    except Exception as e:  # typically: libcuda.so (the driver) is not installed
        return 0, f"the NVIDIA driver could not be loaded ({type(e).__name__}: {e})"
    if count == 0:
        return 0, "the driver reports 0 devices"
    return int(count), ""


class CudaDeviceUnavailable(DeviceUnavailableError):
    """No usable CUDA device here (no driver, or no GPU); compiling still works."""


def has_cuda_device() -> bool:
    """True when the NVIDIA driver is present and reports at least one device."""
    return _probe()[0] > 0


def no_device_reason() -> str:
    """Why :func:`has_cuda_device` is False ('' when a device is present)."""
    return _probe()[1]


def _require_device(device_id: int) -> None:
    count, reason = _probe()
    if count == 0:
        raise CudaDeviceUnavailable(
            f"no CUDA device is present: {reason}. The cubin was built (compiling needs no GPU); "
            "run it on a machine with an NVIDIA GPU and driver."
        )
    if not 0 <= device_id < count:
        raise RuntimeError(f"CUDA device {device_id} does not exist ({count} device(s) present)")


# -- parameter types ---------------------------------------------------------------------------

_POINTER_TYPES = frozenset({"ptr", "handle", "pointer"})



def derive(kind: str, array: Any, params: Sequence[Any], *, what: str = "the array") -> Any:
    """A launch plan's derived argument (``("derived", i, kind, params)``) for ``array``."""
    if kind == TENSOR_MAP_KIND:
        return derived_tensor_map(array, params, what=what)
    raise ValueError(f"{what}: the CUDA runtime derives no {kind!r} (only {TENSOR_MAP_KIND!r}); "
                     "this executable needs a newer tvm-backend-cuda")


def _raw_param_array(values: Sequence[Any]) -> tuple[Any, list[Any]]:
    """``void*[]`` pointing at each argument's bytes (what ``cuLaunchKernel`` copies the
    parameters from), and the buffers it points into (keep them alive until the launch)."""
    holders: list[Any] = []
    for i, v in enumerate(values):
        if type(v) is _RawParam:
            holders.append(v.buf)
        elif isinstance(v, int):  # a pointer
            holders.append(ctypes.c_uint64(v))
        elif hasattr(v, "tobytes") and hasattr(v, "dtype"):  # a numpy scalar of the exact C type
            data = v.tobytes()
            holders.append(ctypes.create_string_buffer(data, len(data)))
        else:
            raise TypeError(f"argument #{i} ({type(v).__name__}) cannot share a launch with a raw "
                            "tensor map; pass the tensor maps as cuda.core TensorMapDescriptors")
    params = (ctypes.c_void_p * max(len(holders), 1))(*(ctypes.addressof(h) for h in holders))
    return params, holders


def _launch_raw(stream: Any, grid: Any, block: Any, shmem: int, cluster: Any, kernel: Any,
                values: Sequence[Any]) -> None:
    """``cuLaunchKernel`` with a parameter array of our own, for launches with a
    :class:`_RawParam` (cuda.core's launch takes no raw by-value structs)."""
    from cuda.bindings import driver

    if cluster is not None:
        raise TypeError("a launch with a raw tensor map takes no cluster shape: pass a cuda.core "
                        "TensorMapDescriptor, or compile the cluster shape into the kernel")
    params, holders = _raw_param_array(values)
    g, b = _dim3(grid, "grid"), _dim3(block, "block")
    h_stream = driver.CUstream(int(stream.handle))
    try:  # a CUkernel (cuda.core's library kernels) is launchable where a CUfunction is
        (err,) = driver.cuLaunchKernel(kernel.handle, *g, *b, shmem, h_stream,
                                       ctypes.addressof(params), 0)
    except TypeError:  # bindings that type-check f as a CUfunction
        (err,) = driver.cuLaunchKernel(driver.CUfunction(int(kernel.handle)), *g, *b, shmem,
                                       h_stream, ctypes.addressof(params), 0)
    del holders  # the driver has copied the parameters
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuLaunchKernel failed: {err.name}")


def _float_to_bf16_bits(x: float):
    """Round a float to bfloat16 (round to nearest even) and return its bits as np.uint16."""
    import numpy as np

    bits = int(np.float32(x).view(np.uint32))
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        return np.uint16(0x7FC0)  # NaN stays a quiet NaN
    bits += 0x7FFF + ((bits >> 16) & 1)
    return np.uint16((bits >> 16) & 0xFFFF)


@functools.cache
def _scalar_converter(type_name: str) -> Callable[[Any], Any]:
    """A function turning a Python/numpy value into a numpy scalar of the exact C type."""
    import numpy as np

    table: dict[str, Callable[[Any], Any]] = {
        "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
        "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
        "float16": np.float16, "float32": np.float32, "float64": np.float64,
        "bool": np.bool_, "bfloat16": _float_to_bf16_bits,
        TENSOR_MAP: tensor_map_arg,  # by value, not a scalar: see tensor_map_arg
    }
    try:
        return table[type_name]
    except KeyError:
        raise ValueError(
            f"unsupported kernel parameter type {type_name!r}; use 'ptr' or one of "
            + ", ".join(sorted(table))
        ) from None


def _parse_params(spec: Sequence[Any] | None) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``["ptr", ("n", "int32")]`` -> (names, types). None means: no signature given."""
    if spec is None:
        return None
    names, types = [], []
    for i, item in enumerate(spec):
        if isinstance(item, str):
            name, ty = f"arg{i}", item
        else:
            name, ty = item
        if ty not in _POINTER_TYPES:
            _scalar_converter(ty)  # validate now, not at the first launch
        names.append(name)
        types.append("ptr" if ty in _POINTER_TYPES else ty)
    return tuple(names), tuple(types)




# -- launch geometry ---------------------------------------------------------------------------


def _dim3(v: int | Sequence[int], what: str) -> tuple[int, int, int]:
    t = (v,) if isinstance(v, int) else tuple(v)
    if not 1 <= len(t) <= 3 or any(not isinstance(x, int) or x < 1 for x in t):
        raise ValueError(f"{what} must be a positive int or 1-3 positive ints, got {v!r}")
    return (*t, *(1,) * (3 - len(t)))  # type: ignore[return-value]


def _make_config(grid: Any, block: Any, shmem: int, cluster: Any) -> Any:
    from cuda.core import LaunchConfig

    g, b = _dim3(grid, "grid"), _dim3(block, "block")
    if cluster is None:
        return LaunchConfig(grid=g, block=b, shmem_size=shmem)
    c = _dim3(cluster, "cluster")
    if any(gi % ci for gi, ci in zip(g, c)):
        raise ValueError(f"grid {g} (in blocks) is not a multiple of the cluster shape {c}")
    # Our grid counts blocks, as CUDA's launch API does; cuda.core's counts clusters.
    return LaunchConfig(grid=tuple(gi // ci for gi, ci in zip(g, c)), cluster=c, block=b,
                        shmem_size=shmem)


# -- module and kernel -------------------------------------------------------------------------


class _Loaded:
    """One kernel loaded on one device."""

    __slots__ = ("device", "kernel", "smem_limit")

    def __init__(self, kernel: Any, device: Any) -> None:
        self.kernel = kernel
        self.device = device
        self.smem_limit = _DEFAULT_SMEM_LIMIT


class CudaKernel:
    """A kernel of a :class:`CudaModule`; launch it with :meth:`launch`.

    ``param_types`` (one per kernel parameter: ``"ptr"`` or a dtype such as ``"int32"``,
    ``"float32"``, ``"float16"``, ``"bfloat16"``) decides the exact C type of each scalar;
    ``"tensormap"`` is a by-value ``CUtensorMap`` (:func:`tensor_map_arg`). Without it, arguments
    must be arrays/pointers or numpy scalars (a Python int would be ambiguous).
    """

    def __init__(self, module: CudaModule, name: str, params: Sequence[Any] | None) -> None:
        self.module = module
        self.name = name
        parsed = _parse_params(params)
        self.param_names: tuple[str, ...] | None = parsed[0] if parsed else None
        self.param_types: tuple[str, ...] | None = parsed[1] if parsed else None
        # The plan: per parameter, None for a pointer or the scalar converter.
        self._plan: tuple[Callable[[Any], Any] | None, ...] | None = (
            tuple(None if t == "ptr" else _scalar_converter(t) for t in parsed[1])
            if parsed else None
        )
        self._nparams = len(self._plan) if self._plan is not None else -1
        # a by-value tensor map may come as raw bytes, which cuda.core cannot pass (_launch_raw)
        self._raw_params = bool(parsed) and TENSOR_MAP in parsed[1]  # type: ignore[index]
        self._loaded: dict[int, _Loaded] = {}
        self._configs: dict[tuple, Any] = {}

    def __repr__(self) -> str:
        sig = ", ".join(self.param_types) if self.param_types else "..."
        return f"<CudaKernel {self.name}({sig})>"

    # -- marshalling ---------------------------------------------------------------------------

    def _marshal_fast(self, args: Sequence[Any]) -> tuple[list[Any], int, int]:
        """The common case in a tight loop; anything unusual raises and :meth:`_marshal` redoes
        the work with precise error messages."""
        values: list[Any] = []
        append = values.append
        device, kind = -1, _OTHER
        for conv, a in zip(self._plan, args):  # type: ignore[arg-type]
            if conv is not None:
                append(conv(a))
                continue
            tp = type(a)
            if tp in _TORCH_TYPES:
                d = a.get_device()
                if d < 0:
                    raise _SlowPath
                append(a.data_ptr())
                k = _TORCH
            else:
                p, d, k = _EXTRACTORS[tp](a)  # type: ignore[misc]
                append(p)
            if d != device and d != -2:
                if device >= 0:
                    raise _SlowPath
                device, kind = d, k
        return values, device, kind

    def _marshal(self, args: Sequence[Any]) -> tuple[list[Any], int, int]:
        """(launch values, device id or -1, kind of the first array) for ``args``."""
        plan = self._plan
        if plan is None:
            return self._marshal_untyped(args)
        if len(args) != len(plan):
            raise TypeError(
                f"kernel {self.name} takes {len(plan)} arguments "
                f"({', '.join(self.param_names or ())}), got {len(args)}"
            )
        values: list[Any] = []
        device, kind = -1, _OTHER
        for i, conv in enumerate(plan):
            a = args[i]
            if conv is not None:
                try:
                    values.append(conv(a))
                except (TypeError, ValueError, OverflowError) as e:
                    raise TypeError(
                        f"kernel parameter {self._pname(i)!r} (#{i}) is a "
                        f"{self.param_types[i]} scalar; cannot convert "  # type: ignore[index]
                        f"{type(a).__name__} {a!r}: {e}"
                    ) from None
                continue
            ptr, dev, k = _pointer(a, i, self._pname(i))
            values.append(ptr)
            if dev >= 0:
                if device < 0:
                    device, kind = dev, k
                elif dev != device:
                    raise ValueError(
                        f"kernel parameter {self._pname(i)!r} (#{i}) is on cuda:{dev} but "
                        f"earlier arguments are on cuda:{device}; put all arrays on one device"
                    )
        return values, device, kind

    def _marshal_untyped(self, args: Sequence[Any]) -> tuple[list[Any], int, int]:
        import numpy as np

        values: list[Any] = []
        device, kind = -1, _OTHER
        for i, a in enumerate(args):
            if isinstance(a, np.generic):
                values.append(a)
                continue
            if isinstance(a, (bool, float)):
                raise TypeError(
                    f"kernel parameter #{i}: a Python {type(a).__name__} has no exact C type; "
                    "pass a numpy scalar (np.int32(...)) or give the kernel's param types"
                )
            ptr, dev, k = _pointer(a, i, f"arg{i}")
            values.append(ptr)
            if dev >= 0:
                if device < 0:
                    device, kind = dev, k
                elif dev != device:
                    raise ValueError(f"kernel parameter 'arg{i}' (#{i}) is on cuda:{dev} but "
                                     f"earlier arguments are on cuda:{device}")
        return values, device, kind

    def _pname(self, i: int) -> str:
        return self.param_names[i] if self.param_names else f"arg{i}"

    # -- launch --------------------------------------------------------------------------------

    def launch(
        self,
        grid: int | Sequence[int],
        block: int | Sequence[int],
        args: Sequence[Any],
        *,
        shmem: int = 0,
        cluster: int | Sequence[int] | None = None,
        stream: Any = None,
        on_device: int | None = None,
    ) -> None:
        """Launch asynchronously. ``grid`` counts blocks (also with ``cluster``). The device is
        the arrays' (else ``on_device``, else the module's); the stream follows
        :func:`launch_stream`."""
        if self._plan is not None and len(args) == self._nparams:
            try:
                values, device, kind = self._marshal_fast(args)
            except Exception:
                values, device, kind = self._marshal(args)
        else:
            values, device, kind = self._marshal(args)
        if device < 0:
            device = self.module.device_id if on_device is None else on_device
        loaded = self._loaded.get(device)
        if loaded is None:
            loaded = self._load(device)
        if _TLS.device != device:
            _make_current(device, loaded.device)
        if shmem > loaded.smem_limit:
            self._raise_smem_limit(loaded, shmem)
        key = (grid, block, shmem, cluster)
        try:
            config = self._configs[key]
        except KeyError:
            config = self._configs[key] = _make_config(grid, block, shmem, cluster)
        except TypeError:  # lists are not hashable: build, don't cache
            config = _make_config(grid, block, shmem, cluster)
        s = launch_stream(device, stream)
        if self._raw_params and any(type(v) is _RawParam for v in values):
            _launch_raw(s, grid, block, shmem, cluster, loaded.kernel, values)
            return
        _streams._LAUNCH(s, config, loaded.kernel, *values)

    def _load(self, device: int) -> _Loaded:
        kernels = self.module._load(device)
        loaded = self._loaded[device] = _Loaded(kernels[self.name], self.module._devices[device])
        return loaded

    def _raise_smem_limit(self, loaded: _Loaded, shmem: int) -> None:
        """Opt the kernel in to ``shmem`` bytes of dynamic shared memory on this device."""
        from cuda.bindings import driver

        dev = loaded.device
        optin = dev.properties.max_shared_memory_per_block_optin
        static = loaded.kernel.attributes.shared_size_bytes
        if shmem + static > optin:
            raise ValueError(
                f"kernel {self.name} asks for {shmem} bytes of dynamic shared memory (+{static} "
                f"static); device {dev.device_id} allows at most {optin} per block"
            )
        attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        handle = loaded.kernel.handle
        if isinstance(handle, driver.CUkernel):
            (err,) = driver.cuKernelSetAttribute(attr, shmem, handle, driver.CUdevice(dev.device_id))
        else:
            (err,) = driver.cuFuncSetAttribute(handle, attr, shmem)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(
                f"setting MAX_DYNAMIC_SHARED_SIZE_BYTES={shmem} on kernel {self.name} failed: "
                f"{err.name}"
            )
        loaded.smem_limit = shmem


class _ThreadState(threading.local):
    """Per thread: the device whose context was made current here (None: none yet)."""

    device: int | None = None


_TLS = _ThreadState()


def _make_current(device_id: int, device: Any) -> None:
    # cuda.core needs a current context on the calling thread (torch uses the same primary
    # context); the launch path checks _TLS.device first, so this runs once per thread.
    device.set_current()
    _TLS.device = device_id


class CudaModule:
    """A cubin and its kernels, loaded lazily on each device that a launch uses.

    ``kernels`` is a list of kernel names (``extern "C"`` names), or a mapping from name to its
    parameter types: ``{"vadd": ["ptr", "ptr", "ptr", "int32"]}``; an entry may be a
    ``(name, type)`` pair so errors name the parameter. ``device`` is where launches go when no
    argument says otherwise (default 0). Nothing touches the GPU until the first launch.
    """

    def __init__(
        self,
        cubin: bytes | Any,
        kernels: Sequence[str] | Mapping[str, Sequence[Any] | None],
        *,
        device: int = 0,
        arch: str | None = None,
    ) -> None:
        if not isinstance(cubin, (bytes, bytearray)):  # a CompiledCuda
            arch = arch or cubin.arch
            cubin = cubin.cubin
        if not isinstance(cubin, (bytes, bytearray)) or cubin[:4] != b"\x7fELF":
            raise ValueError("CudaModule needs a cubin (ELF bytes), e.g. compile_cuda(...).cubin")
        self.cubin = bytes(cubin)
        self.arch = arch
        self.device_id = device
        if isinstance(kernels, Mapping):
            specs = dict(kernels)
        elif isinstance(kernels, str):
            specs = {kernels: None}
        else:
            specs = dict.fromkeys(kernels)
        self._kernels = {name: CudaKernel(self, name, spec) for name, spec in specs.items()}
        self._modules: dict[int, dict[str, Any]] = {}
        self._devices: dict[int, Any] = {}
        self._streams: dict[int, Any] = {}
        self._lock = threading.Lock()

    @property
    def kernel_names(self) -> list[str]:
        return list(self._kernels)

    def get_kernel(self, name: str) -> CudaKernel:
        try:
            return self._kernels[name]
        except KeyError:
            raise KeyError(
                f"no kernel {name!r} in this module; it has: {', '.join(self._kernels)}"
            ) from None

    def launch(
        self,
        kernel: str | CudaKernel,
        grid: int | Sequence[int],
        block: int | Sequence[int],
        args: Sequence[Any],
        *,
        shmem: int = 0,
        cluster: int | Sequence[int] | None = None,
        stream: Any = None,
    ) -> None:
        """Launch ``kernel`` (a name or a :class:`CudaKernel`) asynchronously.

        ``grid`` and ``block`` are an int or up to 3 ints; ``grid`` counts blocks, also when
        ``cluster`` gives a cluster shape. The stream is ``stream`` if given, else the current
        torch stream when torch is imported, else cuda.core's default stream of the device
        (:func:`launch_stream`; :meth:`synchronize` waits for all of them).
        """
        k = self._kernels.get(kernel) if kernel.__class__ is str else kernel  # type: ignore[call-overload]
        if k is None:
            k = self.get_kernel(kernel)  # type: ignore[arg-type]  # raises, listing the names
        cast(CudaKernel, k).launch(grid, block, args, shmem=shmem, cluster=cluster, stream=stream)

    def stream(self, device: int | None = None) -> Any:
        """A cuda.core Stream of this module's own on ``device`` (created on first use), for
        callers that want launches off the caller's stream (``launch(..., stream=mod.stream())``)."""
        dev_id = self.device_id if device is None else device
        s = self._streams.get(dev_id)
        if s is None:
            dev = self._device(dev_id)
            s = self._streams[dev_id] = dev.create_stream()
        return s

    def synchronize(self) -> None:
        """Wait for everything launched on the devices this module was loaded on (every stream,
        the default one and this module's own included)."""
        for dev in list(self._devices.values()):
            dev.sync()

    # -- loading -------------------------------------------------------------------------------

    def _device(self, dev_id: int) -> Any:
        dev = self._devices.get(dev_id)
        if dev is None:
            _require_device(dev_id)
            from cuda.core import Device

            dev = Device(dev_id)
            dev.set_current()
            _TLS.device = dev_id
            self._devices[dev_id] = dev
        return dev

    def _load(self, dev_id: int) -> dict[str, Any]:
        with self._lock:
            mod = self._modules.get(dev_id)
            if mod is not None:
                return mod
            dev = self._device(dev_id)
            self._check_arch(dev)
            from cuda.core import ObjectCode

            _make_current(dev_id, dev)
            code = ObjectCode.from_cubin(self.cubin)
            mod = {}
            for name in self._kernels:
                try:
                    mod[name] = code.get_kernel(name)
                except Exception as e:
                    raise RuntimeError(
                        f"kernel {name!r} is not in the cubin ({e}); kernels must be declared "
                        'extern "C" so their names are not mangled'
                    ) from e
            self._modules[dev_id] = mod
            return mod

    def _check_arch(self, dev: Any) -> None:
        """Fail with a clear message before the driver's CUDA_ERROR_NO_BINARY_FOR_GPU."""
        if not self.arch:
            return
        major, minor = dev.compute_capability
        check_arch(self.arch, dev.device_id, major, minor)



# -- tensor memory (tvm.runtime.tensor(a, tvm.cuda(i)); hook tvm_device_memory) ---------------


class _DeviceArray:
    """Device memory holding one C-contiguous array, read by executables through
    ``__cuda_array_interface__``; freed with the object."""

    def __init__(self, buffer: Any, shape: tuple[int, ...], typestr: str, device_id: int) -> None:
        self._buffer = buffer  # a cuda.core Buffer: owns the allocation
        self.device_id = device_id
        self.nbytes = int(buffer.size)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": None,
                                         "data": (int(buffer.handle), False), "version": 3}

    @property
    def ptr(self) -> int:
        data = self.__cuda_array_interface__["data"]
        assert isinstance(data, tuple)
        return int(data[0])


def _check(result: Any, what: str) -> None:
    from cuda.bindings import driver

    err = result[0] if isinstance(result, tuple) else result
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed with {err.name}")


class CudaMemory:
    """Tensors on ``tvm.cuda(i)``: device memory on a GPU (cuda.core), host memory (numpy)
    while every ``cuda`` build runs on the emulator (``TVM_CUDA_EMULATE=1``)."""

    @staticmethod
    def _emulated() -> bool:
        from .executable import CudaOptions, emulating  # noqa: PLC0415 - executable imports this module

        return emulating(CudaOptions())

    def unavailable(self, index: int) -> str | None:
        if self._emulated():
            return None if index == 0 else (f"the CUDA emulator has one device (0), not {index}")
        count, reason = _probe()
        if count == 0:
            return (f"no CUDA device: {reason}; set TVM_CUDA_EMULATE=1 to run cuda kernels and "
                    "tensors on the CPU emulator")
        if index >= count:
            return f"CUDA device {index} does not exist ({count} device(s) present)"
        return None

    def compute_version(self, index: int) -> str | None:
        if self._emulated():
            from .emulator import device_capability  # noqa: PLC0415 - the emulator loads when it is used

            major, minor = device_capability()
        else:
            from cuda.core import Device

            major, minor = Device(index).compute_capability
        return f"{major}.{minor}"

    def upload(self, host: Any, index: int) -> Any:
        if self._emulated():
            return host  # the emulator runs kernels on host arrays
        from cuda.bindings import driver
        from cuda.core import Device

        dev = Device(index)
        dev.set_current()
        # stream-ordered (cuda.core 1.2 requires the stream): wait for it before the copy,
        # which does not run on that stream
        stream = dev.default_stream
        buf = dev.allocate(max(int(host.nbytes), 1), stream=stream)
        stream.sync()
        if host.nbytes:
            _check(driver.cuMemcpyHtoD(int(buf.handle), host.ctypes.data, host.nbytes),
                   "cuMemcpyHtoD")
        return _DeviceArray(buf, tuple(host.shape), host.dtype.str, index)

    def download(self, data: Any, out: Any) -> None:
        if not isinstance(data, _DeviceArray):
            out[...] = data
            return
        from cuda.bindings import driver
        from cuda.core import Device

        Device(data.device_id).set_current()
        # kernels may be queued on any stream of the context: wait for all of them
        _check(driver.cuCtxSynchronize(), "cuCtxSynchronize")
        if out.nbytes:
            _check(driver.cuMemcpyDtoH(out.ctypes.data, data.ptr, out.nbytes), "cuMemcpyDtoH")


MEMORY = CudaMemory()
