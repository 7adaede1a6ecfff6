"""The swizzle-iteration recognizer (``dispatch/swizzle_iter``, the seed's ``copy/_swizzle_iter``):
what it accepts, and that its add-only offsets equal the swizzle applied per access."""

from __future__ import annotations

import itertools

import pytest

from tvm.ir import ComposeLayout, S, SwizzleLayout, TileLayout, Var, const
from tvm_backend_cuda.dispatch.swizzle_iter import (
    _BitIter,
    _LinearIter,
    emit_init,
    emit_iter_offset,
    get_swizzle,
    try_recognize,
)


def _value(e: object) -> int:
    return int(e.value)  # type: ignore[attr-defined]


def test_seed_module_path_is_this_module() -> None:
    from tvm.tirx.cuda.operator.tile_primitive.copy import _swizzle_iter

    assert _swizzle_iter.try_recognize is try_recognize


def test_get_swizzle() -> None:
    sw = SwizzleLayout(2, 2, 3)
    assert get_swizzle(sw) is sw
    assert get_swizzle(ComposeLayout(sw, TileLayout(S[(32, 32)]))) is sw
    assert get_swizzle(TileLayout(S[(32, 32)])) is None


@pytest.mark.parametrize(
    "p,sw,at,exts,strides,row",
    [
        (2, 2, 3, [2, 2], [4, 8], 64),          # two chunk bits
        (2, 1, 3, [2, 2], [4, 16], 32),         # a chunk bit and a mid bit
        (3, 2, 2, [8, 2], [256, 8], 32),        # a whole-block iteration of extent 8 outside
        (2, 2, 2, [3, 4], [64, 4], 16),         # a non-power-of-two whole-block iteration
    ],
)
def test_offsets_equal_the_swizzle(p: int, sw: int, at: int, exts: list[int],
                                   strides: list[int], row: int) -> None:
    swz = SwizzleLayout(p, sw, at)
    tid = Var("t", "int32")
    pat = try_recognize(swz, exts, strides, tid * row)
    assert pat is not None
    for t in range(24):
        m0 = const(t * row, "int32")
        base, signed = emit_init(pat, m0)
        for coords in itertools.product(*(range(e) for e in exts)):
            ds = sum(c * s for c, s in zip(coords, strides))
            got = _value(emit_iter_offset(pat, signed, base, list(coords)))
            assert got == swz.swizzle(t * row + ds).value, (t, coords)


def test_split_and_kinds() -> None:
    swz = SwizzleLayout(2, 2, 3)  # C = 4, period 2**7
    pat = try_recognize(swz, [5, 4], [128, 4], const(0, "int32"))
    assert pat is not None
    assert pat.outer_iters == [_LinearIter(5, 128), _BitIter(4, 4, 2, 0)]
    assert pat.bit_positions == [1, 0] and pat.iter_strides_elems == [8, 4]


@pytest.mark.parametrize(
    "exts,strides,row,why",
    [
        ([2], [2], 64, "half a chunk"),
        ([2], [12], 64, "three chunks: not a power of two"),
        ([2], [32], 64, "bit 3 is a row bit"),
        ([2, 2], [4, 4], 64, "two iterations on one bit"),
        ([2], [4], 4, "the start's chunk index may have bit 0 set"),
        ([3], [4], 64, "extent 3 inside a swizzle block"),
    ],
)
def test_rejects(exts: list[int], strides: list[int], row: int, why: str) -> None:
    tid = Var("t", "int32")
    assert try_recognize(SwizzleLayout(2, 2, 3), exts, strides, tid * row) is None, why


def test_mismatched_lists_are_an_error() -> None:
    with pytest.raises(ValueError, match="one stride per outer iteration"):
        try_recognize(SwizzleLayout(2, 2, 3), [2, 2], [4], const(0, "int32"))
