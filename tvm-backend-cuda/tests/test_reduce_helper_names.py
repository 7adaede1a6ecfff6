"""``T.cuda.warp_<op>`` / ``T.cuda.cta_<op>`` with a constant width or warp count call a helper
named by the seed's form (``tvm_warp_reduce_max_16``, ``tvm_cta_reduce_min_2``), and compute the
reduction; a width that is not a constant keeps the generic helper."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np

import tvm
from tvm.script import tirx as T

H100 = "nvidia/nvidia-h100"


@no_type_check
def _warp_max_16() -> Any:
    @T.prim_func
    def k(out_ptr: T.handle):
        out = T.match_buffer(out_ptr, (32,), "float32")
        T.device_entry()
        T.cta_id([1])
        lane = T.lane_id([32])
        v: T.f32 = T.float32((lane * 7) % 19)
        v = T.cuda.warp_max(v, 16)
        out[lane] = v

    return k


@no_type_check
def _cta_min_2() -> Any:
    @T.prim_func
    def k(out_ptr: T.handle):
        out = T.match_buffer(out_ptr, (64,), "int32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([64])
        scratch = T.alloc_buffer((2,), "int32", scope="shared")
        v: T.int32 = (tid * 13) % 29 + 3
        v = T.cuda.cta_min(v, 2, scratch.ptr_to([0]))
        out[tid] = v

    return k


def test_warp_helper_named_and_correct() -> None:
    ex = tvm.compile(_warp_max_16(), target=H100, emulate=True)
    assert "tvm_warp_reduce_max_16(" in ex.inspect_source()
    out = np.zeros(32, "float32")
    ex(out)
    vals = (np.arange(32) * 7) % 19
    want = np.concatenate([np.full(16, vals[:16].max()), np.full(16, vals[16:].max())])
    np.testing.assert_array_equal(out, want)


def test_cta_helper_named_and_correct() -> None:
    ex = tvm.compile(_cta_min_2(), target=H100, emulate=True)
    assert "tvm_cta_reduce_min_2(" in ex.inspect_source()
    out = np.zeros(64, "int32")
    ex(out)
    np.testing.assert_array_equal(out, np.full(64, ((np.arange(64) * 13) % 29 + 3).min()))
