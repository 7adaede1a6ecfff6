"""``gemm`` on 8x8 SIMD-group matrices (``simdgroup_matrix`` variant, priority 20).

``D = op(A) @ op(B)`` (``beta=0``, or ``C=None``) or ``D += op(A) @ op(B)`` (``C`` is ``D``,
``beta=1``), at ``cta`` or ``warp`` scope, for float32 or float16 matrices whose M, N and K are
multiples of 8, in device or threadgroup memory. The 8x8 tiles of D are dealt to the SIMD
groups of the scope; each loads 8x8 tiles of A and B with ``simdgroup_load`` (transposed loads
for ``transpose_A``/``transpose_B``), accumulates with ``simdgroup_multiply_accumulate`` and
stores with ``simdgroup_store``. Anything else is left to the generic fallback.
"""

from __future__ import annotations

from typing import Any

from tvm import ir
from tvm.backend.sdk import (
    bound_args,
    expr_equal,
    fold_add,
    predicate,
    region_of,
    register_dispatch,
    static_bool,
    static_float,
)
from tvm.error import DispatchFail
from tvm.tirx.op import address_of

from .. import op
from ..op import SIMDGROUP_SCOPE
from ._simd import barrier_after, ceil_div, simd_threads

__all__ = ["register"]

TILE = 8
_DTYPES = ("float32", "float16")


class _Operand:
    """A 2-D region: logical ``rows x cols`` (after the transpose flag), its leading dimension."""

    def __init__(self, arg: Any, name: str, transpose: bool = False) -> None:
        if arg is None:
            raise DispatchFail(f"{name} is missing")
        self.region = region_of(arg)
        self.buffer = self.region.buffer
        self.name = name
        self.transpose = transpose
        if len(self.buffer.shape) != 2 or len(self.region.region) != 2:
            raise DispatchFail(f"{name} `{self.buffer.name}` must be a 2-D buffer")
        if self.buffer.strides:
            raise DispatchFail(f"{name} `{self.buffer.name}` has explicit strides")
        if self.buffer.scope not in ("global", "shared", "shared.dyn"):
            raise DispatchFail(f"{name} `{self.buffer.name}` is in {self.buffer.scope!r} memory; "
                               "simdgroup_load/store take device or threadgroup memory")
        if str(self.buffer.dtype) not in _DTYPES:
            raise DispatchFail(f"{name} `{self.buffer.name}` is {self.buffer.dtype}; simdgroup "
                               f"matrices here hold {' or '.join(_DTYPES)}")
        ext = [r.extent.value for r in self.region.region if isinstance(r.extent, ir.IntImm)]
        if len(ext) != len(self.region.region):
            raise DispatchFail(f"{name} has symbolic extents")
        stored = (ext[0], ext[1])
        if any(e % TILE for e in stored):
            raise DispatchFail(f"{name} extents {list(stored)} are not multiples of {TILE}")
        self.rows, self.cols = stored[::-1] if transpose else stored
        self.ld = self.buffer.shape[1]

    def ptr(self, row: Any, col: Any) -> Any:
        """``&op(X)[row, col]`` of an 8x8 tile's first element (stored order when transposed)."""
        r, c = (col, row) if self.transpose else (row, col)
        mins = [rng.min for rng in self.region.region]
        return address_of(ir.BufferLoad(self.buffer, [fold_add(mins[0], r), fold_add(mins[1], c)]))


class _Gemm:
    def __init__(self, call: Any) -> None:
        a = bound_args(call)
        self.d = _Operand(a["D"], "D")
        self.a = _Operand(a["A"], "A", static_bool(a["transpose_A"], "transpose_A"))
        self.b = _Operand(a["B"], "B", static_bool(a["transpose_B"], "transpose_B"))
        dtypes = {str(x.buffer.dtype) for x in (self.d, self.a, self.b)}
        if len(dtypes) != 1:
            raise DispatchFail(f"D, A and B must share one dtype, got {sorted(dtypes)}")
        if static_float(a["alpha"]) != 1.0:
            raise DispatchFail(f"alpha must be 1.0, got {a['alpha']}")
        beta = static_float(a["beta"])
        self.accumulate = a["C"] is not None and beta != 0.0
        if self.accumulate:
            c = _Operand(a["C"], "C")
            same = c.buffer is self.d.buffer and all(
                expr_equal(x.min, y.min) and expr_equal(x.extent, y.extent)
                for x, y in zip(c.region.region, self.d.region.region))
            if beta != 1.0 or not same:
                raise DispatchFail("C must be D itself with beta=1.0 (accumulate), or beta=0")
        m, k = self.a.rows, self.a.cols
        k2, n = self.b.rows, self.b.cols
        if k != k2 or (self.d.rows, self.d.cols) != (m, n):
            raise DispatchFail(f"shapes do not multiply: A {m}x{k}, B {k2}x{n}, "
                               f"D {self.d.rows}x{self.d.cols}")
        self.m, self.n, self.k = m, n, k
        self.dtype = self.d.buffer.dtype


def _lower(call: Any, sctx: Any) -> Any:
    g = _Gemm(call)
    st = simd_threads(sctx)
    mats = ir.Buffer("simd_mats", [3 * 64], g.dtype, scope=SIMDGROUP_SCOPE)
    acc, ma, mb = 0, 1, 2
    tiles_n = g.n // TILE
    tiles = (g.m // TILE) * tiles_n
    zero = ir.const(0, "int32")
    t = ir.Var("tile_k", "int32")
    tile = t * st.groups + st.group if st.groups > 1 else t
    i0 = (tile // tiles_n) * TILE
    j0 = (tile % tiles_n) * TILE
    kk = ir.Var("k_tile", "int32")
    k0 = kk * TILE
    if g.accumulate:
        init = op.simdgroup_load(mats.data, acc, g.d.ptr(i0, j0), g.d.ld)
    else:
        init = op.make_filled_simdgroup_matrix(mats.data, acc, ir.FloatImm(g.dtype, 0.0))
    k_loop = ir.For(kk, zero, ir.const(g.k // TILE, "int32"), ir.ForKind.SERIAL, ir.seq([
        ir.Evaluate(op.simdgroup_load(mats.data, ma, g.a.ptr(i0, k0), g.a.ld, 8, 8, g.a.transpose)),
        ir.Evaluate(op.simdgroup_load(mats.data, mb, g.b.ptr(k0, j0), g.b.ld, 8, 8, g.b.transpose)),
        ir.Evaluate(op.simdgroup_multiply_accumulate(mats.data, acc, mats.data, ma, mats.data, mb,
                                                     mats.data, acc)),
    ]))
    body = ir.seq([ir.Evaluate(init), k_loop,
                   ir.Evaluate(op.simdgroup_store(mats.data, acc, g.d.ptr(i0, j0), g.d.ld))])
    if tiles % st.groups:
        body = ir.IfThenElse(tile < tiles, body)  # uniform within a SIMD group
    loop = ir.For(t, zero, ir.const(ceil_div(tiles, st.groups), "int32"), ir.ForKind.SERIAL, body)
    return ir.PrimFunc([], ir.seq([ir.AllocBuffer(mats), loop, barrier_after(sctx, g.d.buffer)]))


def _checks(call: Any, sctx: Any) -> tuple[bool, str]:
    _Gemm(call)
    simd_threads(sctx)
    return True, ""


def register() -> None:
    register_dispatch("gemm", "metal", variant="simdgroup_matrix", priority=20,
                      when=[predicate("simdgroup_matrix_gemm", _checks)])(_lower)
