"""The seed's host-side tensor-map encode, ``T.call_packed("runtime.cuTensorMapEncodeTiled",
map, dtype, rank, A.data, *global_dims, *global_strides, *box_dims, *element_strides,
interleave, swizzle, l2_promotion, oob_fill)`` (dims and strides innermost first, strides in
bytes without the innermost, as ``cuTensorMapEncodeTiled`` takes them), lowered by core's
``lower_host_encodes`` (run by ``LowerKernelForm``) to the tensor map the runtime derives at launch from the array passed for
``A`` (:func:`~.copy_async.derived_tensor_map`). Constant dims and strides other than ``A``'s
own make a map of that geometry over the array's memory from its first element (checked to
fit in ``A``, here and at launch). Its arguments are checked here, at the call's line: what
the launch-time encode would do differently (symbolic dims other than the array's, element
strides, interleave, an OOB fill) is refused with what to write instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm.error import TensorMapEncodeError
from tvm.ir import DataType, IntImm, StringImm
from tvm.ir.structural import structural_equal
from tvm.tirx.op import HOST_ENCODERS

from ..runtime import TMA_DTYPES
from .copy_async import derived_tensor_map
from .tma_utils import SwizzleMode, swizzle_bytes

__all__ = ["ENCODE_TILED", "encode_tiled", "register"]

ENCODE_TILED = "runtime.cuTensorMapEncodeTiled"
_CALL = f"T.call_packed({ENCODE_TILED!r}, map, ...)"


def _int(x: Any, what: str) -> int:
    if isinstance(x, int):
        return x
    if isinstance(x, IntImm):
        return int(x.value)
    raise TensorMapEncodeError(f"{_CALL}: {what} must be a constant integer, got {x}")


def _check(ok: bool, seed: str, ours: str = "") -> None:
    """Refuse with the seed runtime's sentence for this rule (what its tests match), then ours
    (what the value was, what to write instead)."""
    if not ok:
        raise TensorMapEncodeError(f"{_CALL}: {seed}" + (f" ({ours})" if ours else ""))


def encode_tiled(args: Sequence[Any], buffers: dict[int, Any]) -> Any:
    """The ``tirx.host_derived`` tensor map of ``cuTensorMapEncodeTiled``'s arguments (after
    the map); a ``ValueError`` names the argument that cannot be encoded so, in the seed
    runtime's words first (``boxDim[1] must be less than or equal to 256``), then ours."""
    _check(len(args) >= 3, "init_cuTensorMap expects at least 4 arguments",
           f"it takes the map, dtype, rank, address, dims, strides, box, element strides, "
           f"interleave, swizzle, L2 promotion, OOB fill; got {len(args)} after the map")
    dtype = _element_type(args[0])
    rank = _int(args[1], "the rank")
    _check(rank > 0, "tensorRank must be non-zero", f"got {rank}; a tensor map has rank 1 to 5")
    _check(rank <= 5, "cuTensorMapEncodeTiled only supports up to 5D tensors",
           f"a tensor map has rank 1 to 5, got {rank}")
    want = 4 * rank + 6
    _check(len(args) == want, f"cuTensorMapEncodeTiled expects {want + 1} arguments",
           f"rank {rank} takes {want} arguments after the map (dtype, rank, address, {rank} dims, "
           f"{rank - 1} strides, {rank} box dims, {rank} element strides, interleave, swizzle, "
           f"L2 promotion, OOB fill), got {len(args)}")
    buf = buffers.get(id(args[2]))
    if buf is None:
        raise TensorMapEncodeError(f"{_CALL}: the address must be a buffer argument's data (`A.data` "
                         f"of a parameter A), got {args[2]}")
    if str(buf.dtype) != dtype:
        raise TensorMapEncodeError(f"{_CALL}: the element type {dtype} is not {buf.name}'s "
                         f"({buf.dtype})")
    pos = 3
    dims, pos = list(args[pos:pos + rank]), pos + rank
    strides, pos = list(args[pos:pos + rank - 1]), pos + rank - 1
    box, pos = [_int(b, "a box dim") for b in args[pos:pos + rank]], pos + rank
    elem, pos = [_int(e, "an element stride") for e in args[pos:pos + rank]], pos + rank
    interleave, swizzle, l2, oob = (_int(a, w) for a, w in zip(
        args[pos:], ("the interleave", "the swizzle", "the L2 promotion", "the OOB fill")))
    view = _view(buf, dims, strides)
    if view is None:  # the array's own geometry, whatever array is passed
        if len(buf.shape) != rank:
            raise TensorMapEncodeError(f"{_CALL}: rank {rank} but {buf.name} has "
                                       f"{len(buf.shape)} dimension(s) (and the map's dims are "
                                       "not constants, so it cannot be a view of its memory)")
        _check_dims(buf, dims)
        _check_strides(buf, strides)
    for d, b in enumerate(box):
        _check(b > 0, f"boxDim[{d}] must be non-zero", "each box dim is 1 to 256 elements")
        _check(b <= 256, f"boxDim[{d}] must be less than or equal to 256",
               f"box dim {d} is {b}; each is 1 to 256 elements")
    for d, e in enumerate(elem):
        _check(e > 0, f"elementStrides[{d}] must be non-zero")
        _check(e <= 8, f"elementStrides[{d}] must be less than or equal to 8")
    _check(all(e == 1 for e in elem), "elementStrides other than 1 are not supported here",
           f"element strides {elem} are not supported (all 1): the launch-time encode "
           f"steps through every element")
    _check(0 <= interleave <= 2, f"Unsupported interleave enum value: {interleave}")
    _check(interleave == 0 or rank >= 3,
           "tensorRank must be greater than or equal to 3 when interleave is not NONE")
    if interleave == 2:  # CU_TENSOR_MAP_INTERLEAVE_32B
        for d, st in enumerate(strides):
            _check(not isinstance(st, IntImm) or st.value % 32 == 0,
                   f"globalStrides[{d}] must be a multiple of 32",
                   "a 32-byte interleave needs 32-byte global strides")
    _check(interleave == 0, "interleave is not supported here",
           f"interleave {interleave} is not supported (0, none)")
    _check(0 <= swizzle <= 3, f"Unsupported swizzle enum value: {swizzle}",
           f"swizzle is 0 (none), 1 (32B), 2 (64B) or 3 (128B), got {swizzle}")
    _check(0 <= l2 <= 3, f"Unsupported l2Promotion enum value: {l2}",
           f"L2 promotion is 0 to 3 (none, 64B, 128B, 256B), got {l2}")
    _check(oob in (0, 1), f"Unsupported oobFill enum value: {oob}")
    _check(oob == 0 or buf.dtype.is_float,
           "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA requires a floating-point "
           "tensorDataType", f"{buf.name} is {buf.dtype}")
    _check(oob == 0, "an OOB NaN fill is not supported here",
           f"OOB fill {oob} is not supported (0: out-of-bounds elements read as zero)")
    inner = box[0] * buf.dtype.bytes
    _check(inner % 16 == 0, "boxDim[0] * elementSizeInBytes(tensorDataType) must be a multiple "
           "of 16 bytes", f"the inner box dim is {inner} bytes; TMA needs a multiple of 16")
    if swizzle:
        span = swizzle_bytes(SwizzleMode(swizzle))
        _check(inner <= span, f"CU_TENSOR_MAP_SWIZZLE_{span}B implies the bounding box inner "
               f"dimension will be <= {span}.",
               f"the inner box dim is {inner} bytes, more than the {span}-byte swizzle span")
    return derived_tensor_map(buf, list(reversed(box)), SwizzleMode(swizzle), l2, view)


