"""Golden MSL of the codegen, and the shim syntax check of everything it emits."""

from __future__ import annotations

import pytest
from metal_helpers import compile_metal

from tvm.error import CompileError, TVMError
from tvm.script import tirx as T

VADD_MSL = """\
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

kernel void vadd_kernel(device float* A [[buffer(0)]],
                        device float* B [[buffer(1)]],
                        device float* C [[buffer(2)]],
                        uint3 blockIdx [[threadgroup_position_in_grid]],
                        uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  C[(bx * 128) + tx] = (A[(bx * 128) + tx] + B[(bx * 128) + tx]);
}
"""

MIXED_MSL = """\
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

kernel void kern_kernel(device half* A [[buffer(0)]],
                        device bfloat* B [[buffer(1)]],
                        device float* C [[buffer(2)]],
                        device float* D [[buffer(3)]],
                        constant int& n [[buffer(4)]],
                        uint3 blockIdx [[threadgroup_position_in_grid]],
                        uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  threadgroup float sh[64];
  sh[tx] = (exp(C[tx]) + (((float)(A[tx])) * ((float)(B[tx]))));
  threadgroup_barrier(mem_flags::mem_threadgroup);
  simdgroup_float8x8 sg[1];
  simdgroup_load(sg[0], (&sh[0]), 8, 0, false);
  simdgroup_store(sg[0], (&D[0]), 8, 0, true);
  C[tx] = (max(simd_shuffle_down(sh[tx], 1), ((float)(n))) + simd_sum(sh[tx]));
  A[tx] = (A[tx] * ((half)2.0f));
  B[tx] = ((bfloat)(sqrt((float)(B[tx]))));
}
"""


@T.prim_func
def vadd(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"),
         C: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    C[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]


@T.prim_func
def kern(A: T.Buffer((64,), "float16"), B: T.Buffer((64,), "bfloat16"),
         C: T.Buffer((64,), "float32"), D: T.Buffer((64,), "float32"), n: T.int32):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    sh = T.alloc_buffer((64,), "float32", scope="shared")
    sh[tx] = T.exp(C[tx]) + T.float32(A[tx]) * T.float32(B[tx])
    T.metal.threadgroup_barrier()
    sg = T.alloc_buffer((64,), "float32", scope="metal.simdgroup")
    T.metal.simdgroup_load(sg.data, 0, T.address_of(sh[0]), 8)
    T.metal.simdgroup_store(sg.data, 0, T.address_of(D[0]), 8, 8, 8, True)
    C[tx] = T.max(T.metal.simd_shuffle_down(sh[tx], 1), T.float32(n)) + T.metal.simd_sum(sh[tx])
    A[tx] = A[tx] * T.float16(2)
    B[tx] = T.sqrt(B[tx])


def test_golden_vadd():
    assert compile_metal(vadd).inspect_source() == VADD_MSL


def test_golden_address_spaces_types_and_intrinsics():
    assert compile_metal(kern).inspect_source() == MIXED_MSL


@T.prim_func
def math_kernel(A: T.Buffer((32,), "float32"), H: T.Buffer((32,), "float16"),
                L: T.Buffer((32,), "int64"), U: T.Buffer((32,), "uint32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    A[tx] = T.sigmoid(A[tx]) + T.log2(A[tx]) + T.round(A[tx]) + T.fmod(A[tx], T.float32(3))
    A[tx] = T.min(A[tx], T.float32(1)) + T.floordiv(A[tx], T.float32(2)) + T.abs(A[tx])
    H[tx] = T.tanh(H[tx]) + T.max(H[tx], T.float16(0))
    L[tx] = L[tx] * T.int64(3) + T.int64(4294967296)
    U[tx] = T.popcount(U[tx]) + T.clz(U[tx])
    A[tx] = T.reinterpret("float32", U[tx])


def test_math_uses_msl_overloads():
    src = compile_metal(math_kernel).inspect_source()
    for text in ("(1.0f / (1.0f + exp(-(A[tx]))))", "log2(A[tx])", "rint(A[tx])",
                 "fmod(A[tx], 3.0f)", "min(A[tx], 1.0f)", "floor(A[tx] / 2.0f)",
                 "fabs(A[tx])", "tanh(H[tx])", "max(H[tx], ((half)0.0f))",
                 "((long)4294967296L)", "popcount(U[tx])", "clz(U[tx])",
                 "as_type<float>(U[tx])", "device long* L", "device uint* U"):
        assert text in src, text
    for c_only in ("expf", "fminf", "INT64_C", "nearbyintf", "memcpy"):
        assert c_only not in src


def test_reserved_msl_names_are_renamed():
    @T.prim_func
    def f(device: T.Buffer((32,), "float32"), kernel: T.Buffer((32,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([32])
        kernel[tx] = device[tx]

    src = compile_metal(f).inspect_source()
    assert "device float* device_ [[buffer(0)]]" in src
    assert "kernel_[tx] = device_[tx];" in src


def test_only_8x8_simdgroup_matrices():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([32])
        sg = T.alloc_buffer((64,), "float32", scope="metal.simdgroup")
        T.metal.simdgroup_load(sg.data, 0, T.address_of(A[0]), 8, 16, 8)

    with pytest.raises(TVMError, match="only 8x8 matrices are supported on Metal, but got 16x8"):
        compile_metal(f)


def test_unsupported_math_names_the_op():
    @T.prim_func
    def f(A: T.Buffer((32,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([32])
        A[tx] = T.erf(A[tx])

    with pytest.raises(TVMError, match="`tirx.erf` is not supported on target 'metal'"):
        compile_metal(f)


def test_host_form_function_runs_as_one_thread_kernel():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = A[i] * T.float32(2)

    src = compile_metal(f).inspect_source()
    assert "kernel void f_kernel(device float* A [[buffer(0)]]," in src
    assert "for (int i = 0; i < 8; ++i) {" in src


def test_check_msl_catches_an_error_in_generated_source():
    from tvm_backend_metal.msl_check import check_msl

    src = compile_metal(vadd).inspect_source().replace("A[(bx * 128) + tx]", "A[(bx * 128) + tq]")
    with pytest.raises(CompileError, match="tq"):
        check_msl(src)
