"""Register element-wise ops two registers at a time: float32 ``add``/``sub``/``mul``/``fma``
through ``{op}.rn.ftz.f32x2`` on sm_100+ (``T.ptx.<op>_packed_f32x2``), and float32 <->
float16/bfloat16 casts through CUDA's paired conversions (``T.cuda.cast_vec2``); where they do
not apply, the scalar (vectorized) path."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, tid_in_wg

B200 = {"kind": "cuda", "arch": "sm_100a"}
H100 = {"kind": "cuda", "arch": "sm_90a"}
ROWS, COLS = 32, 12


@no_type_check
def _fma_sub_kernel() -> Any:
    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (ROWS, COLS), "float32")
        B = T.match_buffer(B_ptr, (ROWS, COLS), "float32")
        C = T.match_buffer(C_ptr, (ROWS, COLS), "float32")
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([ROWS])
        ra = T.alloc_buffer((COLS,), "float32", scope="local")
        rb = T.alloc_buffer((COLS,), "float32", scope="local")
        Tx.copy(ra, A[tx])
        Tx.copy(rb, B[tx])
        Tx.fma(ra, ra, rb, ra)  # a * b + a
        Tx.sub(rb, ra, rb)  # a * b + a - b
        Tx.mul(ra, ra, 2.0)  # a scalar operand: not packed
        Tx.copy(C[tx], rb)

    return k


def _source(func: Any, target: dict[str, str]) -> str:
    return tvm.compile(func, target=target).inspect_source()


def test_sm100_packs_float32_pairs() -> None:
    src = _source(_fma_sub_kernel(), B200)
    assert src.count("tvm_builtin_ptx_fma_packed_rn_f32x2(") == 1 + COLS // 2  # helper + calls
    assert src.count("tvm_builtin_ptx_sub_packed_rn_f32x2(") == 1 + COLS // 2
    assert "fma.rn.ftz.f32x2" in src and "sub.rn.ftz.f32x2" in src
    assert "mul_packed" not in src  # ra * 2.0 has a scalar operand


def test_sm90_keeps_the_scalar_path() -> None:
    src = _source(_fma_sub_kernel(), H100)
    assert "f32x2" not in src and "packed" not in src


@no_type_check
def _cast_kernel(src_dtype: str, dst_dtype: str, n: int) -> Any:
    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (128, n), src_dtype)
        B = T.match_buffer(B_ptr, (128, n), dst_dtype)
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        tid = T.thread_id_in_wg([128])
        rs = T.alloc_buffer((n,), src_dtype, scope="local")
        rd = T.alloc_buffer((n,), dst_dtype, scope="local")
        for i in T.serial(n):
            rs[i] = A[tid, i]
        lay = TileLayout(S[(128, n):(1 @ tid_in_wg, 1)])
        rs_view = rs.view(128, n, layout=lay)
        rd_view = rd.view(128, n, layout=lay)
        Tx.wg.cast(rd_view, rs_view)
        for i in T.serial(n):
            B[tid, i] = rd[i]

    return k


@pytest.mark.parametrize("src_dtype,dst_dtype,fn", [
    ("float32", "bfloat16", "__float22bfloat162_rn"),
    ("bfloat16", "float32", "__bfloat1622float2"),
    ("float32", "float16", "__float22half2_rn"),
    ("float16", "float32", "__half22float2"),
])
def test_cast_pairs_run(src_dtype: str, dst_dtype: str, fn: str) -> None:
    import ml_dtypes  # noqa: PLC0415 - bfloat16 arrays

    n = 6
    ex = tvm.compile(_cast_kernel(src_dtype, dst_dtype, n), target=H100, emulate=True)
    gpu = ex.inspect_source()
    helper = f"tvm_builtin_cast_{src_dtype}x2_{dst_dtype}x2"
    assert gpu.count(helper + "(") == 1 + n // 2 and fn in gpu
    np_dtype = {"bfloat16": ml_dtypes.bfloat16}.get(src_dtype, src_dtype)
    out_dtype = {"bfloat16": ml_dtypes.bfloat16}.get(dst_dtype, dst_dtype)
    a = ((np.arange(128 * n).reshape(128, n) % 97) * 0.37 - 11.0).astype(np_dtype)
    b = np.zeros((128, n), out_dtype)
    ex(a, b)
    np.testing.assert_array_equal(b.astype("float32"), a.astype(out_dtype).astype("float32"))


def test_odd_register_run_is_not_paired() -> None:
    src = _source(_cast_kernel("float32", "float16", 5), H100)
    assert "cast_float32x2" not in src
