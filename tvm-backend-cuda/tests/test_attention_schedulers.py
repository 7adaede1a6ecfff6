"""The attention, rank-aware and indexed tile schedulers of ``tvm.backend.cuda.lang``: the order
in which each hands out work (every unit exactly once, longest first where it should), that they
compile in a kernel, and their errors."""

from __future__ import annotations

from typing import Any, no_type_check

import pytest

import tvm
from tvm.arith.analyzer import Analyzer
from tvm.ir import Buffer, IntImm, PrimExpr, Var
from tvm.ir.visitor import substitute
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()

from tvm.backend.cuda.lang import (  # noqa: E402 - the alias exists once the backend is loaded
    FlashAttentionLinearScheduler,
    FlashAttentionLPTScheduler,
    IndexedTripleTileScheduler,
    RankAwareGroupMajorTileScheduler,
)

_simplify = Analyzer().simplify


def _value(expr: PrimExpr, env: dict[Var, int]) -> int:
    out = _simplify(substitute(expr, {v: IntImm("int32", x) for v, x in env.items()}))
    assert isinstance(out, IntImm), out
    return out.value


def _order(sched: Any, extra: dict[Var, int] | None = None) -> list[tuple[int, ...]]:
    """The coordinates of linear units 0, 1, ... in the scheduler's order."""
    t = Var("t", "int32")
    exprs = sched.coords(t)
    return [tuple(_value(e, {t: i, **(extra or {})}) for e in exprs)
            for i in range(sched.num_tiles)]


def _all(batch: int, heads: int, q_blocks: int) -> list[tuple[int, int, int]]:
    return [(b, h, q) for b in range(batch) for h in range(heads) for q in range(q_blocks)]


def _makespan(order: list[tuple[int, int, int]], num_ctas: int) -> int:
    """The longest per-CTA causal work (query block q costs q + 1 key blocks) when persistent
    CTA c takes units c, c + num_ctas, ..."""
    return max(sum(order[i][2] + 1 for i in range(c, len(order), num_ctas))
               for c in range(num_ctas))


def test_linear_order_is_query_block_fastest() -> None:
    s = FlashAttentionLinearScheduler(2, 3, 4, num_ctas=5, cta_id=0)
    order = _order(s)
    assert order == _all(2, 3, 4)
    assert s.max_iters == 5  # 24 units over 5 CTAs


@pytest.mark.parametrize("batch,heads,q_blocks,section", [(2, 4, 8, None), (1, 3, 5, 2),
                                                         (3, 2, 7, 4), (2, 2, 3, 1)])
def test_lpt_visits_every_unit_once_longest_first(batch: int, heads: int, q_blocks: int,
                                                  section: int | None) -> None:
    s = FlashAttentionLPTScheduler(batch, heads, q_blocks, num_ctas=7, cta_id=0,
                                   section=section)
    order = _order(s)
    assert sorted(order) == _all(batch, heads, q_blocks)
    pairs = batch * heads
    sec = pairs if section is None else section
    # section by section; inside one, query blocks from the last to the first
    for start in range(0, pairs, sec):
        size = min(sec, pairs - start)
        chunk = order[start * q_blocks:(start + size) * q_blocks]
        assert {b * heads + h for b, h, _ in chunk} == set(range(start, start + size))
        qs = [q for _, _, q in chunk]
        assert qs == sorted(qs, reverse=True)
        assert qs[:size] == [q_blocks - 1] * size


def test_lpt_balances_causal_work_better_than_linear() -> None:
    batch, heads, q_blocks, ctas = 2, 4, 16, 12
    lpt = _order(FlashAttentionLPTScheduler(batch, heads, q_blocks, num_ctas=ctas, cta_id=0))
    lin = _order(FlashAttentionLinearScheduler(batch, heads, q_blocks, num_ctas=ctas, cta_id=0))
    total = sum(q + 1 for _, _, q in lin)
    # the linear order gives some CTAs only the long query blocks; LPT stays near the mean
    assert _makespan(lpt, ctas) < _makespan(lin, ctas)
    assert _makespan(lpt, ctas) <= 1.1 * total / ctas


def test_lpt_without_causal_goes_first_to_last() -> None:
    order = _order(FlashAttentionLPTScheduler(1, 2, 3, num_ctas=2, cta_id=0, causal=False))
    assert order == [(0, 0, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1), (0, 0, 2), (0, 1, 2)]


