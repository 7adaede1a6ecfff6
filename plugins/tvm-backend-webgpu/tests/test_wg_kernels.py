"""Kernels on the WebGPU device (wgpu on lavapipe) against numpy: core's shader kernel tests
(:mod:`tvm.testing.shader`: tile ops, reductions, softmax, tiled matmul, scalars in a uniform
struct, a grid from a scalar, WGSL's integer and math rules), and subgroup shuffles."""

from __future__ import annotations

import numpy as np
import pytest
from wg_helpers import SUBGROUPS, compile_webgpu

from tvm.script import tirx as T
from tvm.testing.shader import ShaderKernelTests

pytestmark = pytest.mark.usefixtures("webgpu_device")


class TestShaderKernels(ShaderKernelTests):
    compile = staticmethod(compile_webgpu)
    shared_decl = "var<workgroup> As: array<f32, "
    scalar_decls = ("struct tvm_args_t { a: f32, shift: i32, }",
                    "@group(0) @binding(2) var<uniform> tvm_args: tvm_args_t;")


@T.prim_func
def shuffles(A: T.Buffer((64,), "float32"), S: T.Buffer((64,), "float32"),
             D: T.Buffer((64,), "float32"), U: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    S[tx] = T.webgpu.subgroup_shuffle(A[tx], 0)
    D[tx] = T.webgpu.subgroup_shuffle_down(A[tx], 1)
    U[tx] = T.webgpu.subgroup_shuffle_up(A[tx], 1)


def test_subgroup_shuffles_run(webgpu_device):
    """Lane 0's value spreads over each subgroup; down/up read the neighbour lane. The subgroup
    width is the adapter's (8 on lavapipe): it is read off the broadcast, and must be one of
    the widths WebGPU allows."""
    if not webgpu_device["subgroups"]:
        pytest.skip(f"{webgpu_device['name']} has no subgroups")
    ex = compile_webgpu(shuffles, target=SUBGROUPS)
    a = np.arange(64, dtype="float32") * 3 + 1
    s, d, u = (np.zeros(64, "float32") for _ in range(3))
    ex(a, s, d, u)
    width = int(np.argmax(s != s[0])) or 64
    assert width in (4, 8, 16, 32, 64), s
    lane = np.arange(64) % width
    np.testing.assert_array_equal(s, a[np.arange(64) - lane])
    inner = lane < width - 1
    np.testing.assert_array_equal(d[inner], a[np.arange(64)[inner] + 1])
    outer = lane > 0
    np.testing.assert_array_equal(u[outer], a[np.arange(64)[outer] - 1])
