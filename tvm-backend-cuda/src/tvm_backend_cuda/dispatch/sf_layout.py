"""Where block-scaled ``tcgen05.mma`` reads its scale factors in tensor memory (the seed's
``gemm_async.sf_tmem_layout``).

``tcgen05.cp`` with shape ``32x128b`` and ``warpx4`` multicast writes 16 bytes to each of 32
lanes (repeated in each lane quarter): four 32-bit columns. A scale-factor tile of ``rows`` rows
(a multiple of 32) and ``SF_K`` 8-bit factors per row sits there as: row ``m`` in lane
``m % 32`` and column ``m // 32`` of its group of ``rows // 32`` columns, factor ``k`` in byte
``k % 4`` of that column (the instruction's scale-factor id picks the byte), each further four
factors in the next group of columns. The layout's ``TCol`` offsets count elements (bytes), as
the seed's do: ``span("TCol")`` rounded up to a multiple of 4 and divided by 4 is the number of
32-bit columns the tile occupies.
"""

from __future__ import annotations

from tvm.ir import Iter, TileLayout

__all__ = ["sf_tmem_layout"]


def sf_tmem_layout(rows: int, SF_K: int, sf_per_mma: int = 1) -> TileLayout:  # noqa: N803
    """The TMEM layout of a ``(rows, SF_K)`` tile of 8-bit scale factors (see the module);
    ``sf_per_mma`` (1, 2 or 4: the factors one MMA reads per row) must divide ``SF_K``."""
    if rows <= 0 or rows % 32:
        raise ValueError(f"sf_tmem_layout: rows must be a positive multiple of 32 (one per "
                         f"lane), got {rows}")
    if sf_per_mma not in (1, 2, 4):
        raise ValueError(f"sf_tmem_layout: sf_per_mma must be 1, 2 or 4, got {sf_per_mma}")
    if SF_K <= 0 or SF_K % sf_per_mma:
        raise ValueError(f"sf_tmem_layout: SF_K ({SF_K}) must be a positive multiple of "
                         f"sf_per_mma ({sf_per_mma})")
    groups = rows // 32
    k_iters = [Iter(SF_K, 1, "TCol")] if SF_K <= 4 else []
    if SF_K > 4:
        if SF_K % 4:
            raise ValueError(f"sf_tmem_layout: more than 4 factors a row come in fours, got "
                             f"SF_K={SF_K}")
        k_iters = [Iter(SF_K // 4, groups * 4, "TCol"), Iter(4, 1, "TCol")]
    return TileLayout([Iter(groups, 4, "TCol"), Iter(32, 1, "TLane"), *k_iters])
