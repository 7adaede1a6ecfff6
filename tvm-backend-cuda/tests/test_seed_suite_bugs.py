"""Bugs the seed's own TIRx tests exposed on the H200 (issue 28): inline CUDA of
``T.cuda.func_call`` using ``int32_t`` (NVRTC has no ``<cstdint>``), and an fp16 element-wise op
on shared memory with a broadcast operand ((32, 5, 4) op (32, 1, 4)) reading the broadcast
operand at the destination's index. Checked with NVRTC and the CTA emulator on the CPU, and
on the GPU (marker ``gpu``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tvm
from tvm.ir.layout import S, TileLayout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_cuda.plugin import register_backend

register_backend()

from cta_emulator import run_kernel  # noqa: E402 - after the backend is loaded

_ADD_ONE = "__device__ int32_t tvm_add_one(int32_t x) { return x + (int32_t)1; }"


def _func_call_kernel(source: str):
    @T.prim_func
    def add_one(A: T.Buffer((64,), "int32")):
        T.device_entry()
        tx = T.thread_id([64])
        A[tx] = T.cuda.func_call("tvm_add_one", A[tx], source_code=source, return_type="int32")

    return add_one


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "sm_100a"])
def test_func_call_using_fixed_width_types_compiles_with_nvrtc(arch: str) -> None:
    ex = tvm.compile(_func_call_kernel(_ADD_ONE), target={"kind": "cuda", "arch": arch})
    src = ex.inspect_source()
    assert ex.cubin[:4] == b"\x7fELF"
    assert src.count("typedef int int32_t;") == 1
    assert src.index("typedef int int32_t;") < src.index(_ADD_ONE) < src.index("__global__")
    assert "typedef long long int64_t;" in src and "typedef unsigned long long uint64_t;" in src


def test_fixed_width_types_are_declared_only_where_needed() -> None:
    from tvm_backend_cuda.codegen import uses_undeclared_int_types

    @T.prim_func
    def plain(A: T.Buffer((32,), "int32")):
        T.device_entry()
        tx = T.thread_id([32])
        A[tx] = A[tx] + 1

    assert "typedef" not in tvm.compile(plain, target="nvidia/nvidia-h100").inspect_source()
    own = "typedef int int32_t;\n__device__ int32_t f(int32_t x) { return x; }"
    assert not uses_undeclared_int_types(own, [])
    assert not uses_undeclared_int_types("#include <cstdint>\nint32_t x;", [])
    assert not uses_undeclared_int_types("uint64_t x;", ["nvshmem.h"])
    assert uses_undeclared_int_types("uint8_t x;", ["cuda_fp16.h"])


@pytest.mark.gpu
def test_func_call_using_fixed_width_types_runs(device: str) -> None:
    torch = pytest.importorskip("torch")
    ex = tvm.compile(_func_call_kernel(_ADD_ONE), target="cuda")
    a = torch.arange(64, dtype=torch.int32, device=device)
    ex(a)
    if device == "cuda":
        torch.cuda.synchronize()
    np.testing.assert_array_equal(a.cpu().numpy(), np.arange(64) + 1)


# -- fp16 broadcast element-wise op on shared memory -----------------------------------------

_A, _B = (32, 5, 4), (32, 1, 4)
_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "fdiv": np.divide}


def _broadcast_kernel(op: str, scope: str):
    tile_op = getattr(Tx.cta if scope == "cta" else Tx, op)
    copy = Tx.cta.copy if scope == "cta" else Tx.copy

    @T.prim_func
    def bcast(A: T.Buffer(_A, "float16", layout=TileLayout(S[_A])),
              B: T.Buffer(_B, "float16", layout=TileLayout(S[_B]))):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([32])
        A_smem = T.alloc_buffer(_A, "float16", scope="shared", layout=TileLayout(S[_A]))
        B_smem = T.alloc_buffer(_B, "float16", scope="shared", layout=TileLayout(S[_B]))
        copy(A_smem, A)
        copy(B_smem, B)
        T.cuda.cta_sync()
        tile_op(A_smem, A_smem, B_smem)
        T.cuda.cta_sync()
        copy(A, A_smem)

    return bcast


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.random(_A).astype("float16"), (rng.random(_B) + 0.5).astype("float16"))


def test_broadcast_operand_is_read_at_its_own_index_in_the_source() -> None:
    src = tvm.compile(_broadcast_kernel("add", "cta"), target="nvidia/nvidia-h100").inspect_source()
    reads = re.findall(r"B_smem\[([^\]]*)\]\);", src)
    assert reads, src
    # B is (32, 1, 4): its index is 4 * row, never the broadcast middle index (tx + c) % 5
    assert all("% 5" not in r for r in reads), reads


@pytest.mark.parametrize("scope", ["cta", "thread"])
@pytest.mark.parametrize("op", ["add", "mul", "fdiv"])
def test_broadcast_binary_on_shared_memory_emulated(op: str, scope: str) -> None:
    a, b = _inputs()
    want = _OPS[op](a.astype("float32"), b.astype("float32")).astype("float16")
    got = a.copy()
    # at thread scope each of the 32 threads (one warp, in lock step here as on the GPU) runs
    # the whole op: every one reads before any writes
    run_kernel(_broadcast_kernel(op, scope), [got, b.copy()])
    np.testing.assert_allclose(got.astype("float32"), want.astype("float32"), rtol=2e-3,
                               atol=2e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["add", "sub", "mul", "fdiv"])
def test_broadcast_binary_on_shared_memory_runs(op: str, device: str) -> None:
    torch = pytest.importorskip("torch")
    a, b = _inputs()
    ex = tvm.compile(_broadcast_kernel(op, "cta"), target="cuda")
    da, db = torch.from_numpy(a.copy()).to(device), torch.from_numpy(b.copy()).to(device)
    ex(da, db)
    if device == "cuda":
        torch.cuda.synchronize()
    want = _OPS[op](a.astype("float32"), b.astype("float32"))
    np.testing.assert_allclose(da.float().cpu().numpy(), want, rtol=1e-2, atol=1e-2)
