"""Run-time bounds checks in the Trainium simulator (issue 16): every view always stays inside
its tensor; with bounds checking on, a tile that runs past the end of a row of an HBM tensor
(into the next row, inside the tensor) is a BoundsCheckError instead of a silent misread."""

from __future__ import annotations

import numpy as np
import pytest

from tvm.error import BoundsCheckError
from tvm_backend_trn import isa
from tvm_backend_trn.simulator import SimulatorError, simulate

H = isa.HbmTensor("h", (128, 16), "float32")
SB = isa.SbufTensor("sb", 64, (16,), "float32")


def _copy(starts: list[int]) -> isa.Kernel:
    return isa.Kernel("k", (H,), (SB,), (isa.DmaCopy(SB.full(), src=H.tile(starts, [64, 16])),))


def test_a_tile_past_the_end_of_a_row_is_caught_with_bounds_checking() -> None:
    inputs = {"h": np.arange(128 * 16, dtype="float32").reshape(128, 16)}
    simulate(_copy([0, 8]), inputs, bounds_check=False)  # reads into the next row, silently
    with pytest.raises(BoundsCheckError, match=r"bounds check failed: HBM tensor 'h' of shape "
                                               r"\(128, 16\): index \[0, 8\.\.23\] leaves "
                                               r"dimension 1 \(extent 16\)\n  at instruction #0"):
        simulate(_copy([0, 8]), inputs, bounds_check=True)


def test_the_environment_turns_it_on(monkeypatch) -> None:
    monkeypatch.setenv("TVM_BOUNDS_CHECK", "1")
    with pytest.raises(BoundsCheckError):
        simulate(_copy([0, 8]), {"h": np.zeros((128, 16))})


def test_in_bounds_tiles_and_merged_rows_pass() -> None:
    inputs = {"h": np.arange(128 * 16, dtype="float32").reshape(128, 16)}
    simulate(_copy([64, 0]), inputs, bounds_check=True)
    # one contiguous run over two whole rows is a merged axis, not an overrun
    sb2 = isa.SbufTensor("sb2", 64, (32,), "float32")
    merged = isa.AP("h", 64, ((1, 32),), offset=0, p_stride=32)
    simulate(isa.Kernel("k", (H,), (sb2,), (isa.DmaCopy(sb2.full(), src=merged),)), inputs,
             bounds_check=True)


def test_leaving_the_whole_tensor_is_always_an_error() -> None:
    with pytest.raises(SimulatorError, match="view of HBM tensor 'h' reaches elements"):
        simulate(_copy([100, 0]), {"h": np.zeros((128, 16))}, bounds_check=False)


def test_the_build_option_reaches_the_simulator(monkeypatch) -> None:
    import tvm
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_trn.plugin import register_backend

    register_backend()
    monkeypatch.delenv("TVM_BOUNDS_CHECK", raising=False)

    @T.prim_func
    def f(X: T.Buffer((128, 16), "float32"), Y: T.Buffer((128, 16), "float32")):
        s = T.alloc_buffer((128, 16), "float32", scope="trn.sbuf")
        Tx.copy(s, X)
        Tx.copy(Y, s)

    ex = tvm.compile(f, target="aws/trn1/trn1.2xlarge", bounds_check=True)
    x, y = np.arange(128 * 16, dtype="float32").reshape(128, 16), np.zeros((128, 16), "float32")
    ex(x, y)
    np.testing.assert_array_equal(y, x)
    assert ex.metadata["bounds_check"] is True
    assert ex.get_function(ex.entry_name).bounds_check is True
