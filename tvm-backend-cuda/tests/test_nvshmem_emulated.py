"""NVSHMEM under the CUDA emulator (CPU only): one PE, signals between blocks of a launch, and
what it refuses (another PE, a second PE's init, a wait nobody satisfies)."""

from __future__ import annotations

import numpy as np
import pytest

from tvm.error import DeadlockError, NotModelledError
from tvm_backend_cuda import nvshmem, nvshmem_emu

# Block b > 0 waits until block b - 1 has signalled, then signals block b + 1: a chain across the
# grid that only runs when the blocks are resident together.
CHAIN = r"""
#include <nvshmem.h>
#include <nvshmemx.h>

extern "C" __global__ void chain(float* out, uint64_t* sig, int n) {
  int b = blockIdx.x;
  if (threadIdx.x == 0 && b > 0) nvshmem_uint64_wait_until(sig + b - 1, NVSHMEM_CMP_GE, 1ull);
  __syncthreads();
  float prev = b > 0 ? out[(b - 1) * n] : 0.0f;
  __syncthreads();
  nvshmemx_putmem_block(out + b * n, out + b * n, 0, 0);  // a block-scoped call (no bytes)
  out[b * n + threadIdx.x] = prev + 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) nvshmemx_signal_op(sig + b, 1, NVSHMEM_SIGNAL_ADD, nvshmem_my_pe());
}

extern "C" __global__ void put_other(float* dst, const float* src, int n) {
  if (threadIdx.x == 0) nvshmem_putmem_nbi(dst, src, n * sizeof(float), 1);
}

extern "C" __global__ void never(uint64_t* sig) {
  nvshmem_uint64_wait_until(sig, NVSHMEM_CMP_EQ, 7ull);
}
"""
SIGS = {"chain": [("out", "ptr"), ("sig", "ptr"), ("n", "int32")],
        "put_other": [("dst", "ptr"), ("src", "ptr"), ("n", "int32")],
        "never": [("sig", "ptr")]}


@pytest.fixture(scope="module")
def mod():
    return nvshmem_emu.EmulatedNvshmemContext().compile(CHAIN, SIGS)


@pytest.mark.parametrize("collective", [True, False])
def test_blocks_wait_for_each_others_signals(mod, collective: bool) -> None:
    """Eight blocks chained through signals: the emulator runs them together (collective, or
    because the kernel waits on NVSHMEM signals), in any order of its own."""
    ctx = nvshmem_emu.EmulatedNvshmemContext()
    out = np.zeros(8 * 32, "float32")
    sig = np.zeros(8, "uint64")
    ctx.launch((mod, "chain"), 8, 32, [out, sig, 32], collective=collective)
    np.testing.assert_array_equal(out.reshape(8, 32), np.arange(1, 9, dtype="float32")[:, None]
                                  * np.ones((1, 32), "float32"))
    np.testing.assert_array_equal(sig, np.ones(8, "uint64"))


def test_another_pe_and_a_second_pe_are_not_modelled(mod, monkeypatch) -> None:
    ctx = nvshmem_emu.EmulatedNvshmemContext()
    a = np.zeros(16, "float32")
    with pytest.raises(NotModelledError, match="nvshmem_putmem_nbi to PE 1: the CUDA emulator "
                                               "runs one PE"):
        ctx.launch((mod, "put_other"), 1, 32, [a, a, 16])
    monkeypatch.setattr(nvshmem, "_CURRENT", None)
    with pytest.raises(NotModelledError, match="PE 1 of 2: the CUDA emulator runs NVSHMEM with "
                                               "one PE"):
        nvshmem_emu.init(1, 2)


def test_a_wait_nobody_satisfies_is_a_deadlock_report(mod) -> None:
    with pytest.raises(DeadlockError, match=r"in nvshmem wait_until: the word at 0x[0-9a-f]+ "
                                            r"is 0, waiting for == 7"):
        nvshmem_emu.EmulatedNvshmemContext().launch((mod, "never"), 1, 32,
                                                    [np.zeros(1, "uint64")])
