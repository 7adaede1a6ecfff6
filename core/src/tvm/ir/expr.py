"""Expressions (``PrimExpr``): variables, immediates, arithmetic, comparisons, logic, casts,
selects, buffer loads, vectors, lets and calls of registered ops."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Union

from .dtype import DataType, dtype_of
from .literal import FLOAT_MAX as FLOAT_MAX  # re-exported: E.int_range, E.FLOAT_MAX
from .literal import (
    _check_float_range,
    _check_range,
    _fits,
    _fold_bits_value,
    _fold_value,
    _wider,
)
from .literal import int_range as int_range
from .node import Node
from .op import Op
from .span import Span
from .type import Type, type_of_var, var_fields

if TYPE_CHECKING:
    from .buffer import Buffer, Range

__all__ = [
    "EQ", "GE", "GT", "LE", "LT", "NE",
    "Add", "And", "BinaryOp", "Broadcast", "BufferLoad", "Call", "Cast", "CmpOp", "CommReducer",
    "Div", "FloatImm", "FloorDiv", "FloorMod", "IndexLambda", "IntImm", "IterVar", "Let", "Max", "Min", "Mod",
    "Mul", "Not", "Or", "PrimExpr", "ProducerLoad", "Ramp", "Reduce", "Select", "Shuffle",
    "SizeVar", "StringImm", "Sub", "Var", "const", "convert",
]

ExprLike = Union["PrimExpr", int, float, bool]


class PrimExpr(Node):
    """A scalar or vector expression with a data type.

    Python operators build IR: ``a + 1`` is an :class:`Add`; ``a // b`` is :class:`FloorDiv`;
    ``a % b`` is :class:`FloorMod`; ``a == b`` is :class:`EQ`, whose truth value (for ``in`` and
    dict look-ups) is object identity.
    """

    #: where the node was written (the parser sets it on calls); not part of the structure:
    #: equality, hashing and printing ignore it, rewrites keep it
    span: Span | None = None

    dtype: DataType

    # arithmetic ------------------------------------------------------------------------------
    def __add__(self, o: ExprLike) -> PrimExpr:
        return _binary(Add, self, o)

    def __radd__(self, o: ExprLike) -> PrimExpr:
        return _binary(Add, o, self)

    def __sub__(self, o: ExprLike) -> PrimExpr:
        return _binary(Sub, self, o)

    def __rsub__(self, o: ExprLike) -> PrimExpr:
        return _binary(Sub, o, self)

    def __mul__(self, o: ExprLike) -> PrimExpr:
        return _binary(Mul, self, o)

    def __rmul__(self, o: ExprLike) -> PrimExpr:
        return _binary(Mul, o, self)

    def __truediv__(self, o: ExprLike) -> PrimExpr:
        return _binary(Div, self, o)

    def __rtruediv__(self, o: ExprLike) -> PrimExpr:
        return _binary(Div, o, self)

    def __floordiv__(self, o: ExprLike) -> PrimExpr:
        return _binary(FloorDiv, self, o)

    def __rfloordiv__(self, o: ExprLike) -> PrimExpr:
        return _binary(FloorDiv, o, self)

    def __mod__(self, o: ExprLike) -> PrimExpr:
        return _binary(FloorMod, self, o)

    def __rmod__(self, o: ExprLike) -> PrimExpr:
        return _binary(FloorMod, o, self)

    def __neg__(self) -> PrimExpr:
        zero = IntImm(self.dtype, 0) if not self.dtype.is_float else FloatImm(self.dtype, 0.0)
        return Sub(zero, self)

    # bitwise / logic ---------------------------------------------------------------------------
    def __and__(self, o: ExprLike) -> PrimExpr:
        if _is_bool(self) and _is_bool(o):
            return And(self, convert(o))
        return _bit_call("bitwise_and", self, o, fold=True)

    def __rand__(self, o: ExprLike) -> PrimExpr:
        return convert(o).__and__(self)

    def __or__(self, o: ExprLike) -> PrimExpr:
        if _is_bool(self) and _is_bool(o):
            return Or(self, convert(o))
        return _bit_call("bitwise_or", self, o, fold=True)

    def __ror__(self, o: ExprLike) -> PrimExpr:
        return convert(o).__or__(self)

    def __xor__(self, o: ExprLike) -> PrimExpr:
        return _bit_call("bitwise_xor", self, o, fold=True)

    def __rxor__(self, o: ExprLike) -> PrimExpr:
        return _bit_call("bitwise_xor", o, self, fold=True)

    def __lshift__(self, o: ExprLike) -> PrimExpr:
        return _bit_call("shift_left", self, o, fold=True)

    def __rlshift__(self, o: ExprLike) -> PrimExpr:
        return _bit_call("shift_left", o, self, fold=True)

    def __rshift__(self, o: ExprLike) -> PrimExpr:
        return _bit_call("shift_right", self, o, fold=True)

    def __rrshift__(self, o: ExprLike) -> PrimExpr:
        return _bit_call("shift_right", o, self, fold=True)

    def __invert__(self) -> PrimExpr:
        if self.dtype.is_bool:
            return Not(self)
        if isinstance(self, IntImm) and self.dtype.lanes == 1 and self.dtype.is_integer:
            mask = 2**self.dtype.bits - 1
            return IntImm(self.dtype, ~self.value & mask if self.dtype.is_uint else ~self.value)
        return Call(self.dtype, Op.get("tirx.bitwise_not"), [self])

    # comparisons ---------------------------------------------------------------------------
    def __lt__(self, o: ExprLike) -> PrimExpr:
        return _binary(LT, self, o)

    def __le__(self, o: ExprLike) -> PrimExpr:
        return _binary(LE, self, o)

    def __gt__(self, o: ExprLike) -> PrimExpr:
        return _binary(GT, self, o)

    def __ge__(self, o: ExprLike) -> PrimExpr:
        return _binary(GE, self, o)

    def __eq__(self, o: object) -> Any:  # type: ignore[override]
        if not isinstance(o, (PrimExpr, int, float, bool)):
            return False
        return _binary(EQ, self, o)

    def __ne__(self, o: object) -> Any:  # type: ignore[override]
        if not isinstance(o, (PrimExpr, int, float, bool)):
            return True
        return _binary(NE, self, o)

    __hash__ = Node.__hash__

    def __bool__(self) -> bool:
        raise TypeError(
            f"an IR expression ({type(self).__name__}) has no Python truth value; use it inside "
            "a TVMScript function, or compare with tvm.ir.structural_equal"
        )

    def astype(self, dtype: str | DataType) -> PrimExpr:
        dt = DataType(dtype)
        return self if dt == self.dtype else Cast(dt, self)


# -- leaves --------------------------------------------------------------------------------------
class Var(PrimExpr):
    """A variable. ``ptr_dtype``/``ptr_scope`` describe what a handle variable points to."""

    _fields = ("dtype", "ptr_dtype", "ptr_scope")

    def __init__(self, name: str, dtype: Any = "int32", *,
                 ptr_dtype: str | DataType | None = None, ptr_scope: str | None = None) -> None:
        if isinstance(dtype, Type):  # tvm.ir.type: PrimType, PointerType, TensorMapType
            fields = var_fields(dtype)
            dtype = fields["dtype"]
            ptr_dtype = ptr_dtype if ptr_dtype is not None else fields["ptr_dtype"]
            ptr_scope = ptr_scope if ptr_scope is not None else fields["ptr_scope"]
        self.name = name
        self.dtype = DataType(dtype)
        self.ptr_dtype = DataType(ptr_dtype) if ptr_dtype is not None else None
        self.ptr_scope = ptr_scope

    @property
    def ty(self) -> Type:
        """The variable's type as the seed spells it: a :class:`~tvm.ir.PrimType`, a
        :class:`~tvm.ir.PointerType` (a handle to ``ptr_dtype`` memory) or a
        :class:`~tvm.ir.TensorMapType` (a grid-constant TMA descriptor)."""
        return type_of_var(self.dtype, self.ptr_dtype, self.ptr_scope)

    def __repr__(self) -> str:
        return self.name


class SizeVar(Var):
    """A variable known to be non-negative (a size): the analyzer bounds it below by 0."""

    def __repr__(self) -> str:
        return self.name


class IntImm(PrimExpr):
    _fields = ("dtype", "value")

    def __init__(self, dtype: str | DataType, value: int) -> None:
        self.dtype = DataType(dtype)
        self.value = int(value)
        if self.dtype.is_bool:
            self.value = 1 if value else 0
        elif self.dtype.is_integer:
            _check_range(self.dtype, self.value)

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __bool__(self) -> bool:
        # a constant has a truth value, as in Apache TVM (what a simplified comparison gives)
        return self.value != 0


class FloatImm(PrimExpr):
    _fields = ("dtype", "value")

    def __init__(self, dtype: str | DataType, value: float) -> None:
        self.dtype = DataType(dtype)
        self.value = float(value)

    def __float__(self) -> float:
        return self.value


class StringImm(PrimExpr):
    _fields = ("value",)

    def __init__(self, value: str) -> None:
        self.dtype = DataType("handle")
        self.value = str(value)


class Cast(PrimExpr):
    _fields = ("dtype", "value")

    def __init__(self, dtype: str | DataType, value: ExprLike) -> None:
        self.dtype = DataType(dtype)
        self.value = convert(value)


# -- binary ----------------------------------------------------------------------------------
class BinaryOp(PrimExpr):
    _fields = ("dtype", "a", "b")
    symbol = "?"

    def __init__(self, a: ExprLike, b: ExprLike) -> None:
        a_, b_ = _promote(convert(a), convert(b))
        self.a = a_
        self.b = b_
        self.dtype = self._result_dtype(a_, b_)

    def _result_dtype(self, a: PrimExpr, b: PrimExpr) -> DataType:
        return a.dtype


class Add(BinaryOp):
    symbol = "+"


class Sub(BinaryOp):
    symbol = "-"


class Mul(BinaryOp):
    symbol = "*"


class Div(BinaryOp):
    """Division: true division for floats, truncating division for integers."""

    symbol = "/"


class Mod(BinaryOp):
    """Truncating remainder (C's ``%``)."""

    symbol = "truncmod"


class FloorDiv(BinaryOp):
    symbol = "//"


class FloorMod(BinaryOp):
    symbol = "%"


class Min(BinaryOp):
    symbol = "min"


class Max(BinaryOp):
    symbol = "max"


class CmpOp(BinaryOp):
    def _result_dtype(self, a: PrimExpr, b: PrimExpr) -> DataType:
        return DataType("bool").with_lanes(max(a.dtype.lanes, b.dtype.lanes))


def _same_value(a: PrimExpr, b: PrimExpr) -> bool:
    """``a`` is ``b``, or both are constants of one value (Apache TVM folds ``==`` of two
    constants, so ``bool(layout.size() == 64)`` reads the value)."""
    if a is b:
        return True
    consts = (IntImm, FloatImm)
    return isinstance(a, consts) and isinstance(b, consts) and a.value == b.value


class EQ(CmpOp):
    symbol = "=="

    def __bool__(self) -> bool:
        return _same_value(self.a, self.b)


class NE(CmpOp):
    symbol = "!="

    def __bool__(self) -> bool:
        return not _same_value(self.a, self.b)


class LT(CmpOp):
    symbol = "<"


class LE(CmpOp):
    symbol = "<="


class GT(CmpOp):
    symbol = ">"


class GE(CmpOp):
    symbol = ">="


class And(CmpOp):
    symbol = "and"


class Or(CmpOp):
    symbol = "or"


class Not(PrimExpr):
    _fields = ("dtype", "a")

    def __init__(self, a: ExprLike) -> None:
        self.a = convert(a)
        self.dtype = self.a.dtype


class Select(PrimExpr):
    """``cond ? true_value : false_value``; both sides may be evaluated."""

    _fields = ("dtype", "condition", "true_value", "false_value")

    def __init__(self, condition: ExprLike, true_value: ExprLike, false_value: ExprLike) -> None:
        self.condition = convert(condition)
        t, f = _promote(convert(true_value), convert(false_value))
        self.true_value = t
        self.false_value = f
        self.dtype = t.dtype


class BufferLoad(PrimExpr):
    _fields = ("dtype", "buffer", "indices")

    def __init__(self, buffer: Buffer, indices: Sequence[Any], dtype: str | DataType | None = None) -> None:
        self.buffer = buffer
        self.indices = [convert(i) for i in indices]
        lanes = 1
        for idx in self.indices:
            lanes = max(lanes, idx.dtype.lanes)
        self.dtype = DataType(dtype) if dtype is not None else buffer.dtype.with_lanes(
            buffer.dtype.lanes * lanes)


class Ramp(PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes-1)*stride]``."""

    _fields = ("dtype", "base", "stride", "lanes")

    def __init__(self, base: ExprLike, stride: ExprLike, lanes: int) -> None:
        self.base = convert(base)
        self.stride = convert(stride, self.base.dtype)
        self.lanes = int(lanes)
        self.dtype = self.base.dtype.with_lanes(self.lanes)


class Broadcast(PrimExpr):
    _fields = ("dtype", "value", "lanes")

    def __init__(self, value: ExprLike, lanes: int) -> None:
        self.value = convert(value)
        self.lanes = int(lanes)
        self.dtype = self.value.dtype.with_lanes(self.lanes)


class Let(PrimExpr):
    """``let var = value in body``."""

    _fields = ("dtype", "var", "value", "body")
    _def_fields = frozenset({"var"})

    def __init__(self, var: Var, value: ExprLike, body: ExprLike) -> None:
        self.var = var
        self.value = convert(value)
        self.body = convert(body)
        self.dtype = self.body.dtype


class Call(PrimExpr):
    """A call of a registered :class:`~tvm.ir.Op` producing a value of ``dtype``.

    Arguments may be expressions, buffers, buffer regions, or plain Python values
    (strings, ints) where the op takes static attributes.
    """

    _fields = ("dtype", "op", "args")

    def __init__(self, dtype: str | DataType, op: Op | str, args: Sequence[Any]) -> None:
        self.dtype = DataType(dtype)
        self.op = Op.get(op) if isinstance(op, str) else op
        self.args = [_convert_arg(a) for a in args]


class Shuffle(PrimExpr):
    """The vector whose lane ``k`` is lane ``indices[k]`` of the lanes of ``vectors`` laid end
    to end."""

    _fields = ("dtype", "vectors", "indices")

    def __init__(self, vectors: Sequence[ExprLike], indices: Sequence[ExprLike]) -> None:
        self.vectors = [convert(v) for v in vectors]
        self.indices = [convert(i) for i in indices]
        if not self.vectors or not self.indices:
            raise ValueError("Shuffle: needs at least one vector and one index; got "
                             f"{len(self.vectors)} vector(s) and {len(self.indices)} index(es)")
        elements = {str(v.dtype.element_of()) for v in self.vectors}
        if len(elements) > 1:
            raise TypeError(f"Shuffle: the vectors' element types differ ({sorted(elements)}); "
                            "cast them to one type first")
        self.dtype = self.vectors[0].dtype.element_of().with_lanes(len(self.indices))


class ProducerLoad(PrimExpr):
    """A load from a data producer (a tensor of a tensor expression, not a buffer): only the
    functors and structural equality handle it; lowering to TIR turns it into a BufferLoad."""

    _fields = ("dtype", "producer", "indices")

    def __init__(self, producer: Any, indices: Sequence[ExprLike]) -> None:
        dtype = getattr(producer, "dtype", None)
        if dtype is None:
            raise TypeError(f"ProducerLoad: the producer {producer!r} has no dtype; pass a "
                            "tensor (an object with a dtype and a shape)")
        self.producer = producer
        self.indices = [convert(i) for i in indices]
        self.dtype = DataType(dtype)


class IterVar(Node):
    """An iteration axis: ``var`` ranges over ``dom``. ``iter_type`` is the seed's integer kind
    (0 data parallel, 2 reduction, ...); ``thread_tag`` names a bound thread axis, or is ""."""

    _fields = ("dom", "var", "iter_type", "thread_tag")
    _def_fields = frozenset({"var"})

    def __init__(self, dom: Range | None, var: Var | str, iter_type: int = 0,
                 thread_tag: str = "") -> None:
        if isinstance(var, str):
            var = Var(var, dom.extent.dtype if dom is not None else "int32")
        self.dom = dom
        self.var = var
        self.iter_type = int(iter_type)
        self.thread_tag = str(thread_tag)


class CommReducer(Node):
    """A commutative reduction: ``result`` combines ``lhs`` (the running values) with ``rhs``
    (the new ones); ``identity_element`` is its identity, one per value."""

    _fields = ("lhs", "rhs", "result", "identity_element")
    _def_fields = frozenset({"lhs", "rhs"})

    def __init__(self, lhs: Sequence[Var], rhs: Sequence[Var], result: Sequence[ExprLike],
                 identity_element: Sequence[ExprLike]) -> None:
        sizes = {len(lhs), len(rhs), len(result), len(identity_element)}
        if len(sizes) != 1:
            raise ValueError(
                f"CommReducer: lhs, rhs, result and identity_element must have one entry per "
                f"value; got {len(lhs)}, {len(rhs)}, {len(result)} and {len(identity_element)}")
        self.lhs = list(lhs)
        self.rhs = list(rhs)
        self.result = [convert(r) for r in result]
        self.identity_element = [convert(i) for i in identity_element]


class IndexLambda(Node):
    """``lambda i, j: i < j`` as IR: ``body`` over the index variables ``params``. A tile
    primitive holds one where the seed takes a Python callable of dst's element indices
    (``Tx.select``'s predicate), so that the call prints, parses back and compares equal.
    Calling it substitutes the indices into the body."""

    _fields = ("params", "body")
    _def_fields = frozenset({"params"})

    def __init__(self, params: Sequence[Var], body: ExprLike) -> None:
        self.params = list(params)
        self.body = convert(body)

    def __call__(self, *indices: ExprLike) -> PrimExpr:
        if len(indices) != len(self.params):
            raise TypeError(f"this index function takes {len(self.params)} indices "
                            f"({', '.join(p.name for p in self.params)}), got {len(indices)}")
        from .visitor import substitute  # noqa: PLC0415 - the visitor module imports this one

        return substitute(self.body, dict(zip(self.params, indices)))  # type: ignore[no-any-return]

    @staticmethod
    def from_callable(fn: Callable[..., Any], ndim: int) -> IndexLambda:
        """The IR of a Python callable of ``ndim`` indices (its parameter names name them)."""
        import inspect  # noqa: PLC0415 - only when a callable is given

        try:
            names = [p.name for p in inspect.signature(fn).parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            names = []
        if len(names) != ndim:
            names = [f"i{k}" for k in range(ndim)]
        params = [Var(n, "int32") for n in names]
        try:
            body = fn(*params)
        except TypeError as exc:
            raise TypeError(f"an index function must take {ndim} indices (one per dimension of "
                            f"dst): {exc}") from None
        return IndexLambda(params, body)


class Reduce(PrimExpr):
    """Value ``value_index`` of ``combiner`` applied over the ``axis`` iteration domain to
    ``source`` where ``condition`` holds, starting from ``init`` (or the identity)."""

    # the axes come first: they define the variables the source uses
    _fields = ("dtype", "combiner", "axis", "source", "init", "condition", "value_index")

    def __init__(self, combiner: CommReducer, src: Sequence[ExprLike], rdom: Sequence[IterVar],
                 condition: ExprLike, value_index: int,
                 init: Sequence[ExprLike] | None = None) -> None:
        self.combiner = combiner
        self.source = [convert(s) for s in src]
        self.init = [convert(i) for i in init or ()]
        self.axis = list(rdom)
        self.condition = convert(condition)
        self.value_index = int(value_index)
        if not 0 <= self.value_index < len(self.source):
            raise IndexError(f"Reduce: value_index {self.value_index} is out of range for "
                             f"{len(self.source)} source value(s)")
        if self.init and len(self.init) != len(self.source):
            raise ValueError(f"Reduce: init has {len(self.init)} value(s) but source has "
                             f"{len(self.source)}; give one initial value per source value")
        self.dtype = self.source[self.value_index].dtype


# -- helpers ---------------------------------------------------------------------------------
def const(value: int | float | bool, dtype: str | DataType | None = None) -> PrimExpr:
    """An immediate of ``dtype`` (inferred from the Python value when omitted). A literal out
    of its type's range is an :class:`IRVerifyError` (integers and finite floats alike)."""
    dt = DataType(dtype) if dtype is not None else dtype_of(value)
    if dt.is_float:
        _check_float_range(dt, float(value))
        return FloatImm(dt, float(value))
    if dt.is_bool:
        return IntImm(dt, 1 if value else 0)
    if isinstance(value, float) and not float(value).is_integer():
        raise TypeError(f"cannot make a {dt} constant from the float {value!r}")
    return IntImm(dt, int(value))


def convert(value: Any, dtype: str | DataType | None = None) -> PrimExpr:
    """Turn a Python scalar (or an expression) into a PrimExpr."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (bool, int, float)):
        return const(value, dtype)
    if isinstance(value, str):
        return StringImm(value)
    raise TypeError(f"expected an expression or a number, got {type(value).__name__} {value!r}")


def _convert_arg(value: Any) -> Any:
    if isinstance(value, (bool, int, float)):
        return const(value)
    if isinstance(value, str):
        return StringImm(value)
    return value


def _is_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return True
    return isinstance(v, PrimExpr) and v.dtype.element_of().is_bool


def _scalar_for(value: int | float | bool, like: PrimExpr) -> PrimExpr:
    dt = like.dtype.element_of()
    if isinstance(value, bool):
        return const(value, "bool") if not dt.is_bool else const(value, dt)
    if isinstance(value, float) and not dt.is_float:
        return const(value, "float32")
    if dt.is_handle or dt.is_void:
        return const(value)
    return const(value, dt)


def _promote(a: PrimExpr, b: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    da, db = a.dtype, b.dtype
    if da == db:
        return a, b
    ea, eb = da.element_of(), db.element_of()
    if ea == eb:
        # scalar against vector: broadcast the scalar
        if da.lanes == 1 and db.lanes > 1:
            return Broadcast(a, db.lanes), b
        if db.lanes == 1 and da.lanes > 1:
            return a, Broadcast(b, da.lanes)
        raise TypeError(f"cannot combine vectors of {da} and {db}: lane counts differ")
    target = _wider(ea, eb)
    if ea != target:
        a = _cast_imm(a, target.with_lanes(da.lanes))
    if eb != target:
        b = _cast_imm(b, target.with_lanes(db.lanes))
    return _promote(a, b) if a.dtype != b.dtype else (a, b)


def _cast_imm(e: PrimExpr, dt: DataType) -> PrimExpr:
    if isinstance(e, IntImm) and dt.lanes == 1:
        return FloatImm(dt, float(e.value)) if dt.is_float else IntImm(dt, e.value)
    if isinstance(e, FloatImm) and dt.is_float and dt.lanes == 1:
        return FloatImm(dt, e.value)
    return Cast(dt, e)


def _binary(cls: type[BinaryOp], a: ExprLike, b: ExprLike) -> PrimExpr:
    if not isinstance(a, PrimExpr):
        if not isinstance(b, PrimExpr):  # T.min(3, 4): two literals make an IR node too
            a = convert(a)
        else:
            a = _scalar_for(a, b)
    elif not isinstance(b, PrimExpr):
        b = _scalar_for(b, a)
    return _fold_imm(cls(a, b))


def _bit_call(name: str, a: ExprLike, b: ExprLike, *, fold: bool = False) -> PrimExpr:
    """``T.bitwise_and(a, b)`` and the like; the Python operators (``fold=True``) fold two
    integer immediates (the named builders build the call, so printed calls read back equal)."""
    if not isinstance(a, PrimExpr):
        a = _scalar_for(a, convert(b))
    if not isinstance(b, PrimExpr):
        b = _scalar_for(b, a)
    a_, b_ = _promote(a, b)
    folded = _fold_bits(name, a_, b_) if fold else None
    if folded is not None:
        return folded
    return Call(a_.dtype, Op.get(f"tirx.{name}"), [a_, b_])


def _fold_bits(name: str, a: PrimExpr, b: PrimExpr) -> IntImm | None:
    """``T.int32(6) & 3`` is ``T.int32(2)``, as Apache TVM folds bitwise ops on two integer
    immediates (not shifts by a negative amount or past the width, nor results out of range)."""
    if not (isinstance(a, IntImm) and isinstance(b, IntImm)) or a.dtype != b.dtype:
        return None
    if a.dtype.lanes != 1 or not a.dtype.is_integer:
        return None
    value = _fold_bits_value(name, a.dtype, a.value, b.value)
    return None if value is None else IntImm(a.dtype, value)


# -- constant folding of immediates (what Python operators on two immediates build) ----------
def _fold_imm(e: BinaryOp) -> PrimExpr:
    """``T.int32(3) + 4`` is ``T.int32(7)``: arithmetic on two scalar immediates is folded, as
    Apache TVM does. Comparisons are not (their truth value is identity, see PrimExpr), nor
    results that would overflow the type, divisions by zero, or anything else."""
    a, b = e.a, e.b
    identity = _fold_identity(e)
    if identity is not None:
        return identity
    if not (isinstance(a, (IntImm, FloatImm)) and isinstance(b, (IntImm, FloatImm))):
        return e
    if type(a) is not type(b) or a.dtype != b.dtype:
        return e
    dt = e.dtype
    if dt.lanes != 1 or dt.is_bool or not (dt.is_integer or dt.is_float):
        return e
    op = type(e).__name__ if type(e) in _ARITH else ""
    value = _fold_value(op, a.value, b.value, integer=isinstance(a, IntImm))
    if value is None:
        return e
    if isinstance(a, FloatImm):
        return FloatImm(dt, value)
    return IntImm(dt, value) if _fits(dt, value) else e


def _fold_identity(e: BinaryOp) -> PrimExpr | None:
    """``x + 0``, ``0 + x``, ``x - 0`` and ``x * 1`` are ``x`` for integer ``x``, as Apache TVM
    folds them when it builds the expression."""
    a, b = e.a, e.b
    if not e.dtype.is_integer or e.dtype.is_bool or a.dtype != b.dtype:
        return None
    if type(e) in (Add, Sub) and _is_int(b, 0):
        return a
    if type(e) is Add and _is_int(a, 0):
        return b
    if type(e) is Mul and _is_int(b, 1):
        return a
    if type(e) is Mul and _is_int(a, 1):
        return b
    return None


def _is_int(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and e.dtype.lanes == 1 and e.value == value


#: the node classes whose immediates fold (``literal`` keys its folds by their names)
_ARITH = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max)