def _element_type(arg: Any) -> str:
    dtype = arg.value if isinstance(arg, StringImm) else arg
    if isinstance(dtype, DataType):  # the script's tvm.DataType("float16")
        dtype = str(dtype)
    if isinstance(dtype, str) and dtype in TMA_DTYPES:
        return dtype
    if isinstance(dtype, str) and "x" in dtype:
        _check(False, f"Expect tensor_dtype to have lanes=1, but get {dtype}")
    _check(False, f"Unsupported data type {dtype}",
           f"the element type must be a dtype string TMA knows "
           f"({', '.join(sorted(TMA_DTYPES))})")
    return ""


def _view(buf: Any, dims: Sequence[Any], strides: Sequence[Any]
          ) -> tuple[list[int], list[int]] | None:
    """(dims, byte strides), outermost first, of an encode whose constant geometry is not
    ``buf``'s own (a 2-D map of a 1-D buffer, dims in another order): a map over the array's
    memory from its first element. None when the geometry is the buffer's, or symbolic."""
    if not all(isinstance(x, IntImm) for x in [*dims, *strides]):
        return None
    d = [int(x.value) for x in dims]
    st = [int(x.value) for x in strides]
    for k, n in enumerate(d):
        _check(n > 0, f"globalDim[{k}] must be non-zero")
        _check(n <= 1 << 32, f"globalDim[{k}] must be less than or equal to 2^32")
    for k, s in enumerate(st):
        _check(s >= 0, f"globalStrides[{k}] must be non-negative")
        _check(s % 16 == 0, "global strides must be multiple of 16",
               f"global stride {k} is {s} bytes")
        _check(s < 1 << 40, f"globalStrides[{k}] must be less than 2^40")
    shape = list(reversed(buf.shape))
    if len(shape) == len(d) and all(isinstance(x, IntImm) for x in shape):
        own = [int(x.value) for x in shape]
        acc, own_strides = buf.dtype.bytes, []
        for n in own[:-1]:
            acc *= n
            own_strides.append(acc)
        if own == d and own_strides == st:
            return None
    eb = buf.dtype.bytes
    reach = sum((n - 1) * s for n, s in zip(d[1:], st)) + d[0] * eb
    if all(isinstance(x, IntImm) for x in buf.shape):
        have = eb
        for x in buf.shape:
            have *= int(x.value)
        _check(reach <= have, f"the map does not fit in {buf.name}",
               f"its dims {d} (innermost first) and byte strides {st} reach {reach} bytes, "
               f"but {buf.name} has {have}")
    return list(reversed(d)), list(reversed(st))


