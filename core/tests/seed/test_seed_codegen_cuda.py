"""The seed's CUDA codegen programs (``tests/python/tirx/codegen/test_codegen_cuda.py`` at the
seed's commit): launch bounds, ``T.serial(n, unroll=True)``, cluster ids alone, a ``T.TensorMap()``
parameter. Each is compiled through ``tvm.compile(..., tir_pipeline="tirx")``: the CUDA source is
checked by text and NVRTC compiles it (no GPU needed)."""

from __future__ import annotations

import pytest

import tvm
from tvm.script import tirx as T


def _source(func, target="cuda"):
    ex = tvm.compile(func, target=target, tir_pipeline="tirx")  # NVRTC runs here
    return ex.inspect_source()


def test_launch_bounds_omits_min_blocks_without_the_attribute(cuda):
    @T.prim_func
    def main(A: T.Buffer((4,), "int32")):
        T.device_entry()
        bx = T.cta_id([4])
        tx = T.thread_id([128])
        if tx == 0:
            A[bx] = A[bx] + 1

    src = _source(main)
    assert 'extern "C" __global__ void __launch_bounds__(128) main_kernel' in src
    assert "__launch_bounds__(128, 1)" not in src


def test_launch_bounds_min_blocks_attr_sets_one_block_per_sm(cuda):
    """The attribute stands before the kernel ids, as the seed writes it."""

    @T.prim_func
    def main(A: T.Buffer((4,), "int32")):
        T.device_entry()
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        bx = T.cta_id([4])
        tx = T.thread_id([128])
        if tx == 0:
            A[bx] = A[bx] + 1

    src = _source(main)
    assert 'extern "C" __global__ void __launch_bounds__(128, 1) main_kernel' in src
    assert "tirx.launch_bounds_min_blocks_per_sm" not in src


def test_launch_bounds_both_attributes_before_the_ids(cuda):
    @T.prim_func
    def main(A: T.Buffer((4,), "int32")):
        T.device_entry()
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1,
                "tirx.launch_bounds_max_blocks_per_cluster": 1})
        bx = T.cta_id([4])
        tx = T.thread_id([384])
        if tx == 0:
            A[bx] = A[bx] + 1

    src = _source(main, "nvidia/nvidia-h100")
    assert 'extern "C" __global__ void __launch_bounds__(384, 1, 1) main_kernel' in src


def test_serial_pragma_unroll_codegen(cuda):
    @T.prim_func
    def main(A: T.Buffer((4,), "int32")):
        T.device_entry()
        tx = T.thread_id([32])
        if tx == 0:
            for i in T.serial(4, unroll=True):
                if i == 2:
                    break
                A[i] = A[i] + 1

    src = _source(main)
    assert "#pragma unroll\n    for (int i = 0; i < 4; ++i) {" in src
    assert "break;" in src


def test_cluster_ids_alone(cuda):
    @T.prim_func
    def in_cluster(A: T.Buffer((1,), "int32")):
        T.device_entry()
        cbx, cby = T.cta_id_in_cluster([2, 2])
        tx = T.thread_id([32])
        if tx == 0:
            A[0] = cbx + cby

    src = _source(in_cluster, "nvidia/nvidia-h100")
    assert "__cluster_dims__(2, 2, 1)" in src  # the grid is one cluster of 2 x 2 CTAs

    @T.prim_func
    def clusters(A: T.Buffer((4,), "int32")):
        T.device_entry()
        c = T.cluster_id([4])
        tx = T.thread_id([32])
        if tx == 0:
            A[c] = c

    ex = tvm.compile(clusters, target="nvidia/nvidia-h100", tir_pipeline="tirx")
    assert "__cluster_dims__" not in ex.inspect_source()  # clusters of one CTA
    mod = tvm.driver.lower(clusters, "nvidia/nvidia-h100")
    (kernel,) = [f for f in mod.functions.values() if f.attrs.get("tirx.is_kernel")]
    assert [e.value for e in kernel.attrs["tirx.launch"].grid] == [4, 1, 1]


def test_tensor_map_param_codegen(cuda):
    @T.prim_func
    def main(A_map: T.TensorMap()):
        T.device_entry()
        tx = T.thread_id([32])
        if tx == 0:
            T.ptx.prefetch_tensormap(A_map)

    src = _source(main, "nvidia/nvidia-h100")
    assert "const __grid_constant__ CUtensorMap A_map" in src


@pytest.mark.parametrize("order", ["before", "between"])
def test_kernel_ids_may_follow_attributes_and_lets(cuda, order):
    """Item 1 of the issue: attributes (and lets) before or between the ids."""
    if order == "before":
        @T.prim_func
        def main(A: T.Buffer((8,), "int32")):
            T.device_entry()
            T.attr({"tirx.launch_bounds_min_blocks_per_sm": 2})
            w = T.warp_id([4])
            lane = T.lane_id([32])
            if lane == 0:
                A[w] = w
    else:
        @T.prim_func
        def main(A: T.Buffer((8,), "int32")):
            T.device_entry()
            w = T.warp_id([4])
            w2: T.int32 = w * 2
            T.attr({"tirx.launch_bounds_min_blocks_per_sm": 2})
            lane = T.lane_id([32])
            if lane == 0:
                A[w2] = w

    src = _source(main)
    assert "__launch_bounds__(128, 2)" in src
