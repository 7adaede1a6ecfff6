"""OpenCL C as printed: exact text of small kernels, the differences from C as data, and the
errors of what OpenCL cannot express."""

from __future__ import annotations

import pytest
from opencl_helpers import compile_opencl

import tvm.driver
from tvm.error import CodegenError
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def _source(func, target="opencl", **options):
    options.setdefault("check", False)  # the text alone: no device needed
    return compile_opencl(func, target, **options).inspect_source()


@T.prim_func
def axpy(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), a: T.float32,
         n: T.int64):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    Y[bx * 128 + tx] = T.exp(X[bx * 128 + tx]) * a + Y[bx * 128 + tx] + T.Cast("float32", n)


def test_kernel_text():
    assert _source(axpy) == (
        "__kernel void __attribute__((reqd_work_group_size(128, 1, 1)))\n"
        "axpy_kernel(__global float* restrict X, __global float* restrict Y, float a, long n) {\n"
        "  const int bx = (int)get_group_id(0);\n"
        "  const int tx = (int)get_local_id(0);\n"
        "  Y[(bx * 128) + tx] = (((exp(X[(bx * 128) + tx]) * a) + Y[(bx * 128) + tx]) + "
        "((float)(n)));\n"
        "}\n")


@T.prim_func
def shared_in_loop(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 64), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    for i in T.serial(4):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        S[tx] = A[i, tx] * 2.0
        T.opencl.barrier("local")
        B[i, tx] = S[63 - tx]


def test_local_arrays_are_declared_in_the_kernel_scope():
    src = _source(shared_in_loop)
    lines = src.splitlines()
    assert lines[2] == "  __local float S[64] __attribute__((aligned(16)));"
    assert src.count("__local float S[64]") == 1
    assert "    barrier(CLK_LOCAL_MEM_FENCE);" in lines


@T.prim_func
def halves(A: T.Buffer((64,), "float16"), B: T.Buffer((64,), "float16"),
           C: T.Buffer((64,), "float64")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    B[tx] = A[tx] * T.float16(2)
    C[tx] = T.Cast("float64", A[tx])


def test_half_without_fp16_goes_through_vload_half():
    src = _source(halves)
    assert src.startswith("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n")
    assert "cl_khr_fp16" not in src
    assert "__global ushort* restrict A" in src
    assert "vload_half(0, (const half*)&h)" in src and "vstore_half_rte(f, 0, (half*)&h)" in src
    assert ("  B[tx] = tvm_f32_to_f16(tvm_round_f16(tvm_f16_to_f32(A[tx]) * "
            "tvm_round_f16(2.0f)));") in src.splitlines()


def test_half_with_fp16_is_native():
    src = _source(halves, {"kind": "opencl", "fp16": True})
    assert src.startswith("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                          "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n")
    assert "__global half* restrict A" in src and "vload_half" not in src


@T.prim_func
def vec4(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.device_entry()
    bx = T.cta_id([8])
    tx = T.thread_id([32])
    for v in T.vectorized(4):
        B[bx * 128 + tx * 4 + v] = A[bx * 128 + tx * 4 + v] * 2.0 + 1.0


def test_vector_stores_use_vector_types():
    assert ("  vstore4(((vload4(0, A + (bx * 128) + (tx * 4)) * ((float4)(2.0f))) + "
            "((float4)(1.0f))), 0, B + (bx * 128) + (tx * 4));") in _source(vec4).splitlines()


@T.prim_func
def strided(A: T.Buffer((1024,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([32])
    for v in T.vectorized(4):
        B[bx * 128 + tx * 4 + v] = A[(bx * 128 + tx * 4 + v) * 4]


def test_strided_vector_loads_are_printed_lane_by_lane():
    src = _source(strided)
    assert "vload" not in src and "vstore" not in src
    assert src.count("B[") == 4


@T.prim_func
def too_wide(A: T.Buffer((2048,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([2048])
    A[tx] = 1.0


def test_work_group_larger_than_the_target_allows():
    with pytest.raises(CodegenError) as err:
        _source(too_wide)
    # core's device-limit check, before codegen, at the T.thread_id line (issue 26)
    assert str(err.value).splitlines()[0].endswith(
        "error: kernel `too_wide_kernel`: a block of 2048 threads; target 'opencl' allows at "
        "most 1024 (max_threads_per_block): use fewer threads per block and more blocks")
    assert "reqd_work_group_size(2048, 1, 1)" in _source(
        too_wide, {"kind": "opencl", "max_threads_per_block": 4096})


@T.prim_func
def big_local(A: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    S = T.alloc_buffer((16384,), "float32", scope="shared")
    S[tx] = A[tx]
    A[tx] = S[tx]


def test_local_memory_beyond_the_target():
    with pytest.raises(CodegenError) as err:
        _source(big_local)
    assert str(err.value).splitlines()[0].endswith(
        "error: kernel `big_local_kernel`: shared buffer `S` brings its shared memory to 65536 "
        "bytes; target 'opencl' allows at most 32768 (max_shared_memory_per_block): use smaller "
        "tiles")


@T.prim_func
def reduce_rows(A: T.Buffer((4, 1000), "float32"), S: T.Buffer((4,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    Tx.cta.sum(S, A, axes=-1)


def test_tree_reduction_text():
    src = _source(reduce_rows)
    assert "  __local float red_scratch[128] __attribute__((aligned(16)));" in src
    assert src.count("barrier(CLK_LOCAL_MEM_FENCE);") == 8  # after the partials + 7 halvings
    assert "if (((red_k * 128) + tx) < 1000) {" in src


def test_lowered_module_of_the_tree_reduction_prints_the_barriers():
    mod = tvm.driver.lower(reduce_rows, target="opencl")
    text = "\n".join(f.script() for f in mod.functions.values())
    assert 'T.opencl.barrier("local")' in text and 'T.opencl.barrier("local_global")' in text


@T.prim_func
def host_form(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    tmp = T.alloc_buffer((8,), "float32")
    for i in T.serial(8):
        Tx.sum(tmp[i:i + 1], A[i:i + 1, 0:16], axes=-1)
    for i in T.serial(8):
        B[i] = tmp[i] * 2.0


@T.prim_func
def global_in_many_threads(A: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    tmp = T.alloc_buffer((64,), "float32")
    tmp[tx] = A[tx]
    A[tx] = tmp[63 - tx]


def test_global_allocations_in_kernels():
    """Host-form code runs as one CTA of one thread: its small allocations are private arrays.
    In a kernel of several work-items a global allocation would be shared: refused."""
    src = _source(host_form)
    assert "reqd_work_group_size(1, 1, 1)" in src
    assert "  float tmp[8] __attribute__((aligned(16)));" in src.splitlines()
    with pytest.raises(CodegenError) as err:
        _source(global_in_many_threads)
    assert str(err.value) == (
        "target 'opencl': a kernel cannot allocate buffer `tmp` in scope 'global' (shape [64]): "
        "allocate it in 'local', 'shared' or 'shared.dyn' with a constant shape, or pass it as a "
        "parameter")


@T.prim_func
def unrolled(A: T.Buffer((64, 8), "float32"), B: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    for k in T.serial(8, unroll=True):
        B[tx] = B[tx] + A[tx, k]


def test_unroll_hint_is_opencl_s():
    lines = _source(unrolled).splitlines()
    i = lines.index("  __attribute__((opencl_unroll_hint(8)))")
    assert lines[i + 1] == "  for (int k = 0; k < 8; ++k) {"
