"""Tensor maps under the CUDA emulator: the emulator's 128-byte record of a map
(``tvm_cuda_emu::TensorMap`` in ``emu/tvm_cuda_emu.h``), a map the caller encoded for a CPU
array (:class:`EmulatedTensorMap`) and one a launch derives from an array argument
(:class:`TensorMapArg`). :mod:`.emulator` re-exports the public names."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

__all__ = ["EmulatedTensorMap", "TensorMapArg", "encoded_tensor_map"]

# the element sizes of the dtypes a tensor map has (runtime.TMA_DTYPES)
_TMA_ELEM_BYTES = {"bool": 1, "uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
                   "uint16": 2, "int16": 2, "float16": 2, "bfloat16": 2, "uint32": 4, "int32": 4,
                   "float32": 4, "uint64": 8, "int64": 8, "float64": 8}


_MAP_MAGIC = 0x504D4554  # tvm_cuda_emu::kTensorMapMagic
_MAP_HEAD = struct.Struct("<4I2Q")  # magic, rank, element bytes, swizzle bytes, base, extent
#: tvm_cuda_emu::TmaDtype: the element types a TMA reduction computes in (others: 0, raw bytes)
_TMA_DTYPE_CODES = {"float16": 1, "bfloat16": 2, "float32": 3, "float64": 4, "int32": 5,
                    "uint32": 6, "int64": 7, "uint64": 8}


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
        dtype, mode = str(self.params[0]), int(self.params[1])
        box = [int(b) for b in self.params[3:]]
        elem = _TMA_ELEM_BYTES.get(dtype)
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
        name = self.what.rpartition("'")[0].rpartition("'")[2] or "tensor map"
        return _map_record(base, arr.nbytes, dtype, swizzle, dims, list(reversed(box)),
                           strides, name)
