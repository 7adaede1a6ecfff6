"""Device pointers of launch arguments: one extractor per argument type (torch, cupy, numpy,
cuda.core Buffer, DLPack or ``__cuda_array_interface__`` views, int addresses), chosen once per
type and cached, so that a launch reads a pointer without trying each kind in turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# kind tags returned with a pointer, used to pick the stream
_TORCH, _CUPY, _OTHER = 1, 2, 0
# DLPack device types that live on the GPU
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13


class _HostArray(Exception):
    """An array argument lives in host memory."""


class _SlowPath(Exception):
    """The fast marshalling path met something it leaves to the careful one."""


# torch.Tensor and its subclasses seen so far: the fast path reads them inline.
_TORCH_TYPES: set[type] = set()


def _torch_ptr(t: Any) -> tuple[int, int, int]:
    dev = t.get_device()  # -1 for CPU tensors; cheaper than t.device
    if dev < 0:
        raise _HostArray(f"a torch tensor on {t.device}")
    return t.data_ptr(), dev, _TORCH


def _cupy_ptr(a: Any) -> tuple[int, int, int]:
    return a.data.ptr, a.device.id, _CUPY


def _int_ptr(p: int) -> tuple[int, int, int]:
    return p, -2, _OTHER  # -2: a raw pointer, device unknown (not checked)


def _buffer_ptr(b: Any) -> tuple[int, int, int]:
    if not b.is_device_accessible:
        raise _HostArray("a host-only cuda.core Buffer")
    return int(b.handle), b.device_id, _OTHER


def _view_ptr(obj: Any) -> tuple[int, int, int]:
    """Anything with __dlpack__ or __cuda_array_interface__, through StridedMemoryView."""
    from cuda.core.utils import StridedMemoryView

    if hasattr(obj, "__dlpack_device__"):
        dl_type, dl_id = obj.__dlpack_device__()
        if int(dl_type) not in (_DL_CUDA, _DL_CUDA_MANAGED):
            raise _HostArray(f"an array on DLPack device type {int(dl_type)} (not CUDA)")
        view = StridedMemoryView.from_dlpack(obj, stream_ptr=-1)
    elif hasattr(obj, "__cuda_array_interface__"):
        view = StridedMemoryView.from_cuda_array_interface(obj, stream_ptr=-1)
    else:
        view = StridedMemoryView.from_dlpack(obj, stream_ptr=-1)
    if not view.is_device_accessible:
        raise _HostArray("an array in host memory")
    return int(view.ptr), int(view.device_id), _OTHER


def is_device_tensor(tp: type) -> bool:
    """``tp`` is core's device ``tvm.runtime.Tensor`` (``tvm.runtime.tensor(x, tvm.cuda())``)."""
    return tp.__name__ == "DeviceTensor" and tp.__module__.split(".")[0] == "tvm"


def _device_tensor_ptr(t: Any) -> tuple[int, int, int]:
    """A ``tvm.runtime.Tensor`` on a CUDA device: the pointer of the device array it holds
    (cuda.core's view cannot read the ``__cuda_array_interface__`` typestr ml_dtypes gives
    float8_e5m2, ``<f1``)."""
    data = t.data
    if hasattr(data, "ptr") and hasattr(data, "device_id"):
        return int(data.ptr), int(data.device_id), _OTHER
    if getattr(data, "__array_interface__", None) is not None:
        raise _HostArray(f"a tvm tensor in host memory (on {t.device})")
    return _view_ptr(t)


def _host_ptr(obj: Any) -> tuple[int, int, int]:
    raise _HostArray(f"a host array ({type(obj).__module__}.{type(obj).__name__})")


def _extractor_for(tp: type) -> Callable[[Any], tuple[int, int, int]] | None:
    mod = tp.__module__.split(".")[0]
    if tp is bool:
        return None
    if issubclass(tp, int):
        return _int_ptr
    if mod == "torch" and hasattr(tp, "data_ptr") and hasattr(tp, "get_device"):
        _TORCH_TYPES.add(tp)
        return _torch_ptr
    if mod == "cupy" and hasattr(tp, "data") and hasattr(tp, "device"):
        return _cupy_ptr
    if mod == "numpy" and tp.__name__ == "ndarray":
        return _host_ptr
    if mod == "cuda" and tp.__name__ == "Buffer":
        return _buffer_ptr
    if is_device_tensor(tp):
        return _device_tensor_ptr
    if hasattr(tp, "__dlpack__") or hasattr(tp, "__cuda_array_interface__"):
        return _view_ptr
    return None


_EXTRACTORS: dict[type, Callable[[Any], tuple[int, int, int]] | None] = {}


def _pointer(arg: Any, index: int, name: str) -> tuple[int, int, int]:
    tp = type(arg)
    try:
        ex = _EXTRACTORS[tp]
    except KeyError:
        ex = _EXTRACTORS[tp] = _extractor_for(tp)
    if ex is None:
        raise TypeError(
            f"kernel parameter {name!r} (#{index}) expects a device array or pointer, got "
            f"{tp.__module__}.{tp.__name__}; pass a torch/cupy array (DLPack or "
            "__cuda_array_interface__), a cuda.core Buffer or an int address"
        )
    try:
        return ex(arg)
    except _HostArray as e:
        raise ValueError(
            f"kernel parameter {name!r} (#{index}) is {e}, but the kernel runs on the GPU; "
            "move it to a CUDA device first (e.g. tensor.cuda())"
        ) from None
