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
from tvm.script.tirx import tile as Tx

SUPPORTED = ("float32", "bfloat16")
MAX_THREADS = 1024
#: elements a thread keeps in registers at most (beyond that the row does not fit)
MAX_PER_THREAD = 64



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
    if not isinstance(m, int) or isinstance(m, bool) or m < 1:
        raise ValueError(f"the row count must be a positive int, got {m!r}")
    if not isinstance(n, int) or n < 8 or n % 8:
        raise ValueError(f"the row length must be a positive multiple of 8, got {n!r}")
    return dt


def row_kernel_setup(m: int, n: int, dtype: str, threads: int | None
                     ) -> tuple[str, RowPlan, int, Any, TileLayout, int]:
    """What every row kernel starts from: the checked dtype, the plan, rows a CTA, the tile
    scope a row is reduced over (``Tx.warp`` for a warp a row, else ``Tx.cta``), the register
    layout of a row and its padded length."""
    dt = str(check(m, n, dtype))
    plan = plan_rows(n, dt, threads)
    scope = Tx.warp if plan.warp_per_row else Tx.cta
    return dt, plan, plan.rows_per_cta, scope, plan.layout(), plan.padded


def plan_rows(n: int, dtype: Any, threads: int | None = None) -> RowPlan:
    """Pick threads per row and 16-byte vectors per thread for a row of ``n`` elements
    (``threads``: that many threads a row instead, a tuning choice: 32 is one warp a row).

    A thread holds at least 16 elements in 2 or 4 vectors (float32: 4; bfloat16: 2, or 4 when
    2 would take more than 256 threads a row): on the H200, bfloat16 rows of 1024 and 4096 ran
    3-8% faster with 2 vectors a thread, rows of 8192 7-15% faster with 4 (256 threads instead
    of 512). A row that fits one warp gets a warp (4 rows a CTA, no barriers)."""
    dt = DataType(str(dtype))
    vec = 16 // dt.bytes
    nvec = n // vec
    if threads is not None:
        return _forced_plan(n, dt, vec, nvec, threads)
    options = [c for c in (2, 4) if c * vec >= 16]
    if nvec <= 32 * options[0]:
        return RowPlan(n, vec, 32, -(-nvec // 32), 4)
    target = next((c for c in options if -(-nvec // c) <= 256), options[-1])
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


def _forced_plan(n: int, dt: DataType, vec: int, nvec: int, threads: int) -> RowPlan:
    if not isinstance(threads, int) or threads < 32 or threads % 32 or threads > MAX_THREADS:
        raise ValueError(f"threads={threads!r}: a row takes a multiple of 32 threads, at most "
                         f"{MAX_THREADS}")
    chunks = -(-nvec // threads)
    if chunks * vec > MAX_PER_THREAD:
        raise ValueError(f"threads={threads}: a row of {n} {dt} would take {chunks * vec} "
                         f"elements a thread (at most {MAX_PER_THREAD}); use more threads")
    return RowPlan(n, vec, threads, chunks, 4 if threads == 32 else 1)


def thread_choices(n: int, dtype: Any) -> list[int]:
    """The threads-per-row values worth measuring for a row of ``n`` elements (the tuner's
    candidates): the planner's choice first, then powers of two that fit."""
    dt = DataType(str(dtype))
    vec = 16 // dt.bytes
    nvec = n // vec
    first = plan_rows(n, dt).threads
    out = [first]
    for t in (32, 64, 128, 256, 512, 1024):
        if t not in out and -(-nvec // t) * vec <= MAX_PER_THREAD and t <= max(32, nvec):
            out.append(t)
    return out


def weights_early(plan: RowPlan, dtype: Any) -> bool:
    """Load W (and B) with the row, before the reductions? Measured on the H200: yes for
    float32 rows of 16 elements a thread (LayerNorm 4096: 0.0372 against 0.0385 ms); no for
    bfloat16, where keeping them out of the registers live across the reductions won (LayerNorm
    8192: 0.0706 against 0.0925 ms with 110 registers a thread)."""
    return str(DataType(str(dtype))) == "float32" and plan.per_thread <= 16
