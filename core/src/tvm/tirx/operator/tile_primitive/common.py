"""Helpers shared by dispatch variants: op-kind enums, static argument reading, constant-folding
index arithmetic, operand broadcasting and compute data types.

Backend variants may use these too; they depend only on ``tvm.ir`` and ``tvm.arith``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from .... import ir
from ....arith import Analyzer
from ....error import DispatchFail
from .ops import get_spec

__all__ = [
    "MapOpType", "Operand", "ReduceOpType", "RowReduction", "bound_args", "broadcast_map", "cast_to",
    "compute_dtype", "expr_equal", "fold_add", "fold_mul", "gemm_args", "is_one", "no_scale_factors", "normalize_axes",
    "region_of", "row_reduction", "simplify_regions", "static_bool", "static_float", "static_int", "static_ints",
    "unflatten",
]


class MapOpType(enum.Enum):
    """Element-wise op kinds (the compose ops' ``op`` arguments name one of these)."""

    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    FDIV = "fdiv"
    MAX = "maximum"
    MIN = "minimum"
    FILL = "fill"
    RECIPROCAL = "reciprocal"
    EXP = "exp"
    EXP2 = "exp2"
    LOG = "log"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    ABS = "abs"
    NEG = "neg"
    SILU = "silu"
    TANH = "tanh"
    SIGMOID = "sigmoid"
    RELU = "relu"

    @classmethod
    def parse(cls, value: Any) -> MapOpType:
        return _parse_enum(cls, value, {"div": "fdiv", "max": "maximum", "min": "minimum"})


class ReduceOpType(enum.Enum):
    """Reduction kinds (``sum``, ``max``, ``min``)."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"

    @classmethod
    def parse(cls, value: Any) -> ReduceOpType:
        return _parse_enum(cls, value, {"add": "sum", "maximum": "max", "minimum": "min"})

    def combine(self, acc: ir.PrimExpr, value: ir.PrimExpr) -> ir.PrimExpr:
        """``acc`` combined with ``value``: their sum, maximum or minimum."""
        if self is ReduceOpType.SUM:
            return acc + value
        return ir.Max(acc, value) if self is ReduceOpType.MAX else ir.Min(acc, value)

    def identity(self, dtype: Any) -> ir.PrimExpr:
        """The start value in ``dtype``: 0 for a sum; for max (min) -inf (+inf), or the
        smallest (largest) integer of an integer type."""
        d = ir.DataType(str(dtype))
        if self is ReduceOpType.SUM:
            return ir.const(0, d)
        if d.is_float:
            return ir.FloatImm(d, float("-inf") if self is ReduceOpType.MAX else float("inf"))
        bits = d.bits
        if d.is_uint:
            return ir.IntImm(d, 0 if self is ReduceOpType.MAX else (1 << bits) - 1)
        return ir.IntImm(d, -(1 << (bits - 1)) if self is ReduceOpType.MAX
                         else (1 << (bits - 1)) - 1)


def _parse_enum(cls: Any, value: Any, aliases: dict[str, str]) -> Any:
    if isinstance(value, cls):
        return value
    if isinstance(value, enum.Enum):
        value = value.name
    if isinstance(value, ir.StringImm):
        value = value.value
    if not isinstance(value, str):
        raise TypeError(f"expected a {cls.__name__} or its name, got {type(value).__name__} {value!r}")
    key = value.lower()
    key = aliases.get(key, key)
    for member in cls:
        if member.value == key or member.name.lower() == key:
            return member
    raise ValueError(f"unknown {cls.__name__} {value!r}; expected one of {[m.value for m in cls]}")


# -- reading a call's arguments -------------------------------------------------------------------
def bound_args(call: ir.TilePrimitiveCall) -> dict[str, Any]:
    """The call's arguments by parameter name, missing trailing ones from the op's defaults."""
    spec = get_spec(call.op.name)
    if len(call.args) > len(spec.params):
        raise TypeError(f"{call.op.name}: {len(call.args)} arguments for parameters {spec.params}")
    out: dict[str, Any] = {}
    for i, name in enumerate(spec.params):
        if i < len(call.args):
            out[name] = call.args[i]
        elif name in spec.defaults:
            out[name] = spec.defaults[name]
        else:
            raise TypeError(f"{call.op.name}: missing argument {name!r} ({spec.signature()})")
    return out


def static_int(value: Any, what: str = "value") -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, ir.IntImm):
        return value.value
    raise DispatchFail(f"{what} must be a constant integer, got {value!r}")


def static_ints(value: Any, what: str = "value") -> list[int]:
    if isinstance(value, (list, tuple)):
        return [static_int(v, what) for v in value]
    return [static_int(value, what)]


def static_bool(value: Any, what: str = "flag") -> bool:
    if value is None:
        return False
    return bool(static_int(value, what))


def gemm_args(call: ir.TilePrimitiveCall, *, block_scaled: bool = False
              ) -> tuple[dict[str, Any], bool, bool]:
    """A ``gemm``/``gemm_async`` call's arguments by name (:func:`bound_args`) and its constant
    ``transpose_A``, ``transpose_B`` flags (:func:`static_bool`), the start of every GEMM
    variant. A variant that does not do block-scaled MMA (``block_scaled=False``) declines a
    call with scale factors (``SFA``/``SFB``)."""
    x = bound_args(call)
    if not block_scaled:
        no_scale_factors(x)
    return (x, static_bool(x["transpose_A"], "transpose_A"),
            static_bool(x["transpose_B"], "transpose_B"))


def no_scale_factors(x: dict[str, Any]) -> None:
    """Decline a ``gemm_async`` whose bound arguments ``x`` carry scale factors."""
    if x.get("SFA") is not None or x.get("SFB") is not None:
        raise DispatchFail("the call is block-scaled (SFA/SFB), which this variant does not do",
                           fix="block-scaled MMA is tcgen05's (sm_100a, dispatch='tcgen05')")


def static_float(value: Any) -> float | None:
    """The Python value of a constant number, or None when it is not a constant."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (ir.IntImm, ir.FloatImm)):
        return float(value.value)
    return None


def normalize_axes(axes: Any, ndim: int) -> list[int]:
    """Sorted, de-duplicated axes in ``[0, ndim)``; negative axes count from the end."""
    out = set()
    for a in static_ints(axes, "axes"):
        b = a + ndim if a < 0 else a
        if not 0 <= b < ndim:
            raise DispatchFail(f"axis {a} is out of range for a source of rank {ndim}")
        out.add(b)
    return sorted(out)


# -- constant-folding arithmetic --------------------------------------------------------------------
def _int(e: Any) -> int | None:
    if isinstance(e, int):
        return e
    if isinstance(e, ir.IntImm):
        return e.value
    return None


def is_one(e: Any) -> bool:
    return _int(e) == 1


def expr_equal(a: Any, b: Any) -> bool:
    """Whether two extents are equal: as constants, structurally, or because their difference
    simplifies to 0 (``(i + 1) * 32 - i * 32`` equals ``32``)."""
    ia, ib = _int(a), _int(b)
    if ia is not None and ib is not None:
        return ia == ib
    a_, b_ = ir.convert(a), ir.convert(b)
    return ir.structural_equal(a_, b_) or Analyzer().can_prove_equal(a_, b_)


def simplify_regions(call: ir.TilePrimitiveCall) -> ir.TilePrimitiveCall:
    """``call`` with the extents of its region arguments simplified, so that a slice written
    ``A[i * 32:(i + 1) * 32]`` has extent ``32`` before any variant checks shapes (the call
    itself when nothing changes)."""
    args = [_simplified_region(a) if isinstance(a, ir.BufferRegion) else a for a in call.args]
    if all(x is y for x, y in zip(args, call.args)):
        return call
    return call.replace(args=args)


def _simplified_region(region: ir.BufferRegion) -> ir.BufferRegion:
    """Extents that simplify to a constant become that constant; others stay as written (the
    analyzer's canonical form, ``k * -1 + 64`` for ``64 - k``, would only print worse)."""
    if all(isinstance(r.extent, ir.IntImm) for r in region.region):
        return region
    ana = Analyzer()
    ranges = []
    for r in region.region:
        ext = r.extent if isinstance(r.extent, ir.IntImm) else ana.simplify(r.extent)
        ranges.append(ir.Range(r.min, ext) if isinstance(ext, ir.IntImm) and ext is not r.extent
                      else r)
    if all(r is o for r, o in zip(ranges, region.region)):
        return region
    return ir.BufferRegion(region.buffer, ranges)


def fold_add(a: Any, b: Any) -> ir.PrimExpr:
    ia, ib = _int(a), _int(b)
    if ia is not None and ib is not None:
        return ir.const(ia + ib, "int32")
    if ia == 0:
        return ir.convert(b)
    if ib == 0:
        return ir.convert(a)
    return ir.convert(a) + ir.convert(b)


def fold_mul(a: Any, b: Any) -> ir.PrimExpr:
    ia, ib = _int(a), _int(b)
    if ia is not None and ib is not None:
        return ir.const(ia * ib, "int32")
    if ia == 1:
        return ir.convert(b)
    if ib == 1:
        return ir.convert(a)
    return ir.convert(a) * ir.convert(b)


def fold_product(values: Sequence[Any]) -> ir.PrimExpr:
    out: ir.PrimExpr = ir.const(1, "int32")
    for v in values:
        out = fold_mul(out, v)
    return out


# -- data types ------------------------------------------------------------------------------------
def compute_dtype(dtypes: Sequence[ir.DataType], *, needs_float: bool = False) -> ir.DataType:
    """The type to compute in: float64 if any input is float64; float32 if any is a narrower
    float (float16/bfloat16/float8 are widened, then the result is cast back) or the op needs
    floats; otherwise the widest integer type."""
    floats = [d for d in dtypes if d.is_float]
    if any(d.bits == 64 for d in floats):
        return ir.DataType("float64")
    if floats or needs_float:
        return ir.DataType("float32")
    ints = [d for d in dtypes if d.is_integer]
    if not ints:
        return ir.DataType("int32") if not dtypes else dtypes[0].element_of()
    return max(ints, key=lambda d: (d.bits, d.is_int))


def cast_to(e: ir.PrimExpr, dtype: ir.DataType) -> ir.PrimExpr:
    """``e`` as ``dtype``; constants are rebuilt rather than wrapped in a Cast."""
    if e.dtype == dtype:
        return e
    if isinstance(e, (ir.IntImm, ir.FloatImm)) and (dtype.is_float or dtype.is_integer
                                                    or dtype.is_bool):
        if dtype.is_float:
            return ir.FloatImm(dtype, float(e.value))
        if float(e.value).is_integer() or dtype.is_bool:
            return ir.IntImm(dtype, int(e.value))
    return ir.Cast(dtype, e)


# -- operands -------------------------------------------------------------------------------------
def region_of(arg: ir.Buffer | ir.BufferRegion) -> ir.BufferRegion:
    if isinstance(arg, ir.Buffer):
        return arg.full_region()
    return arg


@dataclass(frozen=True)
class RowReduction:
    """A reduction call over the last axis of a 1-D or 2-D ``src`` with constant extents, into
    one value per row of ``dst`` (:func:`row_reduction` reads it off the call).

    ``rows`` is 1 for a 1-D ``src``; ``dst_axis`` is the axis of ``dst`` that runs over the rows
    (``None`` when there is a single row and ``dst`` is all ones)."""

    kind: ReduceOpType
    src: ir.BufferRegion
    dst: ir.BufferRegion
    accum: bool
    rows: int
    cols: int
    dst_axis: int | None

    @property
    def rank(self) -> int:
        return len(self.src.region)

    def load(self, row: ir.PrimExpr, col: ir.PrimExpr, dtype: Any) -> ir.PrimExpr:
        """Element ``(row, col)`` of the source region (``col`` alone for a 1-D one), cast to
        ``dtype``."""
        rel = [row, col] if self.rank == 2 else [col]
        return cast_to(ir.BufferLoad(self.src.buffer, region_indices(self.src, rel)), dtype)

    def store(self, row: ir.PrimExpr, value: ir.PrimExpr, dtype: Any) -> ir.Stmt:
        """The store of row ``row``'s result ``value`` (of ``dtype``) into ``dst``: combined
        with dst's old value (read as ``dtype``) under ``accum``, cast to dst's type."""
        idx = [fold_add(r.min, row) if d == self.dst_axis else r.min
               for d, r in enumerate(self.dst.region)]
        if self.accum:
            value = self.kind.combine(cast_to(ir.BufferLoad(self.dst.buffer, idx), dtype), value)
        return ir.BufferStore(self.dst.buffer, cast_to(value, self.dst.buffer.dtype), idx)


def row_reduction(call: ir.TilePrimitiveCall) -> RowReduction:
    """The row reduction ``call`` (``sum``/``max``/``min``...) is, or :class:`DispatchFail` with
    what rules it out: the rank, the axes, non-constant extents, a ``dst`` that does not hold one
    value per row. Variants that reduce whole rows in parallel share this reading; they check
    data types themselves."""
    a = bound_args(call)
    src, dst = region_of(a["src"]), region_of(a["dst"])
    rank = len(src.region)
    if rank not in (1, 2):
        raise DispatchFail(f"src has rank {rank}; this variant reduces 1-D or 2-D regions")
    if normalize_axes(a["axes"], rank) != [rank - 1]:
        raise DispatchFail("this variant reduces the last axis only")
    extents = [_int(r.extent) for r in (*src.region, *dst.region)]
    if None in extents:
        raise DispatchFail("the extents of src and dst must be constants")
    src_ext, dst_ext = cast(list[int], extents[:rank]), cast(list[int], extents[rank:])
    rows, cols = (src_ext[0] if rank == 2 else 1), src_ext[-1]
    wide = [d for d, e in enumerate(dst_ext) if e != 1]
    if len(wide) > 1 or (wide and dst_ext[wide[0]] != rows) or (not wide and rows != 1):
        raise DispatchFail(f"dst extents {dst_ext} do not hold one value per row of src "
                           f"({rows} rows)")
    return RowReduction(ReduceOpType.parse(call.op_name), src, dst,
                        static_bool(a["accum"], "accum"), rows, cols, wide[0] if wide else None)


def broadcast_map(src: Sequence[Any], dst: Sequence[Any]) -> list[int | None]:
    """For each dimension of a source of extents ``src`` read at the element indices of a
    destination of extents ``dst``: the destination dimension it follows, or None (a unit
    dimension, read at its start).

    NumPy broadcasting (right-aligned; unit source dimensions repeat) is tried first; then
    shapes that differ only by unit dimensions are matched in order.
    """
    m, n = len(src), len(dst)
    if m <= n:
        out: list[int | None] = []
        for k in range(m):
            d = k + n - m
            if is_one(src[k]):
                out.append(None)
            elif expr_equal(src[k], dst[d]):
                out.append(d)
            else:
                break
        else:
            return out
    s_big = [k for k in range(m) if not is_one(src[k])]
    d_big = [d for d in range(n) if not is_one(dst[d])]
    if len(s_big) == len(d_big) and all(expr_equal(src[k], dst[d]) for k, d in zip(s_big, d_big)):
        out = [None] * m
        for k, d in zip(s_big, d_big):
            out[k] = d
        return out
    raise DispatchFail(f"shape {_shape_text(src)} does not broadcast to {_shape_text(dst)}",
                       fix=broadcast_fix(src, dst))


def broadcast_fix(src: Sequence[Any], dst: Sequence[Any], name: str = "the source",
                  region: ir.BufferRegion | None = None) -> str:
    """How to make a source of extents ``src`` (``name``, reading ``region``) broadcast over a
    destination of extents ``dst``: the shape with unit dimensions that lines its extents up
    with dst's axes (and, for a whole buffer, the view that has it), or what must match."""
    axes = _in_order_axes(src, dst)
    if axes is None:
        off = len(dst) - len(src)
        bad = [k for k in range(len(src)) if not is_one(src[k])
               and (k + off < 0 or not expr_equal(src[k], dst[k + off]))]
        where = "" if not bad else (
            f" (dimension {bad[-1]} of {name} is {src[bad[-1]]} where dst has "
            f"{dst[bad[-1] + off] if bad[-1] + off >= 0 else 'no dimension'})")
        return (f"{name}'s extents {_shape_text(src)} must line up with dst's {_shape_text(dst)} "
                "as in NumPy: from the last dimension backwards, each extent equal to dst's or "
                f"1 (a unit dimension repeats){where}; check the slice or the declared shape of "
                f"{name}")
    shape: list[Any] = [1] * len(dst)
    for k, d in zip([k for k in range(len(src)) if not is_one(src[k])], axes):
        shape[d] = src[k]
    where = ", ".join(str(d) for d in axes)
    text = (f"give {name} the shape {_shape_text(shape)} (its extents on dst's "
            f"ax{'is' if len(axes) == 1 else 'es'} {where}, 1 elsewhere)")
    buf = region.buffer if region is not None else None
    if buf is not None and _whole(region):
        dims = ", ".join(str(e) for e in shape) + ("," if len(shape) == 1 else "")
        text += (f"; T.decl_buffer(({dims}), \"{buf.dtype}\", data={buf.name}.data) is that "
                 f"view of {buf.name}")
    return text


def _in_order_axes(src: Sequence[Any], dst: Sequence[Any]) -> list[int] | None:
    """The dst axes that src's non-unit extents equal, in order, or None."""
    out: list[int] = []
    d = 0
    for k in range(len(src)):
        if is_one(src[k]):
            continue
        while d < len(dst) and not expr_equal(src[k], dst[d]):
            d += 1
        if d == len(dst):
            return None
        out.append(d)
        d += 1
    return out


def _whole(region: ir.BufferRegion | None) -> bool:
    return region is not None and all(
        _int(r.min) == 0 and expr_equal(r.extent, e)
        for r, e in zip(region.region, region.buffer.shape))


def _shape_text(shape: Sequence[Any]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


class Operand:
    """A tile primitive's source: a buffer region read at broadcast indices, or a scalar
    expression (the same for every element)."""

    def __init__(self, arg: Any, name: str = "src") -> None:
        self.name = name
        self.region: ir.BufferRegion | None = None
        self.scalar: ir.PrimExpr | None = None
        if isinstance(arg, (ir.Buffer, ir.BufferRegion)):
            self.region = region_of(arg)
        elif isinstance(arg, (ir.PrimExpr, int, float, bool)):
            self.scalar = ir.convert(arg)
        else:
            raise DispatchFail(f"{name} must be a buffer, a region or a scalar, got {type(arg).__name__}")
        self._map: list[int | None] | None = None

    @property
    def dtype(self) -> ir.DataType:
        if self.region is not None:
            return self.region.buffer.dtype
        assert self.scalar is not None
        return self.scalar.dtype

    @property
    def is_scalar(self) -> bool:
        return self.scalar is not None

    def bind(self, dst_extents: Sequence[Any]) -> Operand:
        """Fix how this operand is read over a destination of ``dst_extents``."""
        if self.region is not None:
            try:
                self._map = broadcast_map(self.region.shape, dst_extents)
            except DispatchFail as err:
                fix = broadcast_fix(self.region.shape, dst_extents, self.name, self.region)
                raise DispatchFail(f"{self.name}: {err}", fix=fix) from None
        return self

    def load(self, idx: Sequence[ir.PrimExpr]) -> ir.PrimExpr:
        """The value at destination element ``idx`` (indices relative to the destination)."""
        if self.scalar is not None:
            return self.scalar
        assert self.region is not None and self._map is not None, "call bind() first"
        return ir.BufferLoad(self.region.buffer, self.indices(idx))

    def follows(self, dst_dim: int) -> bool:
        """Whether this operand's innermost dimension runs along destination dimension
        ``dst_dim`` (False where it is broadcast there: one element for all of it)."""
        assert self._map is not None, "call bind() first"
        return bool(self._map) and self._map[-1] == dst_dim

    def indices(self, idx: Sequence[ir.PrimExpr]) -> list[ir.PrimExpr]:
        assert self.region is not None and self._map is not None
        return [r.min if d is None else fold_add(r.min, idx[d])
                for r, d in zip(self.region.region, self._map)]


def region_indices(region: ir.BufferRegion, idx: Sequence[ir.PrimExpr]) -> list[ir.PrimExpr]:
    """Absolute indices of element ``idx`` (relative, one per dimension) of ``region``."""
    return [fold_add(r.min, i) for r, i in zip(region.region, idx)]


def unflatten(flat: ir.PrimExpr, extents: Sequence[ir.PrimExpr]) -> list[ir.PrimExpr]:
    """Row-major indices of position ``flat`` in a box of ``extents`` (0 on a unit axis; the
    first non-unit axis takes the whole quotient, unreduced)."""
    out: list[ir.PrimExpr] = []
    stride: ir.PrimExpr = ir.const(1, flat.dtype)
    first = next((d for d, e in enumerate(extents) if not is_one(e)), -1)
    for d in range(len(extents) - 1, -1, -1):
        ext = extents[d]
        if is_one(ext):
            out.append(ir.const(0, flat.dtype))
            continue
        q = flat if is_one(stride) else flat // stride
        out.append(q if d == first else q % ext)
        stride = fold_mul(stride, ext)
    return list(reversed(out))
