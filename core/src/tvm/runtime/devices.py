"""Devices and tensors, as in the seed: ``tvm.cuda(0)``, ``tvm.runtime.tensor(a, dev)``.

>>> dev = tvm.cuda(0)
>>> A = tvm.runtime.tensor(np.ones((4, 4), "float32"), dev)   # a copy on the device
>>> ex(A)                                                     # any executable takes it
>>> A.numpy()                                                 # a copy back on the host

A :class:`Device` names a device kind (``cpu``, ``cuda``, ...) and an index. Memory on the CPU
is core's own (a numpy array); memory on another kind comes from the backend that declares it
(hook ``tvm_device_memory``): that backend allocates it, copies in and out, and says whether the
device is there. The CUDA backend gives device memory on a GPU, and host memory while its
emulator runs every ``cuda`` build (``TVM_CUDA_EMULATE=1``), so code written for the GPU runs
unchanged. numpy is imported when a tensor is made, not at ``import tvm``.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Any, Protocol

from ..error import DeviceUnavailableError
from ..ir.dtype import DataType
from ..plugin._spec import resolve_ref
from ..plugin.manager import get_plugin_manager

__all__ = ["DEVICE_TYPES", "Device", "DeviceMemory", "DeviceTensor", "Tensor", "cpu", "cuda",
           "ShapeTuple", "device", "metal", "numpy_dtype", "opencl", "rocm", "tensor", "vulkan"]

#: device kind -> DLPack device type code (dlpack.h), as the seed numbers them
DEVICE_TYPES: dict[str, int] = {"cpu": 1, "cuda": 2, "opencl": 4, "vulkan": 7, "metal": 8,
                                "rocm": 10, "webgpu": 15}
_SPELLINGS = {"llvm": "cpu", "c": "cpu", "gpu": "cuda", "nvptx": "cuda", "cl": "opencl"}


class DeviceMemory(Protocol):
    """What a backend's ``tvm_device_memory`` hook gives for a device kind."""

    def unavailable(self, index: int) -> str | None:
        """None when device ``index`` can hold tensors here, else why not (one line)."""

    def upload(self, host: Any, index: int) -> Any:
        """A copy of the C-contiguous numpy array ``host`` on device ``index``: an object the
        backend's executables take as an array argument."""

    def download(self, data: Any, out: Any) -> None:
        """Copy ``data`` (what :meth:`upload` returned) into the numpy array ``out``, after
        the work queued on it has finished."""

    def compute_version(self, index: int) -> str | None:
        """The device's architecture version (``"9.0"`` for CUDA compute capability 9.0), or
        None where the kind has none."""


@dataclass(frozen=True)
class Device:
    """A device: its kind (``"cuda"``) and index. ``tvm.cuda(0)``, ``tvm.device("cuda", 0)``."""

    kind: str
    index: int = 0

    @property
    def device_type(self) -> int:
        """The DLPack device type code (``kDLCUDA`` = 2)."""
        return DEVICE_TYPES[self.kind]

    @property
    def device_id(self) -> int:
        return self.index

    @property
    def exist(self) -> bool:
        """True when tensors can be made on this device here."""
        return self.unavailable() is None

    @property
    def compute_version(self) -> str | None:
        """The architecture version (``"9.0"`` for a CUDA device of compute capability 9.0),
        None where the device is absent or its kind has none."""
        if self.kind == "cpu" or self.unavailable() is not None:
            return None
        memory = _memory(self.kind)
        return None if memory is None else memory.compute_version(self.index)

    def unavailable(self) -> str | None:
        """None when tensors can be made on this device here, else why not."""
        if self.kind == "cpu":
            return None
        memory = _memory(self.kind)
        if memory is None:
            return (f"no installed backend gives memory on {self.kind!r} devices "
                    f"(pip install tvm-backend-{self.kind})")
        return memory.unavailable(self.index)

    def __str__(self) -> str:
        return f"{self.kind}({self.index})"

    __repr__ = __str__


