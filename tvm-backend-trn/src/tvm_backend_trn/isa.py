"""The Trainium instruction form: what the NKI renderers print and the simulator runs.

A :class:`Kernel` declares its HBM tensors and its on-chip allocations (SBUF and PSUM, with
explicit byte offsets, as a naive allocator assigns them) and holds a body of instructions and
:class:`Loop` statements. Instructions read and write tiles through :class:`AP` views, an
affine access pattern in the style of NKI's ``tensor.ap(pattern=[[stride, num], ...])``:
a partition range plus up to four free dimensions given as ``(stride, size)`` pairs over the
element offsets of one partition.

Loop variables enter index expressions only through :class:`Affine` (``Var("k") * 128``), so
the simulator can evaluate an offset per iteration with a dictionary look-up, and the renderers
can print ``k * 128`` inside ``nl.affine_range``.

Every instruction mirrors one NKI ISA call; the fields keep the current (destination-first)
NKI names so the renderer can map them one to one. Ops are plain strings (``"exp"``, ``"add"``)
that both the renderer and the simulator look up in their own tables.

This module imports nothing heavy: no numpy, no ml_dtypes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Union

__all__ = [
    "AP",
    "Activation",
    "Affine",
    "AffineSelect",
    "DmaCopy",
    "HbmTensor",
    "Instr",
    "Iota",
    "Kernel",
    "Loop",
    "Matmul",
    "Memset",
    "PsumTensor",
    "Reciprocal",
    "SbufTensor",
    "ScalarTensorTensor",
    "Stmt",
    "TensorCopy",
    "TensorReduce",
    "TensorScalar",
    "TensorTensor",
    "Transpose",
    "Var",
    "dtype_bytes",
    "identity",
    "walk",
]

PSUM_BANK_BYTES = 2048

_DTYPE_BYTES = {
    "float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "int32": 4, "int16": 2, "int8": 1, "uint32": 4, "uint16": 2, "uint8": 1,
}

ACTIVATION_OPS = frozenset({
    "copy", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "relu", "gelu",
    "gelu_apprx_tanh", "silu", "square", "abs", "sin", "sign", "softplus",
})
BINARY_OPS = frozenset({
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
})
REDUCE_OPS = frozenset({"add", "maximum", "minimum", "multiply"})
CMP_OPS = frozenset({"equal", "not_equal", "greater", "greater_equal", "less", "less_equal"})


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of a dtype the Trainium model supports."""
    try:
        return _DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(
            f"unsupported Trainium dtype {dtype!r}; expected one of {sorted(_DTYPE_BYTES)}"
        ) from None


# --------------------------------------------------------------------------- index expressions


@dataclass(frozen=True)
class Affine:
    """``const + sum(coeff * var)``: the only form a loop variable takes in an index."""

    const: int = 0
    terms: tuple[tuple[str, int], ...] = ()

    @staticmethod
    def of(x: Index) -> Affine:
        return x if isinstance(x, Affine) else Affine(int(x))

    def _combine(self, other: Index, sign: int) -> Affine:
        o = Affine.of(other)
        coeffs = dict(self.terms)
        for v, c in o.terms:
            coeffs[v] = coeffs.get(v, 0) + sign * c
        terms = tuple((v, c) for v, c in coeffs.items() if c != 0)
        return Affine(self.const + sign * o.const, terms)

    def __add__(self, other: Index) -> Affine:
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other: Index) -> Affine:
        return self._combine(other, -1)

    def __rsub__(self, other: Index) -> Affine:
        return Affine.of(other)._combine(self, -1)

    def __mul__(self, k: int) -> Affine:
        if not isinstance(k, int):
            raise TypeError("an Affine index can only be scaled by an int")
        return Affine(self.const * k, tuple((v, c * k) for v, c in self.terms if c * k != 0))

    __rmul__ = __mul__

    def evaluate(self, env: dict[str, int]) -> int:
        total = self.const
        for v, c in self.terms:
            try:
                total += env[v] * c
            except KeyError:
                raise ValueError(f"loop variable {v!r} is used outside its loop") from None
        return total

    @property
    def vars(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.terms)


Index = Union[int, Affine]


def Var(name: str) -> Affine:  # noqa: N802 - reads as a constructor in index expressions
    """A loop variable as an index expression."""
    return Affine(0, ((name, 1),))


def _simplify(a: Affine) -> Index:
    return a if a.terms else a.const


