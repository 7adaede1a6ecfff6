"""The MSL syntax check: realistic kernels pass, broken ones fail with g++'s diagnostic."""

from __future__ import annotations

import pytest

from tvm.error import CompileError
from tvm_backend_metal.msl_check import check_msl, find_kernels, prepare_source

pytestmark = pytest.mark.usefixtures("cxx")

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"

ELEMENTWISE = (
    HEADER
    + """
kernel void gelu(device const float4* x [[buffer(0)]], device float4* y [[buffer(1)]],
                 constant uint& n [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
  if (gid >= n) return;
  float4 v = x[gid];
  float4 inner = 0.7978845608f * (v + 0.044715f * v * v * v);
  y[gid] = 0.5f * v * (1.0f + precise::tanh(inner));
  y[gid].xy = fast::exp(v.yx) + select(float2(0), float2(1), v.xy > 0.0f);
}
"""
)

TG_REDUCTION = (
    HEADER
    + """
kernel void softmax_row(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                        constant uint& cols [[buffer(2)]],
                        uint row [[threadgroup_position_in_grid]],
                        uint tid [[thread_position_in_threadgroup]],
                        uint ntg [[threads_per_threadgroup]]) {
  threadgroup float scratch[1024];
  float m = -INFINITY;
  for (uint c = tid; c < cols; c += ntg) m = max(m, x[row * cols + c]);
  scratch[tid] = m;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint s = ntg / 2; s > 0; s >>= 1) {
    if (tid < s) scratch[tid] = max(scratch[tid], scratch[tid + s]);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  m = scratch[0];
  for (uint c = tid; c < cols; c += ntg) y[row * cols + c] = exp(x[row * cols + c] - m);
}
"""
)

SIMD_REDUCTION = (
    HEADER
    + """
kernel void rms(device const half* x [[buffer(0)]], device float* out [[buffer(1)]],
                uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                uint sg [[simdgroup_index_in_threadgroup]],
                uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float partial[32];
  float v = float(x[gid]);
  float s = simd_sum(v * v);
  s = max(s, simd_shuffle_xor(s, 1u));
  s += simd_shuffle_down(s, 16) * 0.0f + simd_shuffle_up(s, 1) * 0.0f + simd_shuffle(s, 0) * 0.0f;
  if (lane == 0) partial[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float t = lane < nsg ? partial[lane] : 0.0f;
    t = simd_sum(t);
    if (simd_is_first()) out[0] = rsqrt(t + 1e-6f) + simd_min(t) - simd_max(t);
  }
}
"""
)

SIMD_MATMUL = (
    HEADER
    + """
kernel void mm8(device const half* A [[buffer(0)]], device const half* B [[buffer(1)]],
                device float* C [[buffer(2)]], constant uint& K [[buffer(3)]],
                uint2 tile [[threadgroup_position_in_grid]]) {
  simdgroup_half8x8 a;
  simdgroup_half8x8 b;
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.f);
  for (uint k = 0; k < K; k += 8) {
    simdgroup_load(a, A + tile.y * 8 * K + k, K);
    simdgroup_load(b, B + k * 64 + tile.x * 8, 64, ulong2(0, 0), false);
    simdgroup_multiply_accumulate(acc, a, b, acc);
  }
  simdgroup_barrier(mem_flags::mem_none);
  simdgroup_store(acc, C + tile.y * 8 * 64 + tile.x * 8, 64);
  acc.thread_elements()[0] = 1.0f;
}
"""
)

HALF_BFLOAT = (
    HEADER
    + """
kernel void cast_mix(device const bfloat* a [[buffer(0)]], device half4* h [[buffer(1)]],
                     device atomic_float* total [[buffer(2)]], device atomic_int* hits [[buffer(3)]],
                     uint i [[thread_position_in_grid]]) {
  bfloat b = a[i] * bfloat(2.0f);
  half4 v = h[i] * 1.5h;
  h[i] = v + half4(half(float(b)));
  packed_float3 p = packed_float3(float3(1.0f, 2.0f, 3.0f));
  float3 q = p;
  atomic_fetch_add_explicit(total, float(b) + q.z, memory_order_relaxed);
  atomic_fetch_add_explicit(&hits[0], 1, memory_order_relaxed);
  uint bits = as_type<uint>(float(b));
  h[i].w = half(as_type<float>(bits)) + half(HALF_MAX) * 0.0h;
}
"""
)