def device(kind: str | Device, index: int = 0) -> Device:
    """The device ``kind`` (``"cuda"``, ``"cpu"``, ``"cuda:1"``, a DLPack code) number ``index``."""
    if isinstance(kind, Device):
        return kind
    if isinstance(kind, int):
        by_code = {code: name for name, code in DEVICE_TYPES.items()}
        if kind not in by_code:
            raise ValueError(f"unknown DLPack device type {kind}; known: {sorted(by_code)}")
        return Device(by_code[kind], index)
    if not isinstance(kind, str):
        raise TypeError(f"tvm.device() takes a device kind such as 'cuda', not "
                        f"{type(kind).__name__}")
    name, _, idx = kind.strip().lower().partition(":")
    name = _SPELLINGS.get(name, name)
    if name not in DEVICE_TYPES:
        raise ValueError(f"unknown device kind {kind!r}; known: {', '.join(DEVICE_TYPES)}")
    if idx:
        if not idx.isdigit():
            raise ValueError(f"device {kind!r}: the index after ':' must be a number")
        index = int(idx)
    if not isinstance(index, int) or index < 0:
        raise ValueError(f"device index must be a non-negative int, not {index!r}")
    return Device(name, index)


def cpu(index: int = 0) -> Device:
    return device("cpu", index)


def cuda(index: int = 0) -> Device:
    return device("cuda", index)


def rocm(index: int = 0) -> Device:
    return device("rocm", index)


def metal(index: int = 0) -> Device:
    return device("metal", index)


def vulkan(index: int = 0) -> Device:
    return device("vulkan", index)


def opencl(index: int = 0) -> Device:
    return device("opencl", index)


@functools.cache
def _memory(kind: str) -> DeviceMemory | None:
    """The memory the loaded backends give for ``kind`` (the first that does), else None."""
    for table in get_plugin_manager().hook.tvm_device_memory():
        if table and kind in table:
            return resolve_ref(table[kind])  # type: ignore[no-any-return]
    return None


class Tensor:
    """An array on a :class:`Device`, made by ``tvm.runtime.tensor(a, dev)``; executables take
    it wherever they take an array, and :meth:`numpy` copies it back to the host.

    A tensor in host memory (on the CPU, or on ``cuda`` under the emulator) is a numpy array
    (a subclass of both), so every executable and numpy function reads it in place. A tensor in
    device memory is a :class:`DeviceTensor`.
    """

    device: Device

    def numpy(self) -> Any:
        """A numpy copy of the tensor, after the kernels queued on it have finished."""
        raise NotImplementedError

    def asnumpy(self) -> Any:
        return self.numpy()

    def copyfrom(self, source: Any) -> Tensor:
        """Overwrite the tensor with ``source`` (same shape; converted to the tensor's dtype)."""
        raise NotImplementedError


class DeviceTensor(Tensor):
    """A tensor in a device's memory. Executables read it through the array protocol of what
    the backend allocated (``__cuda_array_interface__`` for CUDA)."""

    def __init__(self, data: Any, shape: tuple[int, ...], dtype: str, dev: Device) -> None:
        self.data = data
        self.shape = shape
        self.dtype = dtype
        self.device = dev

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def numpy(self) -> Any:
        import numpy as np  # noqa: PLC0415 - numpy loads with the first tensor

        out = np.empty(self.shape, dtype=_numpy_dtype(self.dtype))
        _require(self.device).download(self.data, out)
        return out

    def copyfrom(self, source: Any) -> Tensor:
        host = _host_copy(source, self.dtype, self.shape)
        self.data = _require(self.device).upload(host, self.device.index)
        return self

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    # the array protocols of the device array, so that executables read it as they read that
    # array: properties, absent (AttributeError) where the device array lacks them
    @property
    def __cuda_array_interface__(self) -> Any:
        return self.data.__cuda_array_interface__

    @property
    def __dlpack__(self) -> Any:
        return self.data.__dlpack__

    @property
    def __dlpack_device__(self) -> Any:
        return self.data.__dlpack_device__

    def __repr__(self) -> str:
        return f"<tvm.runtime.Tensor shape={self.shape} dtype={self.dtype} device={self.device}>"


@functools.lru_cache(maxsize=1)
def _host_tensor_type() -> type:
    """``HostTensor``: a numpy array that is a :class:`Tensor` (made when numpy is loaded)."""
    import numpy as np  # noqa: PLC0415

    def numpy(self: Any) -> Any:
        return np.array(self, copy=True).view(np.ndarray)

    def copyfrom(self: Any, source: Any) -> Any:
        host = _host_copy(source, str(self.dtype), self.shape)
        np.copyto(self, host, casting="unsafe")
        return self

    def array_finalize(self: Any, obj: Any) -> None:
        self._tvm_device = getattr(obj, "_tvm_device", None) or cpu()

    def get_device(self: Any) -> Device:
        return self._tvm_device  # type: ignore[no-any-return]

    def set_device(self: Any, dev: Device) -> None:
        self._tvm_device = dev

    def reduce(self: Any) -> Any:  # pickles as the plain numpy array
        return np.ndarray.__reduce__(self.view(np.ndarray))

    return type("HostTensor", (np.ndarray, Tensor), {
        "__doc__": "A tensor in host memory: a numpy array (tvm.runtime.tensor on the CPU).",
        "__module__": __name__, "numpy": numpy, "copyfrom": copyfrom,
        "__array_finalize__": array_finalize, "__reduce__": reduce,
        # numpy's ndarray.device (the array API's "cpu") is read-only: the tvm Device instead
        "device": property(get_device, set_device, doc="The tvm Device the tensor is on.")})


