"""Tile schedulers for persistent kernels: which output tile a CTA works on next.

A persistent kernel launches about one CTA per SM and loops over tiles. The scheduler keeps
the CTA's current linear tile number in a ``local`` register; ``valid`` says whether it is
below the tile count, ``m_idx`` / ``n_idx`` (and ``b_idx`` for 3-D) are its coordinates,
``advance()`` moves to the CTA's next tile (``+ num_ctas``). A script has no ``while``, so the
loop runs ``max_iters`` times with a guard::

    sched = PersistentTileScheduler2D(m_tiles, n_tiles, num_ctas=132, cta_id=bx, group_m=8)
    for _ in T.serial(sched.max_iters):
        if sched.valid:
            ...  # tile (sched.m_idx, sched.n_idx)
        sched.advance()

**Grouped rasterisation** (``group_m``): tiles are numbered in groups of ``group_m`` tile rows;
inside a group the tile row changes fastest, so the CTAs running at one time share A-row
panels and B-column panels in L2 (Triton's "grouped ordering").

:class:`ClusterPersistentScheduler2D` hands out work per cluster: each step a cluster takes a
``cluster_m x cluster_n`` block of tiles (grouped as above, over blocks) and the CTA takes the
tile at its position in the cluster.

Attention: a work unit is one (batch, head, query block). :class:`FlashAttentionLinearScheduler`
walks them query block fastest; :class:`FlashAttentionLPTScheduler` hands out the longest work
first (with a causal mask, query block ``q`` of ``Q`` attends to ``q + 1`` key blocks, so the last
query blocks cost ``Q`` times the first), over sections of (batch, head) pairs whose K and V
stay in L2 together. Multi-GPU and grouped work: :class:`RankAwareGroupMajorTileScheduler` starts
each rank on its own slice of rows; :class:`IndexedTripleTileScheduler` reads each unit's
coordinates from a table in global memory (a grouped GEMM's (group, m, n) list).
"""

from __future__ import annotations

from typing import Any

from tvm.ir import Buffer, BufferLoad, BufferStore, PrimExpr, Stmt, const
from tvm.ir import expr as E

from ._emit import alloc, as_expr, seq_of, static_int

__all__ = [
    "BaseTileScheduler",
    "ClusterPersistentScheduler2D",
    "FlashAttentionLPTScheduler",
    "FlashAttentionLinearScheduler",
    "GroupMajor3D",
    "IndexedTripleTileScheduler",
    "PersistentTileScheduler2D",
    "RankAwareGroupMajorTileScheduler",
]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _grouped(t: PrimExpr, rows: int, cols: int, group: int) -> tuple[PrimExpr, PrimExpr]:
    """(row, col) of linear tile ``t`` in a ``rows x cols`` grid, grouped by ``group`` rows."""
    if group <= 1:
        return t // cols, t % cols
    if group >= rows:
        return t % rows, t // rows
    per_group = group * cols
    g = t // per_group
    first = g * group
    size = E.Min(const(rows, t.dtype) - first, const(group, t.dtype))
    local = t % per_group
    return first + local % size, local // size


def _coord(i: int) -> Any:
    """A read-only property: coordinate ``i`` of the current tile (the scheduler's ``coords``)."""
    return property(lambda self: self.coords()[i])


class BaseTileScheduler:
    """The linear-tile register and the persistent loop; subclasses map it to coordinates.

    ``num_tiles``: work units in all; ``num_ctas`` (or clusters): how many take turns;
    ``worker``: this CTA's (or cluster's) number, an expression.
    """

    def __init__(self, num_tiles: int, num_workers: int, worker: Any, *,
                 name: str = "tile") -> None:
        self.num_tiles = static_int(num_tiles, f"{type(self).__name__}: tiles", minimum=1)
        self.num_workers = static_int(num_workers, f"{type(self).__name__}: workers",
                                      minimum=1)
        self.worker = as_expr(worker)
        self.reg = Buffer(name, [1], "int32", scope="local")

    def __tvm_script_bind__(self, name: str) -> Stmt:
        self.reg.name = f"{name}_tile"
        self.reg.data.name = self.reg.name
        return self.init()

    def init(self) -> Stmt:
        return seq_of([alloc(self.reg), BufferStore(self.reg, self.worker, [const(0, "int32")])])

    @property
    def tile(self) -> PrimExpr:
        """This worker's current linear tile number."""
        return BufferLoad(self.reg, [const(0, "int32")])

    @property
    def valid(self) -> PrimExpr:
        return E.LT(self.tile, const(self.num_tiles, "int32"))

    @property
    def max_iters(self) -> int:
        """Loop trips that let every worker see all its tiles."""
        return _ceil_div(self.num_tiles, self.num_workers)

    def advance(self) -> Stmt:
        return BufferStore(self.reg, self.tile + self.num_workers, [const(0, "int32")])

    next_tile = advance


