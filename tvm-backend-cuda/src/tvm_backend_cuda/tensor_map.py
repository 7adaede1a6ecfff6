"""Tensor maps (TMA descriptors) passed by value: encoding one for an array
(``cuTensorMapEncodeTiled``), the dtypes TMA takes, and the cached map a launch plan derives
from an array argument (``TENSOR_MAP_KIND``). Imports cuda.bindings only when a map is made."""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Sequence
from typing import Any

from .emulated_tensor_map import map_params
from .pointers import _TORCH_TYPES, _device_tensor_ptr, is_device_tensor

TENSOR_MAP = "tensormap"  # a kernel parameter type: ``const __grid_constant__ CUtensorMap``
_TENSOR_MAP_BYTES = 128


class _RawParam:
    """A by-value kernel argument cuda.core cannot pass (a tensor map given as raw bytes): its
    bytes, in a buffer the driver copies the parameter from (:func:`_launch_raw`)."""

    __slots__ = ("buf",)

    def __init__(self, data: bytes) -> None:
        self.buf = ctypes.create_string_buffer(data, len(data))


def tensor_map_arg(a: Any) -> Any:
    """A ``CUtensorMap`` kernel argument: a cuda.core ``TensorMapDescriptor`` (passed as is), or
    the 128 bytes of one as ``bytes``/``bytearray``/``memoryview``, a
    ``cuda.bindings.driver.CUtensorMap`` (``cuTensorMapEncodeTiled``) or a host numpy array."""
    tp = type(a)
    if tp is _RawParam or tp.__name__ == "TensorMapDescriptor":
        return a
    if tp.__name__ == "CUtensorMap" and hasattr(a, "opaque"):
        data = struct.pack("<16Q", *(int(w) for w in a.opaque))
    elif isinstance(a, (bytes, bytearray, memoryview)):
        data = bytes(a)
    elif hasattr(a, "__array_interface__") and hasattr(a, "tobytes"):
        data = a.tobytes()
    else:
        raise TypeError(
            f"expected a CUtensorMap (a cuda.core TensorMapDescriptor, or a 128-byte descriptor: "
            f"bytes, cuda.bindings.driver.CUtensorMap or a host numpy array), got {tp.__name__}")
    if len(data) != _TENSOR_MAP_BYTES:
        raise TypeError(f"a CUtensorMap is 128 bytes; got {len(data)} ({tp.__name__}); expected "
                        "a 128-byte descriptor or a cuda.core TensorMapDescriptor")
    return _RawParam(data)


# TMA element types by dtype name (CUtensorMapDataType's names without the prefix)
TMA_DTYPES = {
    "uint8": "UINT8", "int8": "UINT8", "float8_e4m3fn": "UINT8", "float8_e5m2": "UINT8",
    "bool": "UINT8", "uint16": "UINT16", "int16": "UINT16", "float16": "FLOAT16",
    "bfloat16": "BFLOAT16", "uint32": "UINT32", "int32": "INT32", "float32": "FLOAT32",
    "uint64": "UINT64", "int64": "INT64", "float64": "FLOAT64",
}
_DTYPE_BYTES = {"bool": 1, "uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
                "uint16": 2, "int16": 2, "float16": 2, "bfloat16": 2, "uint32": 4, "int32": 4,
                "float32": 4, "uint64": 8, "int64": 8, "float64": 8}


