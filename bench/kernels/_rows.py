"""How a row of ``n`` elements is spread over registers (shared by the row kernels).

A row is held in registers by one warp (short rows, several rows per CTA) or by a whole CTA
(one row per CTA), each thread owning ``chunks`` vectors of 16 bytes (4 float32, 8 bfloat16):
vector ``c * threads + t`` of the row belongs to thread ``t``, so a warp's loads of one chunk
are 512 contiguous bytes. Every load of the row is issued before the first use (one pass over
memory); the reductions combine registers, then warp shuffles, then one value per warp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm.ir import DataType, TileLayout
from tvm.ir.layout import Axis, Iter

SUPPORTED = ("float32", "bfloat16")
MAX_THREADS = 1024
#: elements a thread keeps in registers at most (beyond that the row does not fit)
MAX_PER_THREAD = 64
#: 16-byte vectors a thread aims to hold: four loads in flight per thread (two were measured
#: slower at 8192 bfloat16: 0.081 ms against 0.070 for rmsnorm on the H200)
TARGET_CHUNKS = 4
#: rows of at most this many elements a thread load their weights with the row; longer ones
#: after the reductions (LayerNorm bf16 with W and B early used 110 registers a thread)
EARLY_WEIGHTS = 16


@dataclass(frozen=True)
class RowPlan:
    """``threads`` threads per row (32: one warp per row, ``rows_per_cta`` rows per CTA),
    ``chunks`` 16-byte vectors of ``vec`` elements each per thread; ``padded`` elements of
    registers per row (``>= n``: the last vectors are skipped when ``n`` is not a whole
    number of ``threads * vec``)."""

    n: int
    vec: int
    threads: int
    chunks: int
    rows_per_cta: int

    @property
    def padded(self) -> int:
        return self.chunks * self.threads * self.vec

    @property
    def per_thread(self) -> int:
        """Elements of the row each thread holds."""
        return self.chunks * self.vec

    @property
    def warp_per_row(self) -> bool:
        return self.threads == 32

    def layout(self) -> TileLayout:
        axis = Axis.get("laneid" if self.warp_per_row else "tid")
        return TileLayout([Iter(self.chunks, self.vec), Iter(self.threads, 1, axis),
                           Iter(self.vec, 1)])


def check(m: int, n: int, dtype: str) -> DataType:
    dt = DataType(dtype)
    if str(dt) not in SUPPORTED:
        raise ValueError(f"dtype {dtype!r}: the row kernels take {SUPPORTED}")
    if not isinstance(m, int) or m < 1:
        raise ValueError(f"the row count must be a positive int, got {m!r}")
    if not isinstance(n, int) or n < 8 or n % 8:
        raise ValueError(f"the row length must be a positive multiple of 8, got {n!r}")
    return dt


def plan_rows(n: int, dtype: Any) -> RowPlan:
    """Pick threads per row and vectors per thread for a row of ``n`` elements: about 4
    16-byte vectors a thread (several loads in flight each, registers still few); a warp per
    row (4 rows a CTA, no barriers) when the row is that short."""
    dt = DataType(str(dtype))
    vec = 16 // dt.bytes
    nvec = n // vec
    target = TARGET_CHUNKS
    if nvec <= 32 * target:
        return RowPlan(n, vec, 32, -(-nvec // 32), 4)
    best = None
    for threads in range(64, MAX_THREADS + 1, 32):
        chunks = -(-nvec // threads)
        if chunks * vec > MAX_PER_THREAD:
            continue
        waste = chunks * threads - nvec
        score = (waste > 0, abs(chunks - target), waste, -threads)
        if best is None or score < best[0]:
            best = (score, threads, chunks)
    if best is None:
        raise ValueError(f"a row of {n} {dt} does not fit in the registers of one CTA "
                         f"({MAX_THREADS} threads x {MAX_PER_THREAD} elements)")
    _, threads, chunks = best
    return RowPlan(n, vec, threads, chunks, 1)
