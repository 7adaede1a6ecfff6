"""WGSL codegen: the exact module of a kernel, the WGSL of core's T.webgpu shuffles, and the
errors for what WGSL or the target cannot express."""

from __future__ import annotations

import pytest
from wg_helpers import SUBGROUPS, TARGET

from tvm.error import CodegenError, TargetError
from tvm.script import tirx as T
from tvm.target import Target
from tvm.testing.shader import ShaderCodegenTests, saxpy
from tvm_backend_webgpu.codegen import generate_wgsl, split_modules


def _wgsl(func, target=TARGET) -> str:
    from tvm.driver import lower

    source, _ = generate_wgsl(lower(func, target=target), Target(target))
    return source


SAXPY = """\
// kernel: saxpy_kernel
override tvm_block_x: u32 = 1u;
override tvm_block_y: u32 = 1u;
override tvm_block_z: u32 = 1u;
@group(0) @binding(0) var<storage, read_write> X: array<f32>;
@group(0) @binding(1) var<storage, read_write> Y: array<f32>;
struct tvm_args_t { a: f32, }
@group(0) @binding(2) var<uniform> tvm_args: tvm_args_t;

@compute @workgroup_size(tvm_block_x, tvm_block_y, tvm_block_z)
fn saxpy_kernel(@builtin(workgroup_id) tvm_group: vec3<u32>, \
@builtin(local_invocation_id) tvm_local: vec3<u32>) {
  let a: f32 = tvm_args.a;
  let bx: i32 = i32(tvm_group.x);
  let tx: i32 = i32(tvm_local.x);
  Y[(bx * 128i) + tx] = ((X[(bx * 128i) + tx] * a) + Y[(bx * 128i) + tx]);
}
"""


class TestShaderCodegen(ShaderCodegenTests):
    generate = staticmethod(lambda func, target: _wgsl(func, target))
    kind, language = "webgpu", "WGSL"


def test_saxpy_module_text():
    assert _wgsl(saxpy()) == SAXPY
    assert list(split_modules(SAXPY)) == ["saxpy_kernel"]


@T.prim_func
def shuffle(A: T.Buffer((32,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    A[tx] = T.webgpu.subgroup_shuffle_down(A[tx], 2) + T.webgpu.subgroup_shuffle(A[tx], tx)


def test_webgpu_shuffles_print_as_wgsl_builtins():
    text = _wgsl(shuffle, SUBGROUPS)
    assert "A[tx] = (subgroupShuffleDown(A[tx], u32(2i)) + subgroupShuffle(A[tx], u32(tx)));" \
        in text
    assert "// uses subgroup builtins: the device needs the 'subgroup' feature" in text


def test_webgpu_shuffles_need_subgroups():
    with pytest.raises(CodegenError) as info:
        _wgsl(shuffle)
    assert info.value.args[0] == (
        "T.webgpu.subgroup_shuffle_down needs a WebGPU target with subgroups: add "
        "\"supports_subgroups\": True to the target (the device must have the 'subgroups' "
        "feature)")


def test_seed_target_attributes():
    assert Target("webgpu").attrs["thread_warp_size"] == 1
    assert Target(SUBGROUPS).attrs["thread_warp_size"] == 32
    with pytest.raises(TargetError, match="WebGPU target with thread_warp_size=16 requires "
                                          "supports_subgroups=true"):
        Target({"kind": "webgpu", "thread_warp_size": 16})


@T.prim_func
def doubles(A: T.Buffer((32,), "float64")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    A[tx] = A[tx] * T.float64(2)


def test_64_bit_types_are_refused():
    with pytest.raises(CodegenError, match=r"^data type float64 is not supported by target "
                                           r"'webgpu' \(WGSL computes int32, uint32, float32, "
                                           r"bool\)$"):
        _wgsl(doubles)


def test_too_many_storage_buffers():
    @T.prim_func
    def many(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
             C: T.Buffer((8,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([8])
        C[tx] = A[tx] + B[tx]

    with pytest.raises(CodegenError, match=r"^target 'webgpu': kernel `many_kernel` binds 3 "
                                           r"storage buffers; the target allows 2 "
                                           r"\(max_storage_buffers_per_shader_stage\)$"):
        _wgsl(many, {"kind": "webgpu", "max_storage_buffers_per_shader_stage": 2})


def test_reserved_words_are_renamed():
    @T.prim_func
    def reserved(target: T.Buffer((32,), "float32"), filter: T.Buffer((32,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([32])
        filter[tx] = target[tx]

    text = _wgsl(reserved)
    assert "var<storage, read_write> target_: array<f32>;" in text
    assert "filter_[tx] = target_[tx];" in text
