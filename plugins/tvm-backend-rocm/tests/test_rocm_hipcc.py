"""Generated HIP compiled by hipcc without a GPU (the NVRTC-like check of this backend): code
objects for gfx90a and for every architecture this hipcc knows, the cache, and hipcc's errors."""

from __future__ import annotations

import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from rocm_helpers import EM_AMDGPU, MACH, elf_machine_and_mach

import tvm
import tvm.driver
from tvm.error import CompileError, DeviceUnavailableError
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.target import Target
from tvm.testing.conformance import KERNELS
from tvm_backend_rocm import compiler
from tvm_backend_rocm.codegen import generate_hip

pytestmark = pytest.mark.hipcc

M = N = K = 128
TILE = 32


@T.prim_func
def tiled_matmul(A: T.Buffer((M, K), "float16"), B: T.Buffer((K, N), "float16"),
                 C: T.Buffer((M, N), "float32")):
    T.device_entry()
    bx, by = T.cta_id([N // TILE, M // TILE])
    tx = T.thread_id([256])
    As = T.alloc_buffer((TILE, TILE), "float16", scope="shared")
    Bs = T.alloc_buffer((TILE, TILE), "float16", scope="shared")
    acc = T.alloc_buffer((TILE, TILE), "float32", scope="shared")
    Tx.cta.fill(acc, 0.0)
    for kk in T.serial(K // TILE):
        Tx.cta.copy(As, A[by * TILE:by * TILE + TILE, kk * TILE:kk * TILE + TILE])
        Tx.cta.copy(Bs, B[kk * TILE:kk * TILE + TILE, bx * TILE:bx * TILE + TILE])
        Tx.cta.gemm(acc, As, Bs, acc, beta=1.0)
    Tx.cta.copy(C[by * TILE:by * TILE + TILE, bx * TILE:bx * TILE + TILE], acc)


@pytest.mark.parametrize("name", ["vector_add", "elementwise", "reduction", "gemm", "matmul"])
def test_code_object_for_gfx90a(name):
    func = tiled_matmul if name == "matmul" else KERNELS[name]()
    ex = tvm.compile(func, target="amd/instinct-mi250x")
    machine, mach = elf_machine_and_mach(ex.code_object)
    assert (machine, mach) == (EM_AMDGPU, MACH["gfx90a"])
    for kernel in ex.kernel_names:  # each kernel and its descriptor are in the symbol table
        assert kernel.encode() in ex.code_object and f"{kernel}.kd".encode() in ex.code_object


@pytest.mark.parametrize(("target", "arch"), [
    ("amd/instinct-mi100", "gfx908"), ("amd/radeon-vii", "gfx906"),
    ("amd/radeon-rx-6900-xt", "gfx1030"), ("amd/radeon-rx-5700-xt", "gfx1010"),
    ({"kind": "rocm", "mcpu": "gfx908", "mattr": ["+xnack", "-sramecc"]}, "gfx908"),
])
def test_code_objects_for_other_architectures(target, arch):
    ex = tvm.compile(KERNELS["reduction"](), target=target)
    assert elf_machine_and_mach(ex.code_object) == (EM_AMDGPU, MACH[arch])


@pytest.mark.slow
def test_every_architecture_this_hipcc_knows():
    hipcc = compiler.find_hipcc()
    assert hipcc is not None and "gfx90a" in hipcc.archs
    func = KERNELS["reduction"]()
    sources = {}
    for arch in hipcc.archs:
        t = Target({"kind": "rocm", "mcpu": arch})
        sources[arch] = generate_hip(tvm.driver.lower(func, target=t), t)[0]

    def build(arch: str) -> bytes:
        return compiler.compile_hip(sources[arch], mcpu=arch, what=f"reduction for {arch}")

    with ThreadPoolExecutor(max_workers=4) as pool:
        objects = dict(zip(hipcc.archs, pool.map(build, hipcc.archs)))
    for arch, code in objects.items():
        machine, mach = elf_machine_and_mach(code)
        assert machine == EM_AMDGPU, arch
        if arch in MACH:
            assert mach == MACH[arch], arch
    assert len(objects) == len(hipcc.archs) >= 30


def test_an_architecture_this_hipcc_lacks():
    hipcc = compiler.find_hipcc()
    assert hipcc is not None
    if "gfx942" in hipcc.archs:
        pytest.skip("this hipcc compiles for gfx942")
    with pytest.raises(CompileError) as err:
        tvm.compile(KERNELS["vector_add"](), target="amd/instinct-mi300x")
    assert str(err.value).startswith(
        f"cannot compile the HIP of vector_add for gfx942: this hipcc ({hipcc.version}) has no "
        "device library for it; it compiles for gfx600, ")


@T.prim_func
def calls_unknown(A: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    A[tx] = T.call_extern("float32", "no_such_function", A[tx])


def test_hipcc_error_carries_log_and_command():
    with pytest.raises(CompileError) as err:
        tvm.compile(calls_unknown, target="rocm")
    # located at the T.call_extern line (issue 26); the command follows the complaint
    text = str(err.value)
    assert "error: hipcc failed (exit code 1) compiling the HIP of calls_unknown for gfx90a " \
        "(its input is kept at " in text.splitlines()[0]
    assert "\ncommand: HIP_PLATFORM=amd HIP_COMPILER=clang " in text
    assert "no_such_function" in err.value.log
    command = shlex.split(err.value.command)
    env = dict(kv.split("=", 1) for kv in command[:2])
    again = subprocess.run(command[2:], capture_output=True, text=True,
                           env={**__import__("os").environ, **env})
    assert again.returncode != 0 and "no_such_function" in again.stderr


def test_code_objects_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    first = tvm.compile(KERNELS["vector_add"](), target="rocm")
    calls = []
    monkeypatch.setattr("tvm_backend_rocm.executable.compile_hip",
                        lambda *a, **k: calls.append(1) or b"")
    again = tvm.compile(KERNELS["vector_add"](), target="rocm")
    assert calls == [] and again.code_object == first.code_object
    assert len(list((tmp_path / "rocm").glob("*/*.bin"))) == 1


def test_export_load_and_the_missing_launcher(tmp_path):
    ex = tvm.compile(KERNELS["vector_add"](), target="rocm")
    loaded = tvm.runtime.load_module(ex.export_library(tmp_path / "vadd.tvm"))
    assert loaded.code_object == ex.code_object
    assert loaded.inspect_source() == ex.inspect_source()
    a = np.zeros(1024, "float32")
    with pytest.raises(DeviceUnavailableError) as err:
        loaded(a, a, a)
    assert str(err.value).startswith("cannot run 'vector_add' for gfx90a: this version of "
                                     "tvm-backend-rocm compiles HIP kernels")
