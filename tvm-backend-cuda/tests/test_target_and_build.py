"""The cuda target kind and tags, the plugin's registrations, and tvm.compile without a GPU."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.error import TargetError
from tvm.script import tirx as T
from tvm.target import Target, list_tags
from tvm_backend_cuda import plugin
from tvm_backend_cuda.runtime import has_cuda_device

plugin.register_backend()
tvm.driver.ensure_builtin_backends()  # the host kind 'llvm' (Jetson tags name it as their host)


def test_seed_tags() -> None:
    tags = list_tags()
    for name, arch, l2 in [("nvidia/nvidia-a100", "sm_80", 41943040),
                           ("nvidia/nvidia-h100", "sm_90a", 52428800),
                           ("nvidia/nvidia-b100", "sm_100a", 52428800),
                           ("nvidia/geforce-rtx-4090", "sm_89", 75497472),
                           ("nvidia/geforce-rtx-5060-ti", "sm_120", 33554432)]:
        assert tags[name]["arch"] == arch and tags[name]["l2_cache_size_bytes"] == l2
    assert Target("nvidia/nvidia-h200").attrs["arch"] == "sm_90a"
    assert Target("nvidia/nvidia-b200").attrs["arch"] == "sm_100a"
    assert tags["nvidia/tesla-c2050"]["registers_per_block"] == 32768
    orin = Target("nvidia/jetson-agx-orin-64gb")
    assert orin.attrs["arch"] == "sm_87" and orin.host.kind.name == "llvm"
    assert orin.host.attrs["mcpu"] == "cortex-a78" and orin.host.attrs["num-cores"] == 12
    cuda_tags = [n for n, c in tags.items() if c["kind"] == "cuda"]
    assert len(cuda_tags) >= 244
    for n in cuda_tags:
        t = Target(n)
        assert t.keys == ("cuda", "gpu") and t.attrs["max_threads_per_block"] == 1024


def test_target_kind_attributes_and_defaults() -> None:
    t = Target({"kind": "cuda", "arch": "sm_90a"})
    assert t.device_type == "cuda"
    assert t.attrs["max_shared_memory_per_block"] == 49152
    assert t.attrs["thread_warp_size"] == 32 and t.attrs["registers_per_block"] == 65536
    assert Target("cuda -arch=sm_80").attrs["arch"] == "sm_80"
    assert "arch" not in Target("cuda").attrs


@pytest.mark.parametrize("arch", ["sm80", "sm_8", "compute_90a", "sm_80a", "sm_90b", "90"])
def test_arch_validation(arch: str) -> None:
    with pytest.raises(TargetError, match="sm_XX"if arch != "sm_80a" else "from sm_90 on"):
        Target({"kind": "cuda", "arch": arch})


def test_other_attribute_validation() -> None:
    with pytest.raises(TargetError, match="max_num_threads"):
        Target({"kind": "cuda", "arch": "sm_80", "max_num_threads": 2048})
    with pytest.raises(TargetError, match="has no attribute"):
        Target({"kind": "cuda", "arch": "sm_80", "warp": 32})


def test_plugin_registrations() -> None:
    assert tvm.backend.is_loaded("cuda")
    import tvm.tirx.cuda as alias
    import tvm_backend_cuda

    assert alias is tvm_backend_cuda
    from tvm.tirx.compilation_pipeline import get_default_tir_pipeline

    assert get_default_tir_pipeline(Target("nvidia/nvidia-h100")) == "tirx"
    from tvm.tirx.operator.tile_primitive import list_registered_schedules

    sched = list_registered_schedules()
    key = next(k for k in sched if k.split(".")[-1] == "sum")
    assert "warp_shuffle" in sched[key]["cuda"]
    assert plugin.register_backend() is tvm_backend_cuda  # idempotent


def test_plugin_module_is_light() -> None:
    import subprocess
    import sys

    code = ("import sys, tvm_backend_cuda.plugin; "
            "print(sorted(m for m in ('torch','numpy','cuda.core','cuda.bindings') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**__import__("os").environ, "TVM_BACKENDS": "0"})
    assert out.stdout.strip() == "[]"


@no_type_check
def _vadd() -> Any:
    @T.prim_func
    def vadd(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"),
             C: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([8])
        tx = T.thread_id([128])
        C[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]

    return vadd


def test_compile_without_gpu_holds_source_and_cubin(tmp_path) -> None:
    ex = tvm.compile(_vadd(), target="nvidia/nvidia-h100")
    assert ex.arch == "sm_90a" and ex.cubin[:4] == b"\x7fELF"
    assert ex.entry_names == ["vadd"] and ex.kernel_names == ["vadd_kernel"]
    assert ".entry vadd_kernel" in ex.inspect_source("ptx")
    path = ex.export_library(tmp_path / "vadd.tvmex")
    ex2 = tvm.runtime.load_module(path)
    assert type(ex2) is type(ex) and ex2.cubin == ex.cubin and ex2.source == ex.source
    assert ex2.meta == ex.meta and ex2.arch == "sm_90a"


@pytest.mark.skipif(has_cuda_device(), reason="checks the behaviour without a GPU")
def test_call_without_gpu_raises_runtime_error() -> None:
    ex = tvm.compile(_vadd(), target="nvidia/nvidia-a100")
    a = np.zeros(1024, "float32")
    with pytest.raises(RuntimeError, match="no CUDA device is present"):
        ex(a, a, a)


def test_compile_options() -> None:
    ex = tvm.compile(_vadd(), target="cuda", arch="sm_100a", options=["-lineinfo"])
    assert ex.arch == "sm_100a" and "-lineinfo" in ex.nvrtc_options
    with pytest.raises(TypeError, match="unknown compile option"):
        tvm.compile(_vadd(), target="cuda", opt_level=3)


def test_nvrtc_error_carries_log() -> None:
    from tvm.error import CompileError

    @T.prim_func
    def bad(A: T.Buffer((32,), "float32")):
        T.device_entry()
        tx = T.thread_id([32])
        T.cuda.func_call("nope", A.data, source_code="__device__ void nope(float* a) { x; }")

    with pytest.raises(CompileError) as info:
        tvm.compile(bad, target="nvidia/nvidia-a100")
    assert "identifier \"x\" is undefined" in str(info.value.log)


def test_thread_limit_of_the_target() -> None:
    @T.prim_func
    def big(A: T.Buffer((2048,), "float32")):
        T.device_entry()
        tx = T.thread_id([2048])
        A[tx] = T.float32(0)

    with pytest.raises(tvm.error.TVMError, match="allows at most 1024"):
        tvm.compile(big, target="nvidia/nvidia-a100")


def test_symbolic_shapes_launch_dims() -> None:
    @T.prim_func
    def k(n: T.int32, A: T.Buffer((n,), "float32")):  # noqa: F821 - TVMScript binds n
        T.device_entry()
        bx = T.cta_id([(n + 127) // 128])
        tx = T.thread_id([128])
        if bx * 128 + tx < n:
            A[bx * 128 + tx] = A[bx * 128 + tx] + T.float32(1)

    ex = tvm.compile(k, target="nvidia/nvidia-h100")
    from tvm.runtime.arguments import evaluate_tree

    step = ex.plans["k"].steps[0]
    n_var = ex.get_function("k").specs[0].var
    assert n_var == "n"
    assert evaluate_tree(step.grid[0], {n_var: 1000}) == 8


def test_cubin_cache_honours_tvm_cache_and_xdg(tmp_path, monkeypatch) -> None:
    """tvm.compile caches cubins in core's cache (namespace 'cuda'): TVM_CACHE_DIR,
    XDG_CACHE_HOME and TVM_CACHE=0 apply as for every backend."""
    monkeypatch.delenv("TVM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    first = tvm.compile(_vadd(), target="nvidia/nvidia-h100")
    entries = list((tmp_path / "xdg" / "tvm" / "cuda").rglob("*.bin"))
    assert len(entries) == 1 and entries[0].read_bytes() == first.cubin
    again = tvm.compile(_vadd(), target="nvidia/nvidia-h100")
    assert again.cubin == first.cubin and again.nvrtc_options == first.nvrtc_options
    monkeypatch.setenv("TVM_CACHE", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "off"))
    tvm.compile(_vadd(), target="nvidia/nvidia-h100")
    assert not (tmp_path / "off").exists()
