"""``permute_layout`` of a tile in memory at warp scope (variant ``warp_xor_swizzle_mem``, the
seed's ``warp_xor_swizzle``): the bank model that picks the lane XOR, the kernel it builds, and
its result against numpy."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.operator.tile_primitive.dispatcher import lower_tile_primitives
from tvm_backend_cuda.dispatch.permute_layout import _bank_free, _check_bijection, _choose_xor_k


def test_seed_module_path() -> None:
    import importlib

    mod = importlib.import_module("tvm.tirx.cuda.operator.tile_primitive.permute_layout."
                                  "warp_xor_swizzle")
    assert mod._choose_xor_k is _choose_xor_k


def test_bank_model() -> None:
    # (2, 32) row-major: lane l reads word 32 s + l, always free
    assert _bank_free([2, 32], [32, 1], 4, 2, 0)
    # transposed (1, 2): lane l writes word 2 l + slot, lanes l and l + 16 share a bank
    assert not _bank_free([2, 32], [1, 2], 4, 2, 0)
    # one lane bit (l >> 4) into the slot separates them
    assert _bank_free([2, 32], [1, 2], 4, 2, 1)
    assert _choose_xor_k([2, 32], [32, 1], [1, 2], 4, 2) == 1
    # (8, 32) transposed needs three bits; more than log2(P) bits never apply
    assert _choose_xor_k([8, 32], [32, 1], [1, 8], 4, 8) == 3
    assert not _bank_free([2, 32], [1, 2], 4, 2, 2)
    # 2-byte elements pair up in a bank whatever the slot order
    assert _choose_xor_k([2, 32], [32, 1], [1, 2], 2, 2) is None


def test_bijection() -> None:
    assert _check_bijection([2, 32], [1, 2])
    assert not _check_bijection([2, 32], [1, 1])
    assert not _check_bijection([2, 32], [0, 1])


SHAPE = (2, 32)


@no_type_check
def _kernel(dtype: str) -> Any:
    pre = TileLayout(S[SHAPE:(32, 1)])
    post = TileLayout(S[SHAPE:(1, 2)])

    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, SHAPE, dtype, layout=pre)
        B = T.match_buffer(B_ptr, SHAPE, dtype, layout=post)
        T.device_entry()
        T.cta_id([1])
        T.thread_id([32])
        Tx.warp.permute_layout(B, A)

    return k


def test_picks_the_memory_variant() -> None:
    trace: list[tuple[str, str, str]] = []
    lower_tile_primitives(_kernel("float32"), tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}),
                          trace=trace)
    assert [v for op, _, v in trace if op == "tirx.tile.permute_layout"] == ["warp_xor_swizzle_mem"]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_transpose_matches_numpy(device: str, dtype: str) -> None:
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with target:
        ex = tvm.compile(tvm.IRModule({"main": _kernel(dtype)}), target=target, tir_pipeline="tirx")
    src = ex.mod.imports[0].inspect_source()
    assert ">> 4" in src and "__syncwarp" in src  # slot ^ (lane >> 4), then the warp barrier
    a = (np.arange(64) * 3 - 50).astype(dtype)
    dev = tvm.cuda(0)
    A = tvm.runtime.tensor(a.reshape(SHAPE), device=dev)
    B = tvm.runtime.tensor(np.zeros(SHAPE, dtype), device=dev)
    ex(A, B)
    # logical (i, j) sits at memory i * 32 + j in A and at i + 2 j in B
    want = np.zeros(64, dtype)
    for i in range(2):
        for j in range(32):
            want[i + 2 * j] = a[i * 32 + j]
    np.testing.assert_array_equal(B.numpy().reshape(-1), want)
