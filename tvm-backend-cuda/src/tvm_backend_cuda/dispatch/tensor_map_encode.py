"""The seed's host-side tensor-map encode, ``T.call_packed("runtime.cuTensorMapEncodeTiled",
map, dtype, rank, A.data, *global_dims, *global_strides, *box_dims, *element_strides,
interleave, swizzle, l2_promotion, oob_fill)`` (dims and strides innermost first, strides in
bytes without the innermost, as ``cuTensorMapEncodeTiled`` takes them), lowered by core's
``lower_host_encodes`` (run by ``LowerKernelForm``) to the tensor map the runtime derives at launch from the array passed for
``A`` (:func:`~.copy_async.derived_tensor_map`). Its arguments are checked here, at the call's
line: what the launch-time encode would do differently (another array geometry, element
strides, interleave, an OOB fill) is refused with what to write instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm.ir import IntImm, StringImm
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
    raise ValueError(f"{_CALL}: {what} must be a constant integer, got {x}")


def encode_tiled(args: Sequence[Any], buffers: dict[int, Any]) -> Any:
    """The ``tirx.host_derived`` tensor map of ``cuTensorMapEncodeTiled``'s arguments (after
    the map); a ``ValueError`` names the argument that cannot be encoded so."""
    if len(args) < 3:
        raise ValueError(f"{_CALL} takes dtype, rank, address, dims, strides, box, element "
                         f"strides, interleave, swizzle, L2 promotion, OOB fill; got {len(args)} "
                         "arguments after the map")
    dtype = args[0].value if isinstance(args[0], StringImm) else args[0]
    if not isinstance(dtype, str) or dtype not in TMA_DTYPES:
        raise ValueError(f"{_CALL}: the element type must be a dtype string TMA knows "
                         f"({', '.join(sorted(TMA_DTYPES))}), got {dtype}")
    rank = _int(args[1], "the rank")
    if not 1 <= rank <= 5:
        raise ValueError(f"{_CALL}: a tensor map has rank 1 to 5, got {rank}")
    want = 4 * rank + 6
    if len(args) != want:
        raise ValueError(
            f"{_CALL}: rank {rank} takes {want} arguments after the map (dtype, rank, address, "
            f"{rank} dims, {rank - 1} strides, {rank} box dims, {rank} element strides, "
            f"interleave, swizzle, L2 promotion, OOB fill), got {len(args)}")
    buf = buffers.get(id(args[2]))
    if buf is None:
        raise ValueError(f"{_CALL}: the address must be a buffer argument's data (`A.data` "
                         f"of a parameter A), got {args[2]}")
    if str(buf.dtype) != dtype:
        raise ValueError(f"{_CALL}: the element type {dtype} is not {buf.name}'s "
                         f"({buf.dtype})")
    if len(buf.shape) != rank:
        raise ValueError(f"{_CALL}: rank {rank} but {buf.name} has {len(buf.shape)} "
                         "dimension(s)")
    pos = 3
    dims, pos = list(args[pos:pos + rank]), pos + rank
    strides, pos = list(args[pos:pos + rank - 1]), pos + rank - 1
    box, pos = [_int(b, "a box dim") for b in args[pos:pos + rank]], pos + rank
    elem, pos = [_int(e, "an element stride") for e in args[pos:pos + rank]], pos + rank
    interleave, swizzle, l2, oob = (_int(a, w) for a, w in zip(
        args[pos:], ("the interleave", "the swizzle", "the L2 promotion", "the OOB fill")))
    shape_inner_first = list(reversed(buf.shape))
    for d, (got, have) in enumerate(zip(dims, shape_inner_first)):
        if not structural_equal(got, have) and not (
                isinstance(got, IntImm) and isinstance(have, IntImm) and got.value == have.value):
            raise ValueError(f"{_CALL}: global dim {d} (innermost first) is {got} but "
                             f"{buf.name}'s is {have}; the launch encodes the array passed "
                             f"for {buf.name} with its own shape")
    eb = buf.dtype.bytes
    acc: Any = None
    for d, got in enumerate(strides):
        extent = shape_inner_first[d]
        acc = extent * eb if acc is None else acc * extent
        if isinstance(got, IntImm) and isinstance(acc, IntImm) and got.value != acc.value:
            raise ValueError(f"{_CALL}: global stride {d} is {got.value} bytes, but {buf.name} "
                             f"is row-major with {acc.value} (the launch uses the array's own "
                             "strides)")
    for d, b in enumerate(box):
        if not 1 <= b <= 256:
            raise ValueError(f"{_CALL}: box dim {d} is {b}; each is 1 to 256 elements")
    if any(e != 1 for e in elem):
        raise ValueError(f"{_CALL}: element strides {elem} are not supported (all 1)")
    if interleave != 0:
        raise ValueError(f"{_CALL}: interleave {interleave} is not supported (0, none)")
    if not 0 <= swizzle <= 3:
        raise ValueError(f"{_CALL}: swizzle is 0 (none), 1 (32B), 2 (64B) or 3 (128B), got "
                         f"{swizzle}")
    if swizzle and box[0] * eb > swizzle_bytes(SwizzleMode(swizzle)):
        raise ValueError(f"{_CALL}: the inner box dim is {box[0] * eb} bytes, more than the "
                         f"{swizzle_bytes(SwizzleMode(swizzle))}-byte swizzle span")
    if (box[0] * eb) % 16:
        raise ValueError(f"{_CALL}: the inner box dim is {box[0] * eb} bytes; TMA needs a "
                         "multiple of 16")
    if not 0 <= l2 <= 3:
        raise ValueError(f"{_CALL}: L2 promotion is 0 to 3 (none, 64B, 128B, 256B), got {l2}")
    if oob != 0:
        raise ValueError(f"{_CALL}: OOB fill {oob} is not supported (0: out-of-bounds "
                         "elements read as zero)")
    return derived_tensor_map(buf, list(reversed(box)), SwizzleMode(swizzle), l2)


def register() -> None:
    HOST_ENCODERS.register(ENCODE_TILED, encode_tiled)
