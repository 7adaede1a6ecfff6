"""Element-wise ``C = A + B`` over ``n`` elements."""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.ir import DataType, TileLayout
from tvm.ir.layout import Axis, Iter
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

THREADS = 256
PER_THREAD = 16  # elements per thread and operand: 4 float32 / 2 bfloat16 16-byte vectors


@no_type_check  # TVMScript: the parser gives the annotations their meaning
def add_func(n: int, dtype: str = "float32") -> Any:
    """Each CTA adds one tile of ``THREADS * PER_THREAD`` elements in 16-byte vectors: both
    inputs are loaded
    into registers (vector ``c * THREADS + t`` of the tile to thread ``t``), added (in float32
    for bfloat16) and stored. The last CTA takes the remainder, whole vectors skipped past
    ``n``."""
    dt = DataType(dtype)
    if str(dt) not in ("float32", "bfloat16"):
        raise ValueError(f"dtype {dtype!r}: add takes float32 or bfloat16")
    if not isinstance(n, int) or n < 8 or n % 8:
        raise ValueError(f"n must be a positive multiple of 8, got {n!r}")
    vec = 16 // dt.bytes
    vectors = PER_THREAD // vec
    tile = THREADS * PER_THREAD
    full, rest = divmod(n, tile)
    layout = TileLayout([Iter(vectors, vec), Iter(THREADS, 1, Axis.get("tid")), Iter(vec, 1)])
    cdt = "float32"
    grid = full + (1 if rest else 0)
    last = max(rest, 8)

    @T.prim_func
    def add(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), C: T.Buffer((n,), dtype)):
        T.device_entry()
        bx = T.cta_id([grid])
        tid = T.thread_id([THREADS])  # noqa: F841 - defines the CTA size
        a = T.alloc_buffer((tile,), cdt, scope="local", layout=layout)
        b = T.alloc_buffer((tile,), cdt, scope="local", layout=layout)
        if bx < full:
            Tx.cta.copy(a, A[bx * tile:bx * tile + tile])
            Tx.cta.copy(b, B[bx * tile:bx * tile + tile])
            Tx.cta.add(a, a, b)
            Tx.cta.copy(C[bx * tile:bx * tile + tile], a)
        else:
            Tx.cta.copy(a[0:last], A[full * tile:full * tile + last])
            Tx.cta.copy(b[0:last], B[full * tile:full * tile + last])
            Tx.cta.add(a[0:last], a[0:last], b[0:last])
            Tx.cta.copy(C[full * tile:full * tile + last], a[0:last])

    return add
