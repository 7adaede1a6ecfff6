"""The pyobjc Metal runtime: runs on a Mac with a GPU, skips elsewhere with the reason."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tvm_backend_metal import runtime

VADD = """
#include <metal_stdlib>
using namespace metal;
kernel void vadd(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                 device float* c [[buffer(2)]], constant uint& n [[buffer(3)]],
                 uint gid [[thread_position_in_grid]]) {
  if (gid < n) c[gid] = a[gid] + b[gid];
}
"""


@pytest.mark.skipif(sys.platform == "darwin", reason="checks the message off macOS")
def test_off_macos_raises_a_clear_runtime_error():
    assert not runtime.is_available()
    with pytest.raises(
        RuntimeError,
        match=r"Metal runtime needs macOS with pyobjc-framework-Metal \(the 'runtime' extra of "
        r"tvm-backend-metal\); install it on a Mac with 'pip install pyobjc-framework-Metal'",
    ):
        runtime.compile(VADD, "vadd")
    with pytest.raises(runtime.MetalRuntimeUnavailable):
        runtime.run(VADD, "vadd", 1, 64, [])


@pytest.mark.macos
def test_vadd_on_gpu():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 1000), dtype=np.float32)
    c = np.zeros(1000, np.float32)
    runtime.run(VADD, "vadd", grid=16, threadgroup=64, buffers=[a, b, c, np.uint32(1000)])
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.macos
def test_simd_sum_on_gpu_matches_emulator_semantics():
    src = """
#include <metal_stdlib>
using namespace metal;
kernel void s(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
              uint sg [[simdgroup_index_in_threadgroup]]) {
  float v = simd_sum(x[gid]);
  if (lane == 0) out[sg] = v;
}
"""
    x = np.arange(128, dtype=np.float32)
    out = np.zeros(4, np.float32)
    runtime.run(src, "s", grid=1, threadgroup=128, buffers=[x, out])
    np.testing.assert_allclose(out, x.reshape(4, 32).sum(1))


@pytest.mark.macos
def test_compile_error_carries_metal_log():
    from tvm.error import CompileError

    with pytest.raises(CompileError, match="could not compile"):
        runtime.compile(VADD.replace("a[gid] +", "a[gid] ++ +"), "vadd")
