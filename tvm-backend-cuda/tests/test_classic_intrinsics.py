"""The classic thread intrinsics of the seed's tests (issue 28): ``T.tvm_storage_sync``,
``T.tvm_warp_shuffle`` (and ``_up`` / ``_down``) and ``T.tvm_access_ptr`` / ``Buffer.access_ptr``:
printed and parsed back, rendered as CUDA (compiled with NVRTC), and run (GPU, else emulated)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvm
from tvm.error import CodegenError
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()

_FULL = 0xFFFFFFFF


def _rotate_kernel(shuffle: str, amount: int) -> Any:
    """Each CTA of 32 threads stages its 32 values in shared memory, waits, and reads a value of
    another lane through the named shuffle."""
    fn = getattr(T, shuffle)

    @T.prim_func
    def rotate(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([32])
        S = T.alloc_buffer((32,), "float32", scope="shared")
        S[31 - tx] = A[bx * 32 + tx]
        T.tvm_storage_sync("shared")
        B[bx * 32 + tx] = fn(T.uint32(_FULL), S[tx], amount, 32, 32)

    return rotate


def _expected(shuffle: str, amount: int) -> np.ndarray:
    a = np.arange(64, dtype="float32")
    staged = a.reshape(2, 32)[:, ::-1]  # S[t] = A[31 - t]
    lanes = np.arange(32)
    src = {"tvm_warp_shuffle": np.full(32, amount),
           "tvm_warp_shuffle_up": np.where(lanes >= amount, lanes - amount, lanes),
           "tvm_warp_shuffle_down": np.where(lanes + amount < 32, lanes + amount, lanes)}[shuffle]
    return staged[:, src].reshape(64)


@pytest.mark.parametrize("shuffle", ["tvm_warp_shuffle", "tvm_warp_shuffle_up",
                                     "tvm_warp_shuffle_down"])
def test_shuffles_and_storage_sync_print_and_parse_back(shuffle: str) -> None:
    f = _rotate_kernel(shuffle, 3)
    text = f.script()
    assert 'T.tvm_storage_sync("shared")' in text
    assert f"T.{shuffle}(T.uint32(4294967295), S[tx], 3, 32, 32)" in text
    assert structural_equal(from_source(text), f)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_shuffles_and_barriers_render_as_cuda(arch: str) -> None:
    src = {}
    for shuffle in ("tvm_warp_shuffle", "tvm_warp_shuffle_up", "tvm_warp_shuffle_down"):
        ex = tvm.compile(_rotate_kernel(shuffle, 1), target={"kind": "cuda", "arch": arch})
        assert ex.cubin[:4] == b"\x7fELF"
        src[shuffle] = ex.inspect_source()
    assert "__syncthreads();" in src["tvm_warp_shuffle"]
    assert "__shfl_sync(4294967295U, S[tx], 1, 32)" in src["tvm_warp_shuffle"]
    assert "__shfl_up_sync(4294967295U, S[tx], 1, 32)" in src["tvm_warp_shuffle_up"]
    assert "__shfl_down_sync(4294967295U, S[tx], 1, 32)" in src["tvm_warp_shuffle_down"]


def test_a_warp_storage_sync_is_syncwarp() -> None:
    @T.prim_func
    def warp(A: T.Buffer((32,), "int32")):
        T.device_entry()
        tx = T.thread_id([32])
        A[tx] = A[tx] + 1
        T.tvm_storage_sync("warp")

    assert "__syncwarp();" in tvm.compile(warp, target="nvidia/nvidia-h100").inspect_source()


def test_a_global_storage_sync_and_another_warp_size_are_refused() -> None:
    @T.prim_func
    def grid(A: T.Buffer((32,), "int32")):
        T.device_entry()
        tx = T.thread_id([32])
        A[tx] = 1
        T.tvm_storage_sync("global")

    with pytest.raises(CodegenError, match="cooperative launch"):
        tvm.compile(grid, target="nvidia/nvidia-h100")

    @T.prim_func
    def wide(A: T.Buffer((64,), "int32")):
        T.device_entry()
        tx = T.thread_id([64])
        A[tx] = T.tvm_warp_shuffle(T.uint32(_FULL), A[tx], 0, 64, 64)

    with pytest.raises(CodegenError, match="warp_size must be 32"):
        tvm.compile(wide, target="nvidia/nvidia-h100")
    with pytest.raises(ValueError, match="scope must be one of"):
        T.tvm_storage_sync("local")


def _first_of_rows() -> Any:
    @T.prim_func
    def first(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        T.device_entry()
        tx = T.thread_id([8])
        B[tx] = T.cuda.ldg(A.access_ptr("r", offset=tx * 16), "float32")

    return first


def test_access_ptr_is_the_address_of_an_element() -> None:
    A = tvm.ir.Buffer("A", (8, 16), "float16")
    call = A.access_ptr("rw", offset=16)
    assert call.op.name == "tirx.tvm_access_ptr"
    assert str(call.args[0].dtype) == "float16"
    assert call.args[3].value == 128 - 16 and call.args[4].value == 3
    with pytest.raises(ValueError, match="access_mask must be"):
        A.access_ptr("x")
    f = _first_of_rows()
    text = f.script()
    assert 'T.tvm_access_ptr(T.type_annotation("float32"), A.data, tx * 16, 128 - tx * 16, 1)' \
        in text
    assert structural_equal(from_source(text), f)
    ex = tvm.compile(f, target={"kind": "cuda", "arch": "sm_80"})
    assert "__ldg((const float*)(((float*)(A) + ((tx * 16)))))" in ex.inspect_source()


def test_access_ptr_emulated() -> None:
    ex = tvm.compile(_first_of_rows(), target={"kind": "cuda", "arch": "sm_90a"}, emulate=True)
    a = np.arange(128, dtype="float32").reshape(8, 16)
    b = np.zeros(8, "float32")
    ex(a, b)
    np.testing.assert_array_equal(b, a[:, 0])


@pytest.mark.gpu
@pytest.mark.parametrize("shuffle,amount", [("tvm_warp_shuffle", 5), ("tvm_warp_shuffle_up", 3),
                                            ("tvm_warp_shuffle_down", 7)])
def test_shuffles_after_a_storage_sync_run(shuffle: str, amount: int, device: str) -> None:
    ex = tvm.compile(_rotate_kernel(shuffle, amount), target="cuda")
    a = np.arange(64, dtype="float32")
    if device == "cpu":  # the CUDA emulator takes numpy arrays
        b = np.zeros(64, "float32")
        ex(a, b)
    else:
        torch = pytest.importorskip("torch")
        tb = torch.zeros(64, dtype=torch.float32, device=device)
        ex(torch.from_numpy(a).to(device), tb)
        torch.cuda.synchronize()
        b = tb.cpu().numpy()
    np.testing.assert_array_equal(b, _expected(shuffle, amount))


# -- 0-d buffers in a kernel ------------------------------------------------------------------


def _block_sum() -> Any:
    @T.prim_func
    def block_sum(A: T.Buffer((64,), "float32"), out: T.Buffer((), "float32")):
        T.device_entry()
        tx = T.thread_id([64])
        acc = T.alloc_buffer((), "float32", scope="shared")
        if tx == 0:
            acc[()] = T.float32(0)
        T.tvm_storage_sync("shared")
        T.cuda.atomic_add(acc.access_ptr("rw"), A[tx])
        T.tvm_storage_sync("shared")
        if tx == 0:
            out[()] = acc[()]

    return block_sum


def test_a_0d_shared_accumulator_renders_and_compiles() -> None:
    ex = tvm.compile(_block_sum(), target={"kind": "cuda", "arch": "sm_80"})
    src = ex.inspect_source()
    assert "__shared__ float acc[1]" in src and "out[0] = acc[0];" in src
    assert ex.cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
def test_a_0d_shared_accumulator_runs(device: str) -> None:
    ex = tvm.compile(_block_sum(), target="cuda")
    a = np.arange(64, dtype="float32")
    if device == "cpu":
        out = np.zeros((), "float32")
        ex(a, out)
        got = float(out)
    else:
        torch = pytest.importorskip("torch")
        t = torch.zeros((), dtype=torch.float32, device=device)
        ex(torch.from_numpy(a).to(device), t)
        torch.cuda.synchronize()
        got = float(t.cpu())
    assert got == float(a.sum())


def test_t_ret_in_a_kernel_is_a_located_error() -> None:
    @T.prim_func
    def k(A: T.Buffer((32,), "int32")) -> T.int32:
        T.device_entry()
        tx = T.thread_id([32])
        A[tx] = 1
        T.ret(3)

    with pytest.raises(CodegenError, match="a cuda kernel cannot; store it into a buffer") \
            as info:
        tvm.compile(k, target="nvidia/nvidia-h100")
    assert "test_classic_intrinsics.py" in str(info.value) and "T.ret(3)" in str(info.value)