@pytest.mark.parametrize(
    "source",
    [ELEMENTWISE, TG_REDUCTION, SIMD_REDUCTION, SIMD_MATMUL, HALF_BFLOAT],
    ids=[
        "elementwise",
        "tg_reduction",
        "simd_reduction",
        "simdgroup_matmul",
        "half_bfloat_atomics",
    ],
)
def test_realistic_kernels_pass(source):
    assert check_msl(source) is None


def test_kernel_without_include_or_using_namespace():
    check_msl(
        "kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]])"
        " { a[i] = metal::max(a[i], 0.0f); }"
    )


def _broken(body: str) -> str:
    return HEADER + (
        "kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
        f"  {body}\n}}\n"
    )


def test_undeclared_identifier_fails_with_gcc_diagnostic():
    with pytest.raises(CompileError) as info:
        check_msl(_broken("a[i] = simd_summ(a[i]);"))
    err = info.value
    assert "'simd_summ' was not declared in this scope" in str(err).replace("‘", "'").replace(
        "’", "'"
    )
    assert ":4:" in err.log  # the user's line
    assert err.command.split()[1] == "-fsyntax-only" and "tvm_metal_shim.h" in err.command


def test_missing_semicolon_fails():
    with pytest.raises(CompileError, match="expected .;. before .}. token") as info:
        check_msl(_broken("a[i] = 1.0f"))
    assert "error" in info.value.log


def test_wrong_vector_component_and_mixed_types_fail():
    with pytest.raises(CompileError, match="has no member named .z."):
        check_msl(_broken("float2 v = float2(1.0f, 2.0f); a[i] = v.z;"))
    with pytest.raises(CompileError, match="different element types"):
        check_msl(_broken("int4 v(1); float4 w(1.0f); a[i] = (v + w).x;"))


def test_threadgroup_initializer_is_an_address_space_error():
    with pytest.raises(CompileError, match="threadgroup address space cannot have an initializer"):
        check_msl(_broken("threadgroup float t[4] = {0}; a[i] = t[0];"))


def test_device_variable_by_value_is_an_address_space_error():
    with pytest.raises(CompileError, match="device address space must be a pointer or a reference"):
        check_msl(_broken("device float x; a[i] = x;"))


def test_misspelt_attribute_fails():
    src = _broken("a[i] = 1.0f;").replace("thread_position_in_grid", "thread_positon_in_grid")
    with pytest.raises(CompileError, match=r"unknown MSL attribute \[\[thread_positon_in_grid\]\]"):
        check_msl(src)


def test_missing_compiler_is_a_clear_error():
    with pytest.raises(CompileError, match="no C\\+\\+ compiler found"):
        check_msl(ELEMENTWISE, cxx="definitely-not-a-compiler")


def test_prepare_source_keeps_lines_and_finds_signature():
    text, errors = prepare_source(TG_REDUCTION)
    assert errors == [] and text.count("\n") == TG_REDUCTION.count("\n")
    assert "__tvm_tg_storage float scratch[1024];" in text
    sig = find_kernels(text)["softmax_row"]
    assert [(p.name, p.kind, p.index, p.builtin) for p in sig.params] == [
        ("x", "buffer", 0, ""),
        ("y", "buffer", 1, ""),
        ("cols", "buffer", 2, ""),
        ("row", "builtin", -1, "threadgroup_position_in_grid"),
        ("tid", "builtin", -1, "thread_position_in_threadgroup"),
        ("ntg", "builtin", -1, "threads_per_threadgroup"),
    ]
    assert sig.params[2].type == "constant uint&"


def test_comments_and_strings_are_not_rewritten():
    src = _broken("a[i] = 1.0f; // threadgroup float x = 1; [[bogus]]\n  /* device float y; */")
    text, errors = prepare_source(src)
    assert errors == [] and "[[bogus]]" in text
    check_msl(src)