def _check_dims(buf: Any, dims: Sequence[Any]) -> None:
    shape_inner_first = list(reversed(buf.shape))
    for d, (got, have) in enumerate(zip(dims, shape_inner_first)):
        if isinstance(got, IntImm):
            _check(got.value > 0, f"globalDim[{d}] must be non-zero")
            _check(got.value <= 1 << 32, f"globalDim[{d}] must be less than or equal to 2^32")
        same = structural_equal(got, have) or (
            isinstance(got, IntImm) and isinstance(have, IntImm) and got.value == have.value)
        _check(same, f"globalDim[{d}] is not {buf.name}'s",
               f"global dim {d} (innermost first) is {got} but {buf.name}'s is {have}; the "
               f"launch encodes the array passed for {buf.name} with its own shape")


def _check_strides(buf: Any, strides: Sequence[Any]) -> None:
    shape_inner_first = list(reversed(buf.shape))
    eb = buf.dtype.bytes
    acc: Any = None
    for d, got in enumerate(strides):
        extent = shape_inner_first[d]
        acc = extent * eb if acc is None else acc * extent
        if not isinstance(got, IntImm):
            continue
        _check(got.value >= 0, f"globalStrides[{d}] must be non-negative")
        _check(got.value % 16 == 0, "global strides must be multiple of 16",
               f"global stride {d} is {got.value} bytes")
        _check(got.value < 1 << 40, f"globalStrides[{d}] must be less than 2^40")
        _check(not isinstance(acc, IntImm) or got.value == acc.value,
               f"globalStrides[{d}] is not {buf.name}'s",
               f"global stride {d} is {got.value} bytes, but {buf.name} is row-major with "
               f"{getattr(acc, 'value', acc)} (the launch uses the array's own strides)")


def register() -> None:
    HOST_ENCODERS.register(ENCODE_TILED, encode_tiled)
