"""Run-time bounds checks in Metal kernels (issue 16): the check is printed by core's C-style
codegen; on a GPU a failed check ends the thread, and the CPU emulator turns it into a
BoundsCheckError naming the buffer and the index."""

from __future__ import annotations

import numpy as np
import pytest
from metal_helpers import compile_metal

from tvm.error import BoundsCheckError
from tvm.script import tirx as T


@T.prim_func
def scatter(A: T.Buffer((64,), "float32"), idx: T.Buffer((64,), "int32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([32])
    A[idx[bx * 32 + tx]] = A[idx[bx * 32 + tx]] + 1.0


def test_emulator_raises_for_a_failed_check(cxx) -> None:
    ex = compile_metal(scatter, pass_config={"tir.bounds_check": True})
    src = ex.inspect_source()
    assert "#ifndef TVM_BOUNDS_FAIL\n#define TVM_BOUNDS_FAIL(message) ((void)0)\n#endif" in src
    assert ('TVM_BOUNDS_FAIL("bounds check failed: buffer A index `idx[bx * 32 + tx]` is '
            'outside [0, 64)");\n    return;') in src
    a = np.zeros(64, "float32")
    ex.emulate(a, np.arange(64, dtype="int32"))
    np.testing.assert_array_equal(a, np.ones(64, "float32"))
    bad = np.arange(64, dtype="int32")
    bad[40] = 64
    with pytest.raises(BoundsCheckError, match=r"kernel 'scatter_kernel': bounds check failed: "
                                               r"buffer A index `idx\[bx \* 32 \+ tx\]` is "
                                               r"outside \[0, 64\)"):
        ex.emulate(a, bad)
    np.testing.assert_array_equal(a, np.ones(64, "float32"))  # isolated: buffers unchanged


def test_no_check_without_the_option(monkeypatch) -> None:
    monkeypatch.delenv("TVM_BOUNDS_CHECK", raising=False)
    assert "TVM_BOUNDS_FAIL" not in compile_metal(scatter).inspect_source()
