"""run_isolated (the emulators' launch in a forked child): what the launch changed comes back,
an input it only reads is never written, and a failed launch leaves every array unchanged."""

from __future__ import annotations

import ctypes
import mmap
import os

import numpy as np
import pytest

from tvm.error import BoundsCheckError
from tvm.runtime.emu import run_isolated

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="run_isolated forks")

MIB = 1 << 20


def test_the_changes_come_back_piece_by_piece() -> None:
    out = np.full(3 * MIB + 5, 7, np.uint8)  # pieces: rewritten, zeroed, untouched, a tail
    inp = np.arange(1000, dtype=np.int32)

    def launch(pointers: dict[int, int]) -> None:
        ctypes.memset(pointers[0], 1, 10)
        ctypes.memset(pointers[0] + MIB, 0, MIB)
        ctypes.memset(pointers[0] + 3 * MIB + 4, 9, 1)

    run_isolated(launch, {0: out, 1: inp})
    want = np.full(3 * MIB + 5, 7, np.uint8)
    want[:10], want[MIB:2 * MIB], want[-1] = 1, 0, 9
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(inp, np.arange(1000, dtype=np.int32))


def test_an_input_only_read_is_not_written() -> None:
    """The input lives in read-only pages: writing it back (a crash here) is not done."""
    size = 4 * MIB
    ro = mmap.mmap(-1, size, prot=mmap.PROT_READ)
    inp = np.frombuffer(ro, dtype=np.uint8)
    out = np.zeros(1, np.int64)

    def launch(pointers: dict[int, int]) -> None:
        total = int(np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(
            pointers[0])).sum(dtype=np.int64))
        ctypes.c_int64.from_address(pointers[1]).value = total + 5

    run_isolated(launch, {0: inp, 1: out})
    assert out[0] == 5


def test_a_failed_launch_changes_nothing() -> None:
    out = np.ones(16, np.float32)

    def launch(pointers: dict[int, int]) -> None:
        ctypes.memset(pointers[0], 0, 64)
        raise BoundsCheckError("kernel 'k': out of bounds")

    with pytest.raises(BoundsCheckError, match="kernel 'k'"):
        run_isolated(launch, {0: out})
    np.testing.assert_array_equal(out, np.ones(16, np.float32))
