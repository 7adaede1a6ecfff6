"""Tensor maps under the CUDA emulator: the emulator's 128-byte record of a map
(``tvm_cuda_emu::TensorMap`` in ``emu/tvm_cuda_emu.h``), a map the caller encoded for a CPU
array (:class:`EmulatedTensorMap`) and one a launch derives from an array argument
(:class:`TensorMapArg`). :mod:`.emulator` re-exports the public names."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

__all__ = ["VIEW", "EmulatedTensorMap", "MapParams", "TensorMapArg", "encoded_tensor_map",
           "map_params"]

#: the marker in a derived map's params after which its view geometry follows (map_params)
VIEW = "view"

# the element sizes of the dtypes a tensor map has (runtime.TMA_DTYPES)
_TMA_ELEM_BYTES = {"bool": 1, "uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
                   "uint16": 2, "int16": 2, "float16": 2, "bfloat16": 2, "uint32": 4, "int32": 4,
                   "float32": 4, "uint64": 8, "int64": 8, "float64": 8}


_MAP_MAGIC = 0x504D4554  # tvm_cuda_emu::kTensorMapMagic
_MAP_HEAD = struct.Struct("<4I2Q")  # magic, rank, element bytes, swizzle bytes, base, extent
#: tvm_cuda_emu::TmaDtype: the element types a TMA reduction computes in (others: 0, raw bytes)
_TMA_DTYPE_CODES = {"float16": 1, "bfloat16": 2, "float32": 3, "float64": 4, "int32": 5,
                    "uint32": 6, "int64": 7, "uint64": 8}


class MapParams:
    """The params of a tensor map a launch derives from an array (``cuda.tensor_map``):
    ``[dtype, swizzle mode, l2 promotion, *box]`` (box outermost first) for a map of the array
    as it is, then optionally ``"view", *dims, *strides`` for a map of another geometry over
    the array's memory from its first element (the seed's host-side encode with its own dims:
    dims outermost first, strides in bytes of all dims but the innermost, outermost first)."""

    __slots__ = ("box", "dims", "dtype", "l2", "strides", "swizzle")

    def __init__(self, params: Sequence[Any]) -> None:
        params = list(params)
        self.dtype, self.swizzle, self.l2 = str(params[0]), int(params[1]), int(params[2])
        rest = params[3:]
        cut = next((i for i, p in enumerate(rest) if isinstance(p, str) and p == VIEW), None)
        self.dims: list[int] | None = None
        self.strides: list[int] | None = None
        if cut is None:
            self.box = [int(b) for b in rest]
            return
        self.box = [int(b) for b in rest[:cut]]
        geometry = [int(x) for x in rest[cut + 1:]]
        rank = len(self.box)
        if len(geometry) != 2 * rank - 1:
            raise ValueError(f"a tensor map view of rank {rank} has {rank} dims and {rank - 1} "
                             f"strides, got {geometry}")
        self.dims, self.strides = geometry[:rank], geometry[rank:]

    def view_bytes(self, elem: int) -> int:
        """The bytes from the array's start that the view reaches (0 for an empty one)."""
        assert self.dims is not None and self.strides is not None
        if any(d == 0 for d in self.dims):
            return 0
        return (sum((d - 1) * s for d, s in zip(self.dims[:-1], self.strides))
                + self.dims[-1] * elem)


def map_params(params: Sequence[Any]) -> MapParams:
    """The parsed params of a derived tensor map (:class:`MapParams`)."""
    return MapParams(params)


def _map_record(base: int, extent: int, dtype: str, swizzle: int, dims: Sequence[int],
                box: Sequence[int], strides: Sequence[int], name: str) -> bytes:
    """The 128 bytes of a ``tvm_cuda_emu::TensorMap``: ``dims``, ``box`` innermost first,
    ``strides`` in bytes of dims 1.. (innermost first), the array of ``dtype`` at ``base``
    spanning ``extent`` bytes."""
    pad5 = lambda xs: [*xs, *[0] * (5 - len(xs))]  # noqa: E731
    data = struct.pack("<4I2Q5I5I4Q16sI", _MAP_MAGIC, len(dims), _TMA_ELEM_BYTES[dtype],
                       swizzle, base, extent, *pad5(list(dims)), *pad5(list(box)),
                       *(list(strides) + [0] * 4)[:4], name.encode()[:15],
                       _TMA_DTYPE_CODES.get(dtype, 0))
    return data.ljust(128, b"\0")


class EmulatedTensorMap(bytes):
    """A tensor map the caller encoded for the CUDA emulator (what
    :func:`~tvm_backend_cuda.dispatch.tma_utils.encode_tensor_map` returns for a CPU array):
    the emulator's 128-byte record of the array's address, shape, strides, box and swizzle. A
    launch stages the bytes it spans (sharing the copy of a pointer argument that holds them)
    and points the record at the staged copy."""


