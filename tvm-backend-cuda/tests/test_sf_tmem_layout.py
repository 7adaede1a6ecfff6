"""``sf_tmem_layout`` (the seed's ``gemm_async.sf_tmem_layout``): where each 8-bit scale factor
of a block-scaled MMA sits in tensor memory, and what it refuses."""

from __future__ import annotations

import pytest

from tvm.tirx.cuda.operator.tile_primitive.gemm_async import sf_tmem_layout


@pytest.mark.parametrize("rows,sf_k,per", [(64, 2, 2), (128, 4, 4), (256, 12, 4), (32, 1, 1)])
def test_every_factor_has_its_lane_column_and_byte(rows: int, sf_k: int, per: int) -> None:
    lay = sf_tmem_layout(rows, SF_K=sf_k, sf_per_mma=per)
    groups = rows // 32
    seen = set()
    for m in range(rows):
        for k in range(sf_k):
            at = lay.apply([m, k], [rows, sf_k])
            lane, col = int(at["TLane"]), int(at["TCol"])
            assert lane == m % 32
            assert col == (k // 4) * groups * 4 + (m // 32) * 4 + k % 4
            seen.add((lane, col))
    assert len(seen) == rows * sf_k
    assert -(-int(lay.span("TCol")) // 4) == groups * -(-sf_k // 4)  # 32-bit columns used


@pytest.mark.parametrize("args,match", [
    ((48, 1, 1), "multiple of 32"),
    ((64, 3, 2), "multiple of sf_per_mma"),
    ((64, 6, 3), "1, 2 or 4"),
    ((64, 6, 2), "come in fours"),
])
def test_refusals(args: tuple[int, int, int], match: str) -> None:
    rows, sf_k, per = args
    with pytest.raises(ValueError, match=match):
        sf_tmem_layout(rows, SF_K=sf_k, sf_per_mma=per)
