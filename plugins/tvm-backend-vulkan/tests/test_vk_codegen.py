"""GLSL codegen: the exact shader of a kernel, and the errors for what GLSL or the target
cannot express (each names what is wrong and how to fix it)."""

from __future__ import annotations

import pytest
from vk_helpers import TARGET

from tvm.error import CodegenError
from tvm.script import tirx as T
from tvm.testing.shader import ShaderCodegenTests, saxpy
from tvm_backend_vulkan.codegen import generate_glsl, split_shaders


def _glsl(func, target=TARGET) -> str:
    from tvm.driver import lower
    from tvm.target import Target

    source, _ = generate_glsl(lower(func, target=target), Target(target))
    return source


SAXPY = """\
// kernel: saxpy_kernel
#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) buffer tvm_buffer_0 { float X[]; };
layout(std430, set = 0, binding = 1) buffer tvm_buffer_1 { float Y[]; };
layout(push_constant) uniform tvm_push_constants { layout(offset = 0) float a; };

void main() {
  const int bx = int(gl_WorkGroupID.x);
  const int tx = int(gl_LocalInvocationID.x);
  Y[(bx * 128) + tx] = ((X[(bx * 128) + tx] * a) + Y[(bx * 128) + tx]);
}
"""


class TestShaderCodegen(ShaderCodegenTests):
    generate = staticmethod(lambda func, target: _glsl(func, target))
    kind, language = "vulkan", "GLSL"


def test_saxpy_shader_text():
    assert _glsl(saxpy()) == SAXPY
    assert list(split_shaders(SAXPY)) == ["saxpy_kernel"]


@T.prim_func
def doubles(A: T.Buffer((32,), "float64")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    A[tx] = A[tx] * T.float64(2)


def test_float64_needs_the_target_flag():
    with pytest.raises(CodegenError) as info:
        _glsl(doubles)
    assert str(info.value) == (
        "data type float64 needs a device with supports_float64=True; target 'vulkan' does "
        "not declare it (add \"supports_float64\": True to the target if the device has it)")
    text = _glsl(doubles, {"kind": "vulkan", "supports_float64": True})
    assert "buffer tvm_buffer_0 { double A[]; };" in text and "2.0lf" in text


@T.prim_func
def transcendental_double(A: T.Buffer((32,), "float64")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    A[tx] = T.exp(A[tx])


def test_math_without_a_double_overload():
    with pytest.raises(CodegenError, match=r"op `tirx.exp` has no codegen rule for data type "
                                           r"float64 on target 'vulkan' \(rules exist for "
                                           r"\['float32'\]\)"):
        _glsl(transcendental_double, {"kind": "vulkan", "supports_float64": True})


@T.prim_func
def big_shared(A: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    S = T.alloc_buffer((8192,), "float32", scope="shared")
    S[tx] = A[tx]
    A[tx] = S[tx]


def test_shared_memory_limit():
    with pytest.raises(CodegenError, match=r"^target 'vulkan': shared buffer `S` brings the "
                                           r"kernel's shared memory to 32768 bytes; the target "
                                           r"allows 16384 \(max_shared_memory_per_block\)$"):
        _glsl(big_shared)
    text = _glsl(big_shared, {"kind": "vulkan", "max_shared_memory_per_block": 32768})
    assert "shared float S[8192];" in text


def test_reserved_words_are_renamed():
    @T.prim_func
    def reserved(input: T.Buffer((32,), "float32"), output: T.Buffer((32,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([32])
        output[tx] = input[tx]

    text = _glsl(reserved)
    assert "{ float input_[]; }" in text and "{ float output_[]; }" in text
    assert "output_[tx] = input_[tx];" in text


def test_target_kind_attributes_are_checked():
    from tvm.error import TargetError
    from tvm.target import Target

    with pytest.raises(TargetError, match="max_num_threads \\(512\\) exceeds "
                                          "max_threads_per_block \\(256\\)"):
        Target({"kind": "vulkan", "max_num_threads": 512})
    t = Target({"kind": "vulkan", "device": "adreno"})
    assert t.attrs["device"] == "adreno" and t.keys == ("vulkan", "gpu")