def encode_tiled_tensor_map(ptr: int, shape: Sequence[int], strides: Sequence[int], dtype: str,
                            box: Sequence[int], swizzle: int, l2_promotion: int = 2, *,
                            what: str = "the array", emulated: bool = False) -> Any:
    """``cuTensorMapEncodeTiled`` of an array at device address ``ptr`` with ``shape`` and
    ``strides`` (elements, outermost first; the innermost stride must be 1) and a box of
    ``box`` elements (outermost first), swizzle mode ``swizzle`` (0 none, 1 32B, 2 64B,
    3 128B); elements outside the array read as zero. Returns a
    ``cuda.bindings.driver.CUtensorMap``. What TMA cannot address is a ``ValueError`` naming
    ``what`` and the rule, before the driver is asked. ``emulated``: ``ptr`` is a CPU array's,
    and the map the CUDA emulator's record of it (no driver needed)."""
    kind = TMA_DTYPES.get(dtype)
    if kind is None:
        raise ValueError(f"{what}: TMA has no element type for {dtype}")
    eb = _DTYPE_BYTES[dtype]
    rank = len(shape)
    if not 1 <= rank <= 5 or len(strides) != rank or len(box) != rank:
        raise ValueError(f"{what}: a tensor map has 1 to 5 dims with one stride and one box "
                         f"extent each; got shape {list(shape)}, strides {list(strides)}, box "
                         f"{list(box)}")
    if rank and int(strides[-1]) != 1 and int(shape[-1]) > 1:
        raise ValueError(f"{what}: TMA reads the innermost dim contiguously; the array's strides "
                         f"are {list(strides)} elements (pass a .contiguous() array)")
    if ptr % 16:
        raise ValueError(f"{what}: TMA needs a 16-byte aligned address; the array starts at "
                         f"{ptr:#x} (pass a freshly allocated or .clone()d array)")
    row_bytes = [int(st) * eb for st in strides[:-1]]
    if any(b % 16 for b in row_bytes):
        raise ValueError(f"{what}: TMA needs every stride but the innermost to be a multiple of "
                         f"16 bytes; the array {list(shape)} x {dtype} has strides "
                         f"{row_bytes} bytes (pad its rows to a multiple of {16 // eb or 1} "
                         "elements)")
    if emulated:
        # import-time budget: the emulator loads subprocess and logging
        from .emulator import encoded_tensor_map  # noqa: PLC0415

        return encoded_tensor_map(ptr, shape, strides, dtype, box, swizzle, what)
    from cuda.bindings import driver as d  # the SDK: only when a map is encoded

    u64, u32 = d.cuuint64_t, d.cuuint32_t
    # rank - 1 strides; for a 1-D map none, but an empty list reaches the driver as a null
    # pointer, which it refuses (CUDA_ERROR_INVALID_VALUE, seen on the H100): one unread entry
    global_strides = [u64(b) for b in reversed(row_bytes)] or [u64(_round16(int(shape[0]) * eb))]
    err, tmap = d.cuTensorMapEncodeTiled(
        getattr(d.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{kind}"), rank, ptr,
        [u64(int(x)) for x in reversed(shape)], global_strides,
        [u32(int(b)) for b in reversed(box)], [u32(1)] * rank,
        d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, d.CUtensorMapSwizzle(int(swizzle)),
        d.CUtensorMapL2promotion(int(l2_promotion)),
        d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if err != d.CUresult.CUDA_SUCCESS:
        raise ValueError(f"{what}: cuTensorMapEncodeTiled failed ({err.name}) for an array "
                         f"{list(shape)} {dtype} with strides {list(strides)}, box {list(box)}, "
                         f"swizzle {swizzle}")
    return tmap


def _round16(n: int) -> int:
    return -(-n // 16) * 16


def array_geometry(a: Any) -> tuple[int, tuple[int, ...], tuple[int, ...], int]:
    """(device address, shape, strides in elements, device id) of a CUDA array: a torch tensor,
    or anything DLPack / ``__cuda_array_interface__`` describes."""
    if type(a) in _TORCH_TYPES or (type(a).__module__.split(".")[0] == "torch"
                                   and hasattr(a, "data_ptr")):
        return a.data_ptr(), tuple(a.shape), tuple(a.stride()), a.get_device()
    if is_device_tensor(type(a)):  # C-contiguous; cuda.core cannot parse float8_e5m2's "<f1"
        ptr, device, _ = _device_tensor_ptr(a)
        shape = tuple(int(x) for x in a.shape)
        return ptr, shape, _c_strides(shape), device
    from cuda.core.utils import StridedMemoryView

    if hasattr(a, "__dlpack__"):
        view = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    else:
        view = StridedMemoryView.from_cuda_array_interface(a, stream_ptr=-1)
    shape = tuple(int(x) for x in view.shape)
    strides = view.strides
    if strides is None:  # C-contiguous
        strides = _c_strides(shape)
    return int(view.ptr), shape, tuple(int(x) for x in strides), int(view.device_id)


def _c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    acc, out = 1, []
    for x in reversed(shape):
        out.append(acc)
        acc *= x
    return tuple(reversed(out))


def _view_geometry(mp: Any, shape: Sequence[int], strides: Sequence[int], what: str
                   ) -> tuple[list[int], list[int]]:
    """(shape, strides in elements) of a map's own geometry over a contiguous array, checked to
    stay inside it."""
    elem = _DTYPE_BYTES[mp.dtype]
    acc, contiguous = 1, True
    for n, st in zip(reversed(shape), reversed(strides)):
        contiguous = contiguous and (n == 1 or st == acc)
        acc *= n
    if not contiguous:
        raise ValueError(f"{what}: a tensor map with its own dims and strides views a "
                         "contiguous array (pass a .contiguous() one)")
    reach, have = mp.view_bytes(elem), acc * elem
    if reach > have:
        raise ValueError(f"{what}: the tensor map's dims {mp.dims} and byte strides "
                         f"{mp.strides} reach {reach} bytes, but the array has {have}")
    return list(mp.dims), [s // elem for s in mp.strides] + [1]


TENSOR_MAP_KIND = "cuda.tensor_map"  # the launch plan's derived-argument kind (copy_async)
_MAP_CACHE: dict[tuple[Any, ...], _RawParam] = {}
_MAP_CACHE_SIZE = 512


def derived_tensor_map(array: Any, params: Sequence[Any], *, what: str = "the array") -> Any:
    """The tensor map a launch derives from ``array`` (:data:`TENSOR_MAP_KIND`, params
    ``[dtype, swizzle, l2 promotion, *box]``, then optionally ``"view", *dims, *strides``:
    :class:`~.emulated_tensor_map.MapParams`) as a by-value kernel argument; encoded once per
    address, shape, strides and params, and reused while those are unchanged."""
    ptr, shape, strides, _ = array_geometry(array)
    key = (ptr, shape, strides, tuple(params))
    raw = _MAP_CACHE.get(key)
    if raw is None:
        mp = map_params(params)
        dims, steps = (_view_geometry(mp, shape, strides, what) if mp.dims is not None
                       else (list(shape), list(strides)))
        tmap = encode_tiled_tensor_map(ptr, dims, steps, mp.dtype, mp.box, mp.swizzle,
                                       mp.l2, what=what)
        if len(_MAP_CACHE) >= _MAP_CACHE_SIZE:
            _MAP_CACHE.pop(next(iter(_MAP_CACHE)))
        raw = _MAP_CACHE[key] = tensor_map_arg(tmap)
    return raw