def evaluate(x: Index, env: dict[str, int]) -> int:
    return x if isinstance(x, int) else x.evaluate(env)


# --------------------------------------------------------------------------- tensors


@dataclass(frozen=True)
class HbmTensor:
    """A tensor in device memory (HBM). ``kind``: ``input``, ``output`` or ``scratch``."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    kind: str = "input"

    def __post_init__(self) -> None:
        dtype_bytes(self.dtype)
        if self.kind not in ("input", "output", "scratch"):
            raise ValueError(f"HbmTensor {self.name!r}: kind must be input, output or scratch")

    memory = "hbm"

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def tile(self, starts: Sequence[Index], sizes: Sequence[int]) -> AP:
        """A row-major box ``[starts[d] : starts[d] + sizes[d]]``; dim 0 maps to partitions."""
        if len(starts) != len(self.shape) or len(sizes) != len(self.shape):
            raise ValueError(f"{self.name}.tile: expected {len(self.shape)} starts and sizes")
        strides = _row_major_strides(self.shape)
        offset = _simplify(sum((Affine.of(s) * st for s, st in zip(starts, strides)), Affine()))
        free = tuple((st, n) for st, n in zip(strides[1:], sizes[1:]))
        return AP(self.name, sizes[0], free, offset=offset, p_stride=strides[0])

    def full(self) -> AP:
        return self.tile([0] * len(self.shape), list(self.shape))


@dataclass(frozen=True)
class _OnChip:
    name: str
    partitions: int
    free_shape: tuple[int, ...]
    dtype: str

    @property
    def free_size(self) -> int:
        """Elements per partition."""
        return math.prod(self.free_shape)

    @property
    def bytes_per_partition(self) -> int:
        return self.free_size * dtype_bytes(self.dtype)

    def view(self, p_start: Index = 0, partitions: int | None = None, offset: Index = 0,
             pattern: Sequence[tuple[int, int]] | None = None) -> AP:
        """An access pattern; by default the whole tensor with its declared free shape."""
        if pattern is None:
            strides = _row_major_strides(self.free_shape)
            pattern = tuple(zip(strides, self.free_shape))
        return AP(self.name, self.partitions if partitions is None else partitions,
                  tuple((int(s), int(n)) for s, n in pattern), offset=offset, p_start=p_start)

    def full(self) -> AP:
        return self.view()

    def tile(self, p: tuple[Index, int], *free: tuple[Index, int]) -> AP:
        """A box: ``p=(start, size)`` and one ``(start, size)`` per declared free dim."""
        if len(free) != len(self.free_shape):
            raise ValueError(f"{self.name}.tile: expected {len(self.free_shape)} free ranges")
        strides = _row_major_strides(self.free_shape)
        offset = _simplify(sum((Affine.of(s) * st for (s, _), st in zip(free, strides)), Affine()))
        pattern = tuple((st, n) for (_, n), st in zip(free, strides))
        return AP(self.name, p[1], pattern, offset=offset, p_start=p[0])


@dataclass(frozen=True)
class SbufTensor(_OnChip):
    """An SBUF allocation: partitions 0..partitions-1, ``offset`` bytes into each partition."""

    offset: int = 0
    memory = "sbuf"

    @property
    def address(self) -> int:
        return self.offset


@dataclass(frozen=True)
class PsumTensor(_OnChip):
    """A PSUM allocation starting ``offset`` bytes into 2 KiB ``bank``; may span banks."""

    dtype: str = "float32"
    bank: int = 0
    offset: int = 0
    memory = "psum"

    @property
    def address(self) -> int:
        return self.bank * PSUM_BANK_BYTES + self.offset


OnChipTensor = Union[SbufTensor, PsumTensor]
Tensor = Union[HbmTensor, SbufTensor, PsumTensor]


def _row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


@dataclass(frozen=True)
class AP:
    """A view of a tensor: ``partitions`` rows and free dims ``pattern = ((stride, size), ...)``.

    On-chip tensors: rows are partitions ``p_start .. p_start + partitions - 1`` and
    ``offset`` is the first element within a partition. HBM tensors: the flat element index
    of ``(i, j0, j1, ...)`` is ``offset + i * p_stride + sum(j_k * stride_k)``; ``p_start``
    stays 0. The view's shape is ``(partitions, *sizes)``.
    """

    tensor: str
    partitions: int
    pattern: tuple[tuple[int, int], ...]
    offset: Index = 0
    p_start: Index = 0
    p_stride: int = 1

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.partitions, *(n for _, n in self.pattern))

    @property
    def free_size(self) -> int:
        return math.prod(n for _, n in self.pattern)


# --------------------------------------------------------------------------- instructions

Operand = Union[float, int, AP]


@dataclass(frozen=True)
class Instr:
    """Base of every instruction: ``dst`` first, like the current NKI ISA."""

    dst: AP

    name = "instr"  # the nki.isa function this instruction mirrors
    engine = "vector"

    def reads(self) -> tuple[AP, ...]:
        return tuple(v for v in self._fields() if isinstance(v, AP) and v is not self.dst)

    def writes(self) -> tuple[AP, ...]:
        return (self.dst,)

    def _fields(self) -> Iterator[object]:
        for f in self.__dataclass_fields__:
            yield getattr(self, f)


@dataclass(frozen=True, kw_only=True)
class DmaCopy(Instr):
    """HBM <-> SBUF (or SBUF <-> SBUF, HBM <-> HBM) copy on a DMA queue; no casts."""

    src: AP
    name = "dma_copy"
    engine = "dma"


@dataclass(frozen=True, kw_only=True)
class TensorCopy(Instr):
    """On-chip copy with a cast to dst's dtype (also the PSUM -> SBUF eviction)."""

    src: AP
    name = "tensor_copy"


