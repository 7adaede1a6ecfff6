"""64-bit offsets for symbolic shapes in CUDA kernels (issue 26, item 1): the 3 x 2**30 uint8
kernels of ``tvm.testing.wide_index`` through NVRTC (no GPU needed), and the kernel form run on
a GPU (or the CUDA emulator) against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.testing.wide_index import big_input, expected_row_sums, row_sums, row_sums_kernel_form
from tvm_backend_cuda.plugin import register_backend

register_backend()


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_host_form_kernel_indexes_in_64_bits_and_compiles(arch: str) -> None:
    ex = tvm.compile(row_sums(), target={"kind": "cuda", "arch": arch})
    assert ex.cubin[:4] == b"\x7fELF"
    src = ex.inspect_source()
    assert ("S[i] = (S[i] + ((long long)(A[(((long long)(i)) * ((long long)(m))) + "
            "((long long)(j))])));") in src
    assert ("B[((((long long)(n)) - ((long long)(i))) - 1LL) * ((long long)(m))] = "
            "A[((long long)(i)) * ((long long)(m))];") in src


def test_kernel_form_widens_only_the_buffers_that_need_it() -> None:
    ex = tvm.compile(row_sums_kernel_form(), target={"kind": "cuda", "arch": "sm_90a"})
    src = ex.inspect_source()
    assert ("((long long)(A[((((long long)(bx)) * ((long long)(m))) + (((long long)(j)) * "
            "256LL)) + ((long long)(tx))]))") in src
    # the loop bound and the guard index no buffer: they stay 32-bit
    assert "if (((j * 256) + tx) < m) {" in src


def test_one_symbolic_extent_keeps_32_bit_offsets_on_cuda() -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def scale(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        T.device_entry()
        bx = T.cta_id([(n + 255) // 256])
        tx = T.thread_id([256])
        if bx * 256 + tx < n:
            A[bx * 256 + tx] = A[bx * 256 + tx] * 2.0

    src = tvm.compile(scale, target={"kind": "cuda", "arch": "sm_80"}).inspect_source()
    assert "A[(bx * 256) + tx] = (A[(bx * 256) + tx] * 2.0f);" in src
    assert "long long" not in src.split("__global__")[-1]


@pytest.mark.gpu
def test_three_by_two_to_the_30_kernel_runs_on_the_gpu(device: str) -> None:
    """Under the emulator too (about 10 s, 3 x 2**30 bytes read; the input's pages are zeros, so
    it costs no memory): its accesses index in 64 bits as the GPU's."""
    torch = pytest.importorskip("torch")

    a = big_input()
    ex = tvm.compile(row_sums_kernel_form(), target="cuda")
    dev_a = torch.from_numpy(a).to(device)  # on the CPU: the numpy array itself, no copy
    partial = torch.zeros((a.shape[0], 256), dtype=torch.int64, device=device)
    ex(dev_a, partial)
    if device == "cuda":
        torch.cuda.synchronize()
    np.testing.assert_array_equal(partial.sum(dim=1).cpu().numpy(), expected_row_sums(a))
