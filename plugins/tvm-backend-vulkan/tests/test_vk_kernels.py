"""Kernels on the Vulkan device (lavapipe on a CPU) against numpy: core's shader kernel tests
(:mod:`tvm.testing.shader`: tile ops, reductions, softmax, tiled matmul, scalars through push
constants, a grid from a scalar, GLSL's integer and math rules), and 64-bit types."""

from __future__ import annotations

import numpy as np
import pytest
from vk_helpers import compile_vulkan

from tvm.script import tirx as T
from tvm.testing.shader import ShaderKernelTests

pytestmark = pytest.mark.usefixtures("vulkan_device")


class TestShaderKernels(ShaderKernelTests):
    compile = staticmethod(compile_vulkan)
    shared_decl = "shared float As["
    scalar_decls = ("layout(push_constant) uniform tvm_push_constants { layout(offset = 0) "
                    "float a; layout(offset = 4) int shift; };",)


@T.prim_func
def wide(A: T.Buffer((32,), "float64"), B: T.Buffer((32,), "int64")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    A[tx] = T.sqrt(A[tx]) + T.float64(0.25)
    B[tx] = B[tx] * T.int64(3000000000)


def test_64_bit_types_where_the_target_declares_them(vulkan_device):
    if not (vulkan_device["shader_float64"] and vulkan_device["shader_int64"]):
        pytest.skip(f"{vulkan_device['name']} has no shaderFloat64/shaderInt64")
    target = {"kind": "vulkan", "supports_float64": True, "supports_int64": True}
    ex = compile_vulkan(wide, target=target)
    assert "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require" in \
        ex.inspect_source()
    a = np.arange(32, dtype="float64") ** 2
    b = np.arange(32, dtype="int64") - 16
    ex(a, b)
    np.testing.assert_array_equal(a, np.arange(32) + 0.25)
    np.testing.assert_array_equal(b, (np.arange(32) - 16) * 3000000000)
