"""``T.cta_id_in_pair()`` (issue 28): the CTA's rank in its cluster modulo 2 (Blackwell's CTA
pairs share ``tcgen05`` ``cta_group::2`` work), for targets with the ``cta_pairs`` attribute
(``sm_100a`` and its family); elsewhere a ``KernelFormError`` that names the target."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.error import KernelFormError
from tvm.target import Target
from tvm_backend_cuda.plugin import register_backend

register_backend()

SM100 = {"kind": "cuda", "arch": "sm_100a"}


@no_type_check
def _pairs(cluster: tuple[int, int] = (4, 2), grid: tuple[int, int] = (8, 4)) -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def pairs(out: T.Buffer((grid[1], grid[0], 2), "int32")):
        T.device_entry()
        bx, by = T.cta_id(list(grid))
        cx, cy = T.cta_id_in_cluster(list(cluster))
        pair = T.cta_id_in_pair()
        tx = T.thread_id([32])
        if tx == 0:
            out[by, bx, 0] = pair
            out[by, bx, 1] = cx + cy * cluster[0]

    return pairs


def _expected(cluster: tuple[int, int], grid: tuple[int, int]) -> np.ndarray:
    by, bx = np.meshgrid(np.arange(grid[1]), np.arange(grid[0]), indexing="ij")
    rank = bx % cluster[0] + (by % cluster[1]) * cluster[0]
    return np.stack([rank % 2, rank], axis=-1).astype("int32")


def test_the_cuda_target_says_which_archs_have_pairs() -> None:
    assert Target(SM100).attrs["cta_pairs"] is True
    assert Target({"kind": "cuda", "arch": "sm_90a"}).attrs["cta_pairs"] is False
    assert Target({"kind": "cuda", "arch": "sm_100"}).attrs["cta_pairs"] is False
    assert Target({"kind": "cuda", "arch": "sm_120a"}).attrs["cta_pairs"] is False


def test_the_pair_index_is_the_cluster_rank_modulo_2() -> None:
    ex = tvm.compile(_pairs(), target=SM100)
    src = ex.inspect_source()
    assert "__cluster_dims__(4, 2, 1)" in src
    assert "const int pair = (bx % 2);" in src  # rank = bx % 4 + 4 * (by % 2): even stride
    assert ex.cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("cluster, grid", [((4, 2), (8, 4)), ((1, 2), (2, 4))])
def test_pair_indices_match_numpy_when_emulated(cluster: tuple[int, int], grid: tuple[int, int],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from tvm_backend_cuda import emulator

    monkeypatch.setattr(emulator, "DEVICE_ARCH", "sm_100a")  # an emulated device that has pairs
    ex = tvm.compile(_pairs(cluster, grid), target=SM100, emulate=True)
    out = np.full((grid[1], grid[0], 2), -1, "int32")
    ex(out)
    np.testing.assert_array_equal(out, _expected(cluster, grid))


def test_an_arch_without_pairs_is_named() -> None:
    with pytest.raises(KernelFormError, match=r"target cuda -arch=sm_90a has no CTA pairs.*"
                                              r"cuda -arch=sm_100a"):
        tvm.compile(_pairs(), target={"kind": "cuda", "arch": "sm_90a"})


def test_pairs_need_even_clusters() -> None:
    with pytest.raises(KernelFormError, match=r"clusters of 3 CTA\(s\); define "
                                              r"T.cta_id_in_cluster\(\[2\]\)"):
        tvm.compile(_pairs((3, 1), (6, 1)), target=SM100)