class PersistentTileScheduler2D(BaseTileScheduler):
    """``m_tiles x n_tiles`` output tiles over ``num_ctas`` persistent CTAs, grouped by
    ``group_m`` tile rows for L2 reuse (``group_m=1``: row-major order)."""

    def __init__(self, m_tiles: int, n_tiles: int, *, num_ctas: int, cta_id: Any,
                 group_m: int = 8, name: str = "tile") -> None:
        self.m_tiles = static_int(m_tiles, "PersistentTileScheduler2D: m_tiles", minimum=1)
        self.n_tiles = static_int(n_tiles, "PersistentTileScheduler2D: n_tiles", minimum=1)
        self.group_m = static_int(group_m, "PersistentTileScheduler2D: group_m", minimum=1)
        super().__init__(self.m_tiles * self.n_tiles, num_ctas, cta_id, name=name)

    def coords(self, tile: PrimExpr | None = None) -> tuple[PrimExpr, PrimExpr]:
        return _grouped(self.tile if tile is None else tile, self.m_tiles, self.n_tiles,
                        self.group_m)

    m_idx = _coord(0)
    n_idx = _coord(1)


class ClusterPersistentScheduler2D(BaseTileScheduler):
    """Persistent clusters: each step, cluster ``cluster_id`` takes a block of ``cluster_m x
    cluster_n`` tiles; CTA ``cta_in_cluster`` (row-major in the block) takes its tile. The tile
    grid must be a whole number of blocks (pad the problem or pick the cluster shape)."""

    def __init__(self, m_tiles: int, n_tiles: int, *, num_clusters: int, cluster_id: Any,
                 cta_in_cluster: Any, cluster_m: int = 2, cluster_n: int = 1,
                 group_m: int = 8, name: str = "tile") -> None:
        self.m_tiles = static_int(m_tiles, "ClusterPersistentScheduler2D: m_tiles", minimum=1)
        self.n_tiles = static_int(n_tiles, "ClusterPersistentScheduler2D: n_tiles", minimum=1)
        self.cluster_m = static_int(cluster_m, "ClusterPersistentScheduler2D: cluster_m",
                                    minimum=1)
        self.cluster_n = static_int(cluster_n, "ClusterPersistentScheduler2D: cluster_n",
                                    minimum=1)
        if self.m_tiles % self.cluster_m or self.n_tiles % self.cluster_n:
            raise ValueError(f"ClusterPersistentScheduler2D: {self.m_tiles} x {self.n_tiles} "
                             f"tiles are not whole {self.cluster_m} x {self.cluster_n} cluster "
                             "blocks")
        self.group_m = static_int(group_m, "ClusterPersistentScheduler2D: group_m", minimum=1)
        self.cta_in_cluster = as_expr(cta_in_cluster)
        self.blocks_m = self.m_tiles // self.cluster_m
        self.blocks_n = self.n_tiles // self.cluster_n
        super().__init__(self.blocks_m * self.blocks_n, num_clusters, cluster_id, name=name)

    def coords(self, tile: PrimExpr | None = None) -> tuple[PrimExpr, PrimExpr]:
        bm, bn = _grouped(self.tile if tile is None else tile, self.blocks_m, self.blocks_n,
                          self.group_m)
        return (bm * self.cluster_m + self.cta_in_cluster // self.cluster_n,
                bn * self.cluster_n + self.cta_in_cluster % self.cluster_n)

    m_idx = _coord(0)
    n_idx = _coord(1)


