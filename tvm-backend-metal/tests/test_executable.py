"""``tvm.compile(f, target="apple/m1-gpu")``: the executable, its MSL, its launches, running it
off macOS (a clear error), on the CPU emulator, on an Apple GPU (``macos``), saving/loading."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from metal_helpers import compile_metal

import tvm
from tvm.script import tirx as T


@T.prim_func
def scale(A: T.Buffer((300,), "float32"), B: T.Buffer((300,), "float32"), n: T.int32,
          alpha: T.float32):
    T.device_entry()
    bx = T.cta_id([3])
    tx = T.thread_id([128])
    if bx * 128 + tx < n:
        B[bx * 128 + tx] = A[bx * 128 + tx] * alpha + T.float32(n)


def test_compile_returns_a_metal_executable():
    from tvm_backend_metal.executable import MetalExecutable

    ex = compile_metal(scale)
    assert isinstance(ex, MetalExecutable)
    assert ex.backend == "metal" and ex.entry_names == ["scale"]
    assert ex.kernel_names == ["scale_kernel"]
    assert "kernel void scale_kernel(" in ex.inspect_source()
    assert "constant float& alpha [[buffer(3)]]" in ex.inspect_source()


def test_launch_plan_binds_buffers_and_scalars_in_order():
    ex = compile_metal(scale)
    a, b = np.ones(300, "float32"), np.zeros(300, "float32")
    ((step, grid, block, buffers),) = ex["scale"].launches([a, b, 300, 2.0])
    assert step.kernel == "scale_kernel"
    assert grid == (3, 1, 1) and block == (128, 1, 1)
    assert buffers[0] is a and buffers[1] is b
    assert buffers[2].dtype == np.int32 and buffers[2][0] == 300
    assert buffers[3].dtype == np.float32 and buffers[3][0] == 2.0


def test_arguments_are_checked_before_any_launch():
    ex = compile_metal(scale)
    with pytest.raises(ValueError, match=r"^scale: argument 'A': expected shape \(300,\), got \(10,\)$"):
        ex.emulate(np.ones(10, "float32"), np.zeros(300, "float32"), 300, 1.0)
    with pytest.raises(ValueError, match="^scale: argument 'B': expected dtype float32, got float64$"):
        ex.emulate(np.ones(300, "float32"), np.zeros(300), 300, 1.0)
    with pytest.raises(TypeError, match=r"^scale: argument 'n': expected an int \(int32\), got float 1.5$"):
        ex.emulate(np.ones(300, "float32"), np.zeros(300, "float32"), 1.5, 1.0)


@pytest.mark.skipif(sys.platform == "darwin", reason="off macOS only")
def test_calling_off_macos_raises_a_clear_error():
    import tvm_backend_metal
    from tvm.error import DeviceUnavailableError
    from tvm_backend_metal.runtime import MetalRuntimeUnavailable

    # the backend's own class, under core's generic one
    assert tvm_backend_metal.MetalRuntimeUnavailable is MetalRuntimeUnavailable
    assert issubclass(MetalRuntimeUnavailable, DeviceUnavailableError)
    ex = compile_metal(scale)
    with pytest.raises(MetalRuntimeUnavailable, match=r"ex\.emulate\(\*args\) runs it on the CPU"):
        ex(np.ones(300, "float32"), np.zeros(300, "float32"), 300, 1.0)
    with pytest.raises(RuntimeError, match="install it on a Mac with 'pip install "
                                           "pyobjc-framework-Metal'"):
        ex(np.ones(300, "float32"), np.zeros(300, "float32"), 300, 1.0)


def test_emulate_matches_numpy():
    ex = compile_metal(scale)
    a = np.random.default_rng(0).standard_normal(300).astype("float32")
    b = np.full(300, -7.0, "float32")
    ex.emulate(a, b, 290, 0.5)
    np.testing.assert_allclose(b[:290], a[:290] * 0.5 + 290, rtol=1e-6)
    assert (b[290:] == -7.0).all()  # guarded out by the kernel


def test_export_and_load(tmp_path):
    ex = compile_metal(scale)
    path = ex.export_library(tmp_path / "scale.tvmex")
    loaded = tvm.runtime.load_module(path)
    assert type(loaded).__name__ == "MetalExecutable"
    assert loaded.inspect_source() == ex.inspect_source()
    a, b = np.ones(300, "float32"), np.zeros(300, "float32")
    loaded.emulate(a, b, 300, 3.0)
    np.testing.assert_allclose(b, 303.0)


def test_unknown_option_is_rejected():
    with pytest.raises(TypeError, match="unknown compile option"):
        tvm.compile(scale, target="apple/m1-gpu", opt_level=3)


def test_build_time_check_option():
    ex = tvm.compile(scale, target="apple/m1-gpu", check=True)
    assert "scale_kernel" in ex.inspect_source()


@pytest.mark.macos
def test_runs_on_an_apple_gpu():
    ex = compile_metal(scale)
    a = np.arange(300, dtype="float32")
    b = np.zeros(300, "float32")
    ex(a, b, 300, 2.0)
    np.testing.assert_allclose(b, a * 2 + 300)
