"""Bump allocators: :class:`SMEMPool` (dynamic shared memory) and :class:`TMEMPool` /
:class:`TMEMStages` (tensor memory, sm_100a).

Inside a ``@T.prim_func`` body::

    pool = SMEMPool()                                   # one shared.dyn byte buffer, `pool`
    A_s = pool.alloc_mma((STAGES, 128, 64), "bfloat16")  # swizzled (128B) MMA/TMA tiles
    C_s = pool.alloc((128, 128), "float32")              # a plain row-major buffer
    bars = pool.alloc((STAGES,), "uint64", align=8)

``pool = SMEMPool()`` emits ``pool = T.alloc_buffer((N,), "uint8", scope="shared.dyn",
align=1024)`` where ``N`` ends up as the bytes all its allocations need; each allocation emits a
``T.decl_buffer`` view of it (``data=pool.data``, ``elem_offset`` = its place). So the printed
function is plain TVMScript and parses back to the same IR. An allocation that would take the
pool past ``max_bytes`` (a CTA's shared memory: 227 KB on sm_90 and sm_100) fails with a message
that names it and says what to shrink.

``SMEMPool(buf)`` carves an existing ``shared.dyn`` buffer instead (its size is the limit).
The seed's spellings work too: ``pool = T.SMEMPool()`` (registered with the backend), and
``pool.commit()`` after the allocations, which emits nothing (the size is always up to date).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any

from tvm.ir import Buffer, BufferLoad, DataType, IntImm, PrimExpr, Stmt, TileLayout, Var, const
from tvm.ir.layout import Axis, Iter
from tvm.script.tirx import BufferSpec

from .. import op as _op
from ..dispatch.tma_utils import SwizzleMode, mma_atom_shape, mma_shared_layout, swizzle_bytes
from ..tags import OPTIN_SHARED_MEMORY
from ._emit import alloc, decl, evaluate, seq_of, static_int, when

__all__ = ["MAX_DYN_SMEM_BYTES", "SMEMPool", "TMEMPool", "TMEMStages"]

#: dynamic shared memory one CTA may use on sm_90 / sm_100 (227 KB)
MAX_DYN_SMEM_BYTES = OPTIN_SHARED_MEMORY[90]
TMEM_COLUMNS = 512
TMEM_LANES = 128


def _shape_product(shape: Sequence[int]) -> int:
    return functools.reduce(operator.mul, shape, 1)


def _static_shape(shape: Any, who: str) -> list[int]:
    dims = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    return [static_int(d, f"{who}: shape {dims}: every dim", minimum=1) for d in dims]


def _auto_swizzle_mode(dtype: Any) -> SwizzleMode:
    """The default MMA swizzle of an allocation: 128B (the seed's choice for every dtype)."""
    del dtype
    return SwizzleMode.SWIZZLE_128B_ATOM


def _suggest_swizzle_for_row_bytes(row_bytes: int) -> str:
    """The largest swizzle whose atom row divides ``row_bytes``."""
    for atom, mode in ((128, "SWIZZLE_128B_ATOM"), (64, "SWIZZLE_64B_ATOM"),
                       (32, "SWIZZLE_32B_ATOM")):
        if row_bytes >= atom and row_bytes % atom == 0:
            return mode
    return "SWIZZLE_NONE"


def _validate_mma_alloc_shape(shape: Sequence[int], dtype: Any, mode: SwizzleMode) -> None:
    """Check that ``shape`` tiles the swizzle atom ``[8, swizzle_bytes / elem_bytes]`` over its
    last two dims, and say what to change when it does not."""
    if mode is SwizzleMode.SWIZZLE_NONE:
        return
    if len(shape) < 2:
        raise ValueError(f"alloc_mma shape={tuple(shape)} has fewer than 2 dimensions; swizzled "
                         "MMA layouts tile over the last two dims (rows, cols). Use "
                         "swizzle_mode='none' for 1-D allocations.")
    rows, cols = shape[-2], shape[-1]
    dt = DataType(str(dtype))
    row_bytes = cols * dt.bits // 8
    atom = swizzle_bytes(mode)
    if row_bytes < atom or row_bytes % atom:
        per_row = mma_atom_shape(dt, mode)[1]
        raise ValueError(
            f"alloc_mma shape={tuple(shape)} dtype={dt}: {row_bytes}B rows ({cols} elements) "
            f"are not a multiple of the {atom}B swizzle atom ({mode.name}, rows of {per_row} "
            f"elements). Use swizzle_mode='{_suggest_swizzle_for_row_bytes(row_bytes)}', or "
            f"make the last dim a multiple of {per_row} elements.")
    if rows % 8:
        raise ValueError(f"alloc_mma shape={tuple(shape)} dtype={dt}: shape[-2]={rows} rows is "
                         f"not a multiple of 8, the rows of one {mode.name} atom. Pad the rows "
                         f"to {(rows + 7) // 8 * 8}.")


def _parse_mode(mode: Any, dtype: Any) -> SwizzleMode:
    if isinstance(mode, str) and mode == "auto":
        return _auto_swizzle_mode(dtype)
    return SwizzleMode.parse(mode)


class SMEMPool:
    """A bump allocator over one dynamic shared-memory byte buffer.

    ``SMEMPool()`` owns its buffer (allocated where the pool is bound, sized by what is carved
    from it); ``SMEMPool(buf)`` carves an existing ``shared.dyn``/``shared`` buffer.
    ``max_bytes`` bounds the total (default: 227 KB, a CTA's limit on sm_90 and sm_100).
    """

    capacity: int
    buffer: Buffer
    _own: bool

    def __init__(self, buffer: Buffer | Var | None = None, *,
                 max_bytes: int = MAX_DYN_SMEM_BYTES, align: int = 1024,
                 name: str = "smem_pool") -> None:
        if isinstance(buffer, Var) and _is_byte_pointer(buffer):
            # the seed's form: a pool over a uint8 shared-memory pointer variable
            self.capacity = static_int(max_bytes, "SMEMPool: max_bytes", minimum=1)
            self.buffer = Buffer(buffer.name, [0], "uint8", scope="shared.dyn", data=buffer,
                                 align=align)
            self._own = False
        elif buffer is not None:
            if not isinstance(buffer, Buffer) or buffer.scope not in ("shared.dyn", "shared"):
                raise TypeError(f"SMEMPool(buffer): expected a shared-memory T.alloc_buffer, got "
                                f"{buffer!r}")
            shape = buffer.static_shape()
            if shape is None:
                raise ValueError(f"SMEMPool: buffer {buffer.name} needs a constant shape")
            self.capacity = _shape_product(shape) * buffer.dtype.bytes
            self.buffer = buffer
            self._own = False
        else:
            self.capacity = static_int(max_bytes, "SMEMPool: max_bytes", minimum=1)
            self.buffer = Buffer(name, [0], "uint8", scope="shared.dyn", align=align)
            self._own = True
        self.offset = 0
        self._names: dict[str, int] = {}

    # -- binding -------------------------------------------------------------------------------
    def __tvm_script_bind__(self, name: str) -> Stmt | None:
        if not self._own:
            return None
        self.buffer.name = name
        self.buffer.data.name = name
        return alloc(self.buffer)

    def init(self) -> Stmt | None:
        """The allocation statement of an owned pool (for IR built outside a script)."""
        return alloc(self.buffer) if self._own else None

    @property
    def data(self) -> Var:
        return self.buffer.data

    # -- carving -------------------------------------------------------------------------------
    def _fresh(self, name: str) -> str:
        n = self._names.get(name, 0)
        self._names[name] = n + 1
        return name if n == 0 else f"{name}_{n}"

    def _place(self, nbytes: int, align: int, what: str) -> int:
        align = max(1, align)
        start = (self.offset + align - 1) // align * align
        end = start + nbytes
        if end > self.capacity:
            where = ("the pool's buffer" if not self._own else
                     "a CTA's shared memory (sm_90/sm_100: 232448 bytes)")
            raise ValueError(
                f"SMEMPool: {what} needs {nbytes} bytes at offset {start}, {end} bytes in all, "
                f"more than the {self.capacity} bytes of {where}. Use fewer pipeline stages or "
                f"smaller tiles.")
        self.offset = end
        if self._own:
            self.buffer.shape[0] = IntImm("int32", end)
        return start

    def carve(self, shape: Any, dtype: Any = "float32", *, layout: Any = None, align: int = 16,
              name: str = "smem") -> Buffer:
        """A view of the next ``shape`` x ``dtype`` bytes (aligned to ``align``) as a Buffer.
        The caller declares it (``T.decl_buffer``); :meth:`alloc` does so in a script."""
        dims = _static_shape(shape, "SMEMPool.alloc")
        dt = DataType(str(dtype))
        span = _layout_span(layout, dims)
        nbytes = span * dt.bytes
        start = self._place(nbytes, max(align, dt.bytes), f"{name} {tuple(dims)} {dt}")
        base = self.buffer.elem_offset
        base_bytes = (base.value if isinstance(base, IntImm) else 0) * self.buffer.dtype.bytes
        return Buffer(self._fresh(name), dims, dt, scope=self.buffer.scope, data=self.buffer.data,
                      elem_offset=(base_bytes + start) // dt.bytes, layout=layout,
                      align=max(align, dt.bytes))

    def alloc(self, shape: Any, dtype: Any = "float32", *, layout: Any = None,
              align: int = 16) -> BufferSpec:
        """``X = pool.alloc(shape, dtype)``: a buffer in the pool (row-major, or ``layout``)."""
        view = self.carve(shape, dtype, layout=layout, align=align, name="smem")
        return _decl_spec(view)

    def alloc_mma(self, shape: Any, dtype: Any = "float16", swizzle_mode: Any = "auto",
                  align: int = 1024) -> BufferSpec:
        """``X = pool.alloc_mma(shape, dtype)``: a buffer laid out for TMA and the tensor cores
        (:func:`~tvm_backend_cuda.dispatch.tma_utils.mma_shared_layout`), the swizzle atom tiled
        over the last two dims. ``swizzle_mode="auto"`` is 128B."""
        dims = _static_shape(shape, "alloc_mma")
        mode = _parse_mode(swizzle_mode, dtype)
        _validate_mma_alloc_shape(dims, dtype, mode)
        layout = mma_shared_layout(dtype, mode, dims)
        view = self.carve(dims, dtype, layout=layout, align=align, name="smem")
        return _decl_spec(view)

    def move_base_to(self, offset: int) -> None:
        """Continue carving at byte ``offset`` (reuse memory whose buffers are dead)."""
        self.offset = static_int(offset, "SMEMPool.move_base_to: offset", minimum=0)

    def commit(self) -> Stmt:
        """The seed's end of carving (``pool.commit()``): no statement here, where the pool's
        buffer is always as large as what has been carved from it."""
        return seq_of([])

    def __repr__(self) -> str:
        return f"SMEMPool({self.buffer.name}, {self.offset}/{self.capacity} bytes)"


def _layout_span(layout: Any, dims: Sequence[int]) -> int:
    if layout is None:
        return _shape_product(dims)
    span = layout.span("m")
    if not isinstance(span, IntImm):
        raise ValueError(f"SMEMPool: the layout {layout!r} has no constant size")
    return span.value


def _decl_spec(view: Buffer) -> BufferSpec:
    kw: dict[str, Any] = {"scope": view.scope, "data": view.data, "align": view.align}
    if view.layout is not None:
        kw["layout"] = view.layout
    if not (isinstance(view.elem_offset, IntImm) and view.elem_offset.value == 0):
        kw["elem_offset"] = view.elem_offset
    return BufferSpec("decl", tuple(view.shape), str(view.dtype), kw)


# -- tensor memory (sm_100a) -------------------------------------------------------------------


def _tmem_axes() -> tuple[Axis, Axis]:
    return Axis.register("TLane", "memory"), Axis.register("TCol", "memory")


def tmem_layout(rows: int, cols: int) -> TileLayout:
    """A ``[rows, cols]`` tile of tensor memory: row ``r`` in lane ``r``, column ``c`` at column
    ``c`` (32-bit columns)."""
    lane, col = _tmem_axes()
    return TileLayout([Iter(rows, 1, lane), Iter(cols, 1, col)])


class TMEMPool:
    """Tensor-memory columns of one CTA (sm_100a), allocated once by one warp.

    ``tmem = TMEMPool(pool, cols=512, warp=warp_id == 0)`` emits: a 4-byte slot in shared
    memory (from the SMEMPool ``pool``) for the TMEM address, ``tcgen05.alloc`` +
    ``relinquish_alloc_permit`` by the warp ``warp`` selects, and a CTA barrier so every thread
    can read :attr:`addr`. ``D = tmem.alloc((128, 256), "float32")`` declares a TMEM tile whose
    ``elem_offset`` is its TMEM address (lane 0, its first column); :meth:`dealloc` frees the
    columns at the end (same warp). ``cols`` is a power of two from 32 to 512.
    """

    def __init__(self, pool: SMEMPool, cols: int = TMEM_COLUMNS, *, warp: Any = True,
                 cta_group: int = 1) -> None:
        cols = static_int(cols, "TMEMPool: cols", minimum=32)
        if cols > TMEM_COLUMNS or cols & (cols - 1):
            raise ValueError(f"TMEMPool: cols must be a power of two from 32 to 512, got {cols}")
        if cta_group not in (1, 2):
            raise ValueError(f"TMEMPool: cta_group must be 1 or 2, got {cta_group}")
        self.cols = cols
        self.cta_group = cta_group
        self.warp = warp
        self.slot = pool.carve((1,), "uint32", align=4, name="tmem_addr")
        self.used = 0

    @property
    def addr(self) -> BufferLoad:
        """The TMEM base address (valid after the pool's setup)."""
        return BufferLoad(self.slot, [const(0, "int32")])

    def __tvm_script_bind__(self, name: str) -> Stmt:
        self.slot.name = f"{name}_addr"
        return self.init()

    def init(self) -> Stmt:
        setup = evaluate(_op.ptx_tcgen05_alloc(self.addr, self.cols, self.cta_group),
                         _op.ptx_tcgen05_relinquish_alloc_permit(self.cta_group))
        return seq_of([decl(self.slot), when(self.warp, setup), evaluate(_op.cuda_cta_sync())])

    def alloc(self, shape: Any, dtype: Any = "float32", *, col_align: int = 1) -> BufferSpec:
        """``D = tmem.alloc((128, N), "float32")``: the next columns, as a TMEM tile."""
        dims = _static_shape(shape, "TMEMPool.alloc")
        if len(dims) != 2 or dims[0] > TMEM_LANES:
            raise ValueError(f"TMEMPool.alloc: shape {dims} must be [rows <= 128, cols]")
        dt = DataType(str(dtype))
        cols = -(-dims[1] * dt.bits // 32)  # 32-bit columns
        start = (self.used + col_align - 1) // col_align * col_align
        if start + cols > self.cols:
            raise ValueError(f"TMEMPool: {cols} more columns at column {start} exceed the pool's "
                             f"{self.cols} columns")
        self.used = start + cols
        offset: PrimExpr = self.addr if start == 0 else self.addr + start
        kw = {"scope": "tmem", "data": self.slot.data, "elem_offset": offset,
              "layout": tmem_layout(dims[0], dims[1])}
        return BufferSpec("decl", tuple(dims), str(dt), kw)

    def dealloc(self) -> Stmt:
        """Free the columns (the warp that allocated them; after their last use)."""
        return when(self.warp, evaluate(
            _op.ptx_tcgen05_dealloc(self.addr, self.cols, self.cta_group)))


class TMEMStages:
    """``stages`` equal column ranges of a :class:`TMEMPool` (a pipeline of accumulators):
    :meth:`address` gives stage ``s``'s TMEM address."""

    def __init__(self, tmem: TMEMPool, stages: int, cols: int) -> None:
        self.stages = static_int(stages, "TMEMStages: stages", minimum=1)
        self.cols = static_int(cols, "TMEMStages: cols", minimum=1)
        if tmem.used + self.stages * self.cols > tmem.cols:
            raise ValueError(f"TMEMStages: {self.stages} stages of {self.cols} columns exceed "
                             f"the {tmem.cols - tmem.used} free columns of the TMEM pool")
        self.base = tmem.used
        tmem.used += self.stages * self.cols
        self.tmem = tmem

    def address(self, stage: Any) -> PrimExpr:
        return self.tmem.addr + (self.base + stage * self.cols)


def _is_byte_pointer(var: Var) -> bool:
    """A handle variable to uint8 (or untyped) memory: the base of a pool."""
    return var.dtype.is_handle and (var.ptr_dtype is None or str(var.ptr_dtype) == "uint8") \
        and var.ptr_scope in (None, "shared", "shared.dyn")