class GroupMajor3D(BaseTileScheduler):
    """``batch x m_tiles x n_tiles`` tiles, batch outermost, each batch grouped as
    :class:`PersistentTileScheduler2D`."""

    def __init__(self, batch: int, m_tiles: int, n_tiles: int, *, num_ctas: int, cta_id: Any,
                 group_m: int = 8, name: str = "tile") -> None:
        self.batch = static_int(batch, "GroupMajor3D: batch", minimum=1)
        self.m_tiles = static_int(m_tiles, "GroupMajor3D: m_tiles", minimum=1)
        self.n_tiles = static_int(n_tiles, "GroupMajor3D: n_tiles", minimum=1)
        self.group_m = static_int(group_m, "GroupMajor3D: group_m", minimum=1)
        super().__init__(self.batch * self.m_tiles * self.n_tiles, num_ctas, cta_id, name=name)

    def coords(self, tile: PrimExpr | None = None) -> tuple[PrimExpr, PrimExpr, PrimExpr]:
        t = self.tile if tile is None else tile
        per_batch = self.m_tiles * self.n_tiles
        return (t // per_batch,
                *_grouped(t % per_batch, self.m_tiles, self.n_tiles, self.group_m))

    b_idx = _coord(0)
    m_idx = _coord(1)
    n_idx = _coord(2)


class FlashAttentionLinearScheduler(BaseTileScheduler):
    """``batch x heads x q_blocks`` attention work units over ``num_ctas`` persistent CTAs, in
    linear order: query block fastest, then head, then batch (``b_idx``, ``h_idx``, ``q_idx``).
    Right for equal-cost units (no causal mask); a causal kernel wants
    :class:`FlashAttentionLPTScheduler`."""

    def __init__(self, batch: int, heads: int, q_blocks: int, *, num_ctas: int, cta_id: Any,
                 name: str = "tile") -> None:
        what = type(self).__name__
        self.batch = static_int(batch, f"{what}: batch", minimum=1)
        self.heads = static_int(heads, f"{what}: heads", minimum=1)
        self.q_blocks = static_int(q_blocks, f"{what}: q_blocks", minimum=1)
        super().__init__(self.batch * self.heads * self.q_blocks, num_ctas, cta_id, name=name)

    def coords(self, tile: PrimExpr | None = None) -> tuple[PrimExpr, PrimExpr, PrimExpr]:
        """(batch, head, query block) of linear unit ``tile`` (default: the current one)."""
        t = self.tile if tile is None else tile
        bh = t // self.q_blocks
        return bh // self.heads, bh % self.heads, t % self.q_blocks

    b_idx = _coord(0)
    h_idx = _coord(1)
    q_idx = _coord(2)
    m_idx = q_idx


class FlashAttentionLPTScheduler(FlashAttentionLinearScheduler):
    """Longest-processing-time-first order of ``batch x heads x q_blocks`` attention units.

    The (batch, head) pairs are cut into sections of ``section`` pairs (default: all of them);
    a section's units are handed out before the next section's, so the K and V the CTAs read
    at one time belong to ``section`` heads (pick it so that their K and V fit in L2). Inside a
    section the query blocks go from the last to the first when ``causal`` (the last attends to
    every key block, the first to one), each to every pair of the section before the next
    query block, so each persistent CTA's share ends with the short units and the CTAs finish
    together; without ``causal`` they go first to last."""

    def __init__(self, batch: int, heads: int, q_blocks: int, *, num_ctas: int, cta_id: Any,
                 causal: bool = True, section: int | None = None, name: str = "tile") -> None:
        super().__init__(batch, heads, q_blocks, num_ctas=num_ctas, cta_id=cta_id, name=name)
        pairs = self.batch * self.heads
        self.section = static_int(pairs if section is None else section,
                                  f"{type(self).__name__}: section", minimum=1)
        self.causal = bool(causal)

    def coords(self, tile: PrimExpr | None = None) -> tuple[PrimExpr, PrimExpr, PrimExpr]:
        t = self.tile if tile is None else tile
        # (pair, query step): pairs change fastest inside a section of `section` pairs
        bh, step = _grouped(t, self.batch * self.heads, self.q_blocks, self.section)
        q = self.q_blocks - 1 - step if self.causal else step
        return bh // self.heads, bh % self.heads, q