def encoded_tensor_map(ptr: int, shape: Sequence[int], strides: Sequence[int], dtype: str,
                       box: Sequence[int], swizzle: int, name: str = "") -> EmulatedTensorMap:
    """The emulator's map of the CPU array at address ``ptr`` (``shape``, ``strides`` in
    elements and ``box``, outermost first; swizzle mode 0 to 3), already checked as
    ``cuTensorMapEncodeTiled`` checks it (:func:`~tvm_backend_cuda.tensor_map.
    encode_tiled_tensor_map`)."""
    elem = _TMA_ELEM_BYTES[dtype]
    extent = (sum((int(n) - 1) * int(s) for n, s in zip(shape, strides)) + 1) * elem
    if any(int(n) == 0 for n in shape):
        extent = 0
    record = _map_record(int(ptr), extent, dtype, (0, 32, 64, 128)[int(swizzle)],
                         [int(x) for x in reversed(shape)], [int(b) for b in reversed(box)],
                         [int(s) * elem for s in reversed(strides[:-1])], name or "tensor map")
    return EmulatedTensorMap(record)


def _encoded_map(data: bytes) -> tuple[int, int] | None:
    """(base, extent) of an emulator record in ``data``, None for another 128-byte map."""
    if len(data) != 128:
        return None
    magic, _, _, _, base, extent = _MAP_HEAD.unpack_from(data)
    return (base, extent) if magic == _MAP_MAGIC else None


class TensorMapArg:
    """A tensor map a launch derives from ``array`` (the runtime's ``cuda.tensor_map`` kind, with
    ``params`` ``[dtype, swizzle mode, l2 promotion, *box]``, box outermost first). The launch
    stages the array like a pointer argument and passes the emulator's record of the map
    (``tvm_cuda_emu::TensorMap``) in the 128 bytes of the ``CUtensorMap`` parameter."""

    __slots__ = ("array", "params", "what")

    def __init__(self, array: Any, params: Sequence[Any], what: str = "the array") -> None:
        self.array = array
        self.params = tuple(params)
        self.what = what

    def check_address(self, arr: Any) -> None:
        """The caller's array must start where a GPU's TMA can (the launch runs on an aligned
        copy, which would hide it)."""
        if arr.ctypes.data % 16:
            raise ValueError(f"{self.what}: TMA needs a 16-byte aligned address; the array "
                             f"starts at {arr.ctypes.data:#x} (pass a freshly allocated or "
                             ".clone()d array)")

    def record(self, arr: Any, base: int) -> bytes:
        """The map's 128-byte record for the staged numpy array ``arr`` at address ``base``."""
        mp = map_params(self.params)
        dtype, mode, box = mp.dtype, mp.swizzle, mp.box
        elem = _TMA_ELEM_BYTES.get(dtype)
        if mp.dims is not None:
            return self._view_record(arr, base, mp, elem)
        rank = arr.ndim
        if elem is None or elem != arr.itemsize:
            raise ValueError(f"{self.what}: a {dtype} tensor map of an array of "
                             f"{arr.itemsize}-byte elements")
        if not 1 <= rank <= 5 or len(box) != rank:
            raise ValueError(f"{self.what}: a tensor map has 1 to 5 dims and a box extent each; "
                             f"got shape {list(arr.shape)}, box {box}")
        if any(not 1 <= b <= 256 for b in box):
            raise ValueError(f"{self.what}: TMA box extents are 1 to 256; got {box}")
        if mode not in (0, 1, 2, 3):
            raise ValueError(f"{self.what}: swizzle mode {mode} (0 to 3)")
        swizzle = (0, 32, 64, 128)[mode]
        if swizzle and box[-1] * elem > swizzle:
            raise ValueError(f"{self.what}: the box's inner extent ({box[-1] * elem} bytes) "
                             f"exceeds the {swizzle}-byte swizzle")
        if arr.strides[-1] != elem and arr.shape[-1] > 1:
            raise ValueError(f"{self.what}: TMA reads the innermost dim contiguously")
        strides = [int(st) for st in reversed(arr.strides[:-1])]
        if any(st % 16 for st in strides):
            raise ValueError(f"{self.what}: TMA needs every stride but the innermost to be a "
                             f"multiple of 16 bytes; the array has strides {list(arr.strides)}")
        dims = [int(x) for x in reversed(arr.shape)]
        return _map_record(base, arr.nbytes, dtype, swizzle, dims, list(reversed(box)),
                           strides, self._name())

    def _name(self) -> str:
        return self.what.rpartition("'")[0].rpartition("'")[2] or "tensor map"

    def _view_record(self, arr: Any, base: int, mp: MapParams, elem: int | None) -> bytes:
        """The record of a map of its own geometry over the array's memory, checked to stay
        inside the array (the compiler checked the encode's rules)."""
        assert mp.dims is not None and mp.strides is not None
        if elem is None or elem != arr.itemsize:
            raise ValueError(f"{self.what}: a {mp.dtype} tensor map of an array of "
                             f"{arr.itemsize}-byte elements")
        if not arr.flags.c_contiguous:
            raise ValueError(f"{self.what}: a tensor map with its own dims and strides views "
                             "a contiguous array (pass a .contiguous() one)")
        reach = mp.view_bytes(elem)
        if reach > arr.nbytes:
            raise ValueError(f"{self.what}: the tensor map's dims {mp.dims} and byte strides "
                             f"{mp.strides} reach {reach} bytes, but the array has "
                             f"{arr.nbytes}")
        swizzle = (0, 32, 64, 128)[mp.swizzle]
        return _map_record(base, arr.nbytes, mp.dtype, swizzle, list(reversed(mp.dims)),
                           list(reversed(mp.box)), list(reversed(mp.strides)), self._name())