def _host_copy(source: Any, dtype: str, shape: tuple[int, ...] | None = None) -> Any:
    """``source`` as a contiguous numpy array of ``dtype``; with ``shape`` (a ``copyfrom``),
    one of exactly that shape."""
    import numpy as np  # noqa: PLC0415

    host = np.ascontiguousarray(np.asarray(source), dtype=_numpy_dtype(dtype))
    if shape is not None and host.shape != tuple(shape):
        raise ValueError(f"copyfrom: the source has shape {host.shape}, the tensor "
                         f"{tuple(shape)}")
    return host


def _require(dev: Device) -> DeviceMemory:
    reason = dev.unavailable()
    if reason is not None:
        raise DeviceUnavailableError(f"no tensor can be made on {dev} here: {reason}")
    memory = _memory(dev.kind)
    assert memory is not None  # unavailable() said why otherwise
    return memory


@functools.lru_cache(maxsize=64)
def _numpy_dtype(name: str) -> Any:
    return numpy_dtype(name)


#: tvm dtype -> its ml_dtypes name
_ML_DTYPES = {"bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn",
              "float8_e5m2": "float8_e5m2", "float8_e4m3fnuz": "float8_e4m3fnuz",
              "float8_e5m2fnuz": "float8_e5m2fnuz", "float8_e8m0fnu": "float8_e8m0fnu",
              "float4_e2m1fn": "float4_e2m1fn", "float6_e2m3fn": "float6_e2m3fn",
              "float6_e3m2fn": "float6_e3m2fn"}


def numpy_dtype(dtype: Any) -> Any:
    """The numpy dtype of a tvm dtype (``"bfloat16"`` and the float8/float4 types through
    ``ml_dtypes``, imported only for them); the seed's ``tvm.testing.np_dtype_from_str``."""
    import numpy as np  # noqa: PLC0415 - numpy loads with the first tensor

    name = str(dtype)
    if name not in _ML_DTYPES:
        with contextlib.suppress(ValueError):  # a name only numpy or ml_dtypes knows
            name = str(DataType(name))
    if name in _ML_DTYPES:
        try:
            import ml_dtypes  # noqa: PLC0415 - an SDK: only for the dtypes numpy lacks
        except ImportError as err:
            raise ImportError(f"numpy has no {name}; pip install ml_dtypes") from err
        return np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))
    return np.dtype(name)


def tensor(data: Any, device: Device | str | None = None, dtype: str | None = None) -> Any:
    """A copy of ``data`` (a numpy array, or anything ``numpy.asarray`` takes) on ``device``
    (default the CPU), in ``dtype`` (default ``data``'s): a :class:`Tensor`."""
    import numpy as np  # noqa: PLC0415

    dev = cpu() if device is None else globals()["device"](device)
    host = np.asarray(data.numpy() if isinstance(data, DeviceTensor) else data)
    if dtype is not None:
        host = host.astype(_numpy_dtype(dtype))
    host = np.array(host, order="C", copy=True)
    memory = None if dev.kind == "cpu" else _require(dev)
    placed = host if memory is None else memory.upload(host, dev.index)
    if isinstance(placed, np.ndarray):  # host memory (the CPU, or an emulated device)
        out: Any = placed.view(_host_tensor_type())
        out.device = dev
        return out
    return DeviceTensor(placed, host.shape, _dtype_name(host.dtype), dev)


def _dtype_name(npdt: Any) -> str:
    try:
        return str(DataType(str(npdt)))
    except ValueError:  # a numpy dtype tvm has no name for (float4 from ml_dtypes): numpy's
        return str(npdt)


class ShapeTuple(tuple):  # type: ignore[type-arg]
    """The seed's ``tvm.runtime.ShapeTuple``: a shape, a tuple of ints."""

    def __new__(cls, shape: Any = ()) -> ShapeTuple:
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, int) and not hasattr(d, "__index__"):
                raise TypeError(f"ShapeTuple: a dimension must be an int, got {d!r}")
        return super().__new__(cls, (int(d) for d in dims))