@dataclass(frozen=True, kw_only=True)
class Matmul(Instr):
    """``dst[M, N] (+)= stationary[K, M].T @ moving[K, N]`` into PSUM in fp32.

    ``accumulate``: ``False`` overwrites, ``True`` adds, an :class:`Affine` ``e`` adds when
    ``e != 0`` (``accumulate=Var("k")`` is the usual "first K tile overwrites").
    """

    stationary: AP
    moving: AP
    accumulate: bool | Affine = False
    name = "nc_matmul"
    engine = "tensor"

    def reads(self) -> tuple[AP, ...]:
        base = (self.stationary, self.moving)
        return base + ((self.dst,) if self.accumulate is not False else ())


@dataclass(frozen=True, kw_only=True)
class Transpose(Instr):
    """``dst[F, P] = data[P, F]``; engine ``tensor`` (into PSUM) or ``vector`` (<= 32 x 32)."""

    data: AP
    engine: str = "tensor"  # type: ignore[misc]
    name = "nc_transpose"


@dataclass(frozen=True, kw_only=True)
class Activation(Instr):
    """``dst = op(data * scale + bias)``; with ``reduce_res``, also its sum over free axes."""

    op: str = "copy"
    data: AP
    bias: AP | float | None = None
    scale: AP | float = 1.0
    reduce_op: str | None = None
    reduce_res: AP | None = None
    name = "activation"
    engine = "scalar"

    def writes(self) -> tuple[AP, ...]:
        return (self.dst,) + ((self.reduce_res,) if self.reduce_res is not None else ())

    def reads(self) -> tuple[AP, ...]:
        return tuple(v for v in (self.data, self.bias, self.scale) if isinstance(v, AP))


@dataclass(frozen=True, kw_only=True)
class Reciprocal(Instr):
    data: AP
    name = "reciprocal"


@dataclass(frozen=True, kw_only=True)
class TensorReduce(Instr):
    """Reduce ``data`` over free ``axis`` (1-based: axis 0 is the partition dim)."""

    op: str = "add"
    data: AP
    axis: tuple[int, ...] = (1,)
    negate: bool = False
    keepdims: bool = False
    name = "tensor_reduce"


@dataclass(frozen=True, kw_only=True)
class TensorTensor(Instr):
    data1: AP
    data2: AP
    op: str = "add"
    name = "tensor_tensor"

    @property
    def engine(self) -> str:  # type: ignore[override]
        return "gpsimd" if self.op == "power" else "vector"


@dataclass(frozen=True, kw_only=True)
class TensorScalar(Instr):
    """``(data op0 operand0) op1 operand1``; operands are scalars or ``[P, 1]`` columns.

    With ``reduce_op`` and ``reduce_res`` it is ``tensor_scalar_reduce``: ``reduce_res[P, 1]``
    receives the reduction of the result over its free axes.
    """

    data: AP
    op0: str = "multiply"
    operand0: Operand = 1.0
    reverse0: bool = False
    op1: str | None = None
    operand1: Operand | None = None
    reverse1: bool = False
    reduce_op: str | None = None
    reduce_res: AP | None = None

    @property
    def name(self) -> str:  # type: ignore[override]
        return "tensor_scalar_reduce" if self.reduce_res is not None else "tensor_scalar"

    def writes(self) -> tuple[AP, ...]:
        return (self.dst,) + ((self.reduce_res,) if self.reduce_res is not None else ())

    def reads(self) -> tuple[AP, ...]:
        return tuple(v for v in (self.data, self.operand0, self.operand1) if isinstance(v, AP))