def test_rank_aware_starts_with_its_own_slice() -> None:
    rank = Var("rank", "int32")
    s = RankAwareGroupMajorTileScheduler(8, 3, num_ctas=4, cta_id=0, rank=rank, world_size=4,
                                         group_m=2)
    for r in range(4):
        order = _order(s, {rank: r})
        assert sorted(order) == [(m, n) for m in range(8) for n in range(3)]
        slices = [m // 2 for m, _ in order]
        # 6 tiles per slice (2 rows x 3 columns): its own, then the next ranks' in ring order
        assert slices == [(r + k) % 4 for k in range(4) for _ in range(6)]


@no_type_check
def _kernel() -> Any:
    @T.prim_func
    def k(table: T.Buffer((10, 3), "int32"), count: T.Buffer((1,), "int32"),
          out: T.Buffer((2, 4, 6), "int32"), out2: T.Buffer((10,), "int32")):
        T.device_entry()
        bx = T.cta_id([4])
        tx = T.thread_id([32])
        sched = FlashAttentionLPTScheduler(2, 4, 6, num_ctas=4, cta_id=bx, section=4)
        for _ in T.serial(sched.max_iters):
            if sched.valid:
                if tx == 0:
                    out[sched.b_idx, sched.h_idx, sched.q_idx] = bx
            sched.advance()
        idx = IndexedTripleTileScheduler(table, num_ctas=4, cta_id=bx, num_tiles=count[0])
        for _ in T.serial(idx.max_iters):
            if idx.valid:
                if tx == 0:
                    out2[idx.tile] = idx.b_idx * 100 + idx.m_idx * 10 + idx.n_idx
            idx.advance()

    return k


def test_attention_and_indexed_schedulers_compile_in_a_kernel() -> None:
    src = tvm.compile(_kernel(), target={"kind": "cuda", "arch": "sm_90a"}).inspect_source()
    assert "count[0]" in src and "table[" in src


@pytest.mark.gpu
def test_schedulers_on_the_gpu(device: str) -> None:
    torch = pytest.importorskip("torch")
    ex = tvm.compile(_kernel(), target="cuda")
    table = torch.randint(0, 10, (10, 3), dtype=torch.int32, device=device)
    count = torch.tensor([7], dtype=torch.int32, device=device)
    out = torch.full((2, 4, 6), -1, dtype=torch.int32, device=device)
    out2 = torch.full((10,), -1, dtype=torch.int32, device=device)
    ex(table, count, out, out2)
    if device == "cuda":
        torch.cuda.synchronize()
    # unit i of the LPT order is done by CTA i % 4
    order = _order(FlashAttentionLPTScheduler(2, 4, 6, num_ctas=4, cta_id=0, section=4))
    want = torch.empty_like(out)
    for i, (b, h, q) in enumerate(order):
        want[b, h, q] = i % 4
    assert torch.equal(out, want)
    t = table.long()
    want2 = torch.full((10,), -1, dtype=torch.long, device=device)
    want2[:7] = (t[:, 0] * 100 + t[:, 1] * 10 + t[:, 2])[:7]
    assert torch.equal(out2.long(), want2)


def test_scheduler_errors() -> None:
    with pytest.raises(ValueError, match="FlashAttentionLPTScheduler: section must be at least "
                                         "1, got 0"):
        FlashAttentionLPTScheduler(1, 2, 3, num_ctas=2, cta_id=0, section=0)
    with pytest.raises(ValueError, match="FlashAttentionLinearScheduler: q_blocks must be a "
                                         "constant integer"):
        FlashAttentionLinearScheduler(1, 2, Var("q", "int32"), num_ctas=2, cta_id=0)
    with pytest.raises(ValueError, match="RankAwareGroupMajorTileScheduler: 6 tile rows do not "
                                         "split into 4 equal rank slices"):
        RankAwareGroupMajorTileScheduler(6, 2, num_ctas=2, cta_id=0, rank=0, world_size=4)
    with pytest.raises(ValueError, match="IndexedTripleTileScheduler: the table has 2 columns; "
                                         r"it needs 3 \(b, m, n\)"):
        IndexedTripleTileScheduler(Buffer("t", [8, 2], "int32"), num_ctas=2, cta_id=0)
    with pytest.raises(ValueError, match="IndexedTripleTileScheduler: the table must be int32"):
        IndexedTripleTileScheduler(Buffer("t", [8, 3], "int64"), num_ctas=2, cta_id=0)