class RankAwareGroupMajorTileScheduler(PersistentTileScheduler2D):
    """:class:`PersistentTileScheduler2D` on one of ``world_size`` GPUs that overlap a GEMM with
    communication: the tile rows are ``world_size`` equal slices, and rank ``rank`` walks them
    starting with its own slice, then ``rank + 1``, ... (mod ``world_size``). With an
    all-gather feeding A, a rank's own rows are there first and the others arrive in ring
    order; with a reduce-scatter after, each slice is finished as early as its turn allows.
    ``rank`` may be an expression (read at run time); ``m_tiles`` must divide evenly."""

    def __init__(self, m_tiles: int, n_tiles: int, *, num_ctas: int, cta_id: Any, rank: Any,
                 world_size: int, group_m: int = 8, name: str = "tile") -> None:
        what = type(self).__name__
        self.world_size = static_int(world_size, f"{what}: world_size", minimum=1)
        m = static_int(m_tiles, f"{what}: m_tiles", minimum=1)
        if m % self.world_size:
            raise ValueError(f"{what}: {m} tile rows do not split into {self.world_size} equal "
                             "rank slices; pad M to a multiple of world_size x the tile height")
        self.rank = as_expr(rank)
        super().__init__(m, n_tiles, num_ctas=num_ctas, cta_id=cta_id, group_m=group_m,
                         name=name)

    def coords(self, tile: PrimExpr | None = None) -> tuple[PrimExpr, PrimExpr]:
        t = self.tile if tile is None else tile
        per_rank = self.m_tiles // self.world_size
        per_slice = per_rank * self.n_tiles
        # slices in turn, each grouped as the 2-D scheduler groups the whole grid
        k, local = t // per_slice, t % per_slice
        row, col = _grouped(local, per_rank, self.n_tiles, min(self.group_m, per_rank))
        owner = (self.rank + k) % self.world_size
        return owner * per_rank + row, col


class IndexedTripleTileScheduler(BaseTileScheduler):
    """Work units listed in a table: ``table`` is an int32 buffer of shape ``[max_tiles, 3]``
    (global memory, written by the host or an earlier kernel), unit ``t`` works on
    ``(table[t, 0], table[t, 1], table[t, 2])`` (``b_idx``, ``m_idx``, ``n_idx``: e.g. a grouped
    GEMM's group and tile). ``num_tiles`` (default ``max_tiles``) may be an expression read at
    run time, such as a count in global memory; the loop runs for ``max_tiles``."""

    def __init__(self, table: Buffer, *, num_ctas: int, cta_id: Any, num_tiles: Any = None,
                 name: str = "tile") -> None:
        what = type(self).__name__
        if not isinstance(table, Buffer) or len(table.shape) != 2:
            raise ValueError(f"{what}: table must be a 2-d buffer [max_tiles, 3], got {table!r}")
        cols = static_int(table.shape[1], f"{what}: the table's second dimension")
        if cols != 3:
            raise ValueError(f"{what}: the table has {cols} columns; it needs 3 "
                             "(b, m, n) per work unit")
        if str(table.dtype) != "int32":
            raise ValueError(f"{what}: the table must be int32, got {table.dtype}")
        self.table = table
        max_tiles = static_int(table.shape[0], f"{what}: the table's first dimension (max_tiles)",
                               minimum=1)
        super().__init__(max_tiles, num_ctas, cta_id, name=name)
        self.count = as_expr(max_tiles if num_tiles is None else num_tiles)

    @property
    def valid(self) -> PrimExpr:
        return E.And(E.LT(self.tile, const(self.num_tiles, "int32")),
                     E.LT(self.tile, self.count))

    def coords(self, tile: PrimExpr | None = None) -> tuple[PrimExpr, PrimExpr, PrimExpr]:
        t = self.tile if tile is None else tile
        b, m, n = (BufferLoad(self.table, [t, const(j, "int32")]) for j in range(3))
        return b, m, n

    b_idx = _coord(0)
    m_idx = _coord(1)
    n_idx = _coord(2)