@dataclass(frozen=True, kw_only=True)
class ScalarTensorTensor(Instr):
    """``(data op0 operand0) op1 operand1``: op0 with a scalar/column, op1 with a tile."""

    data: AP
    op0: str = "multiply"
    operand0: Operand = 1.0
    op1: str = "add"
    operand1: AP
    reverse0: bool = False
    reverse1: bool = False
    name = "scalar_tensor_tensor"


@dataclass(frozen=True, kw_only=True)
class Memset(Instr):
    value: float | int = 0
    name = "memset"


@dataclass(frozen=True, kw_only=True)
class Iota(Instr):
    """``dst[p, i...] = offset + p * channel_multiplier + sum(i_k * step_k)`` in int32."""

    pattern: tuple[tuple[int, int], ...] = ()
    offset: int = 0
    channel_multiplier: int = 0
    name = "iota"
    engine = "gpsimd"


@dataclass(frozen=True, kw_only=True)
class AffineSelect(Instr):
    """``dst = on_true if cmp_op(offset + p * cm + sum(i_k * step_k), 0) else on_false``."""

    pattern: tuple[tuple[int, int], ...] = ()
    channel_multiplier: int = 0
    on_true_tile: AP
    on_false_value: float = 0.0
    cmp_op: str = "equal"
    offset: int = 0
    name = "affine_select"
    engine = "gpsimd"


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Loop:
    """``for var in range(extent)``; kind ``affine`` (nl.affine_range) or ``sequential``."""

    var: str
    extent: int
    body: tuple[Stmt, ...]
    kind: str = "affine"

    def __post_init__(self) -> None:
        if self.kind not in ("affine", "sequential"):
            raise ValueError(f"loop {self.var!r}: kind must be 'affine' or 'sequential'")
        if self.extent < 1:
            raise ValueError(f"loop {self.var!r}: extent {self.extent} < 1")


Stmt = Union[Instr, Loop]


@dataclass(frozen=True)
class Kernel:
    """A kernel: HBM tensors (inputs in argument order, outputs), allocations and a body."""

    name: str
    tensors: tuple[HbmTensor, ...]
    allocs: tuple[SbufTensor | PsumTensor, ...]
    body: tuple[Stmt, ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for t in (*self.tensors, *self.allocs):
            if t.name in seen:
                raise ValueError(f"kernel {self.name!r}: tensor name {t.name!r} declared twice")
            seen.add(t.name)

    @property
    def inputs(self) -> tuple[HbmTensor, ...]:
        return tuple(t for t in self.tensors if t.kind == "input")

    @property
    def outputs(self) -> tuple[HbmTensor, ...]:
        return tuple(t for t in self.tensors if t.kind == "output")

    def tensor(self, name: str) -> Tensor:
        for t in (*self.tensors, *self.allocs):
            if t.name == name:
                return t
        raise KeyError(f"kernel {self.name!r} declares no tensor {name!r}")


def walk(body: Sequence[Stmt]) -> Iterator[Instr]:
    """Every instruction of a body in program order, loops visited once (not unrolled)."""
    for s in body:
        if isinstance(s, Loop):
            yield from walk(s.body)
        else:
            yield s


def identity(dst: OnChipTensor, ones: OnChipTensor) -> tuple[Instr, ...]:
    """Instructions that build an identity matrix in ``dst`` (``[n, n]``) using scratch ``ones``.

    NKI 0.3+ has no identity helper: fill ``ones`` with 1.0 and keep it where ``p - j == 0``.
    """
    n = dst.partitions
    if dst.free_size != n or ones.partitions != n or ones.free_size != n:
        raise ValueError("identity: dst and ones must both be [n, n]")
    return (
        Memset(ones.view(pattern=((1, n),)), value=1.0),
        AffineSelect(dst.view(pattern=((1, n),)), pattern=((-1, n),), channel_multiplier=1,
                     on_true_tile=ones.view(pattern=((1, n),)), on_false_value=0.0,
                     cmp_op="equal"),
    )
