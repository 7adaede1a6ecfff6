"""The register form of the CUDA ``gemm`` variant ``mma.m16n8k*``: A, B, C, D are a warp's register
fragments (``local`` buffers laid out over ``laneid``).

The fragment layouts here are written out iterator by iterator, with register orders unlike the
usual ones (the N tile outermost in D, the K tile outermost in A), to show that the variant reads
the registers from the layout rather than assuming an order:

- lowering: one ``T.ptx.mma`` per (M, N, K) tile, ``m16n8k16`` when 16 divides K else ``m16n8k8``,
  D cleared, copied from C, or accumulated in place; the register indices are the layout's;
- declines, each with its reason: layouts that are not mma fragments, dtypes, alpha, beta, scope;
  core's generic gemm declines fragments too, so the call fails rather than computing per thread;
- ``gpu``: the kernels against torch (on the CPU under the CUDA emulator).
"""

from __future__ import annotations

from typing import Any, no_type_check

import pytest

import tvm
from tvm.ir.layout import Iter, TileLayout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_cuda.plugin import register_backend

register_backend()

L = "laneid"


def d_layout(mt: int, nt: int) -> TileLayout:
    """D/C [16 mt, 8 nt]; register nt * 4 mt + m * 4 + 2 rM + rN (N tile outermost)."""
    return TileLayout([Iter(mt, 4, "m"), Iter(2, 2, "m"), Iter(8, 4, L),
                       Iter(nt, 4 * mt, "m"), Iter(4, 1, L), Iter(2, 1, "m")])


def a_layout(mt: int, kt: int, k: int, transposed: bool = False) -> TileLayout:
    """A [16 mt, k kt] (``transposed``: stored [K, M]); register kt * (mt * 2k/4) + m * 2k/4 +
    4 kHi + 2 rM + p (K tile outermost)."""
    kh = k // 8
    rows = [Iter(mt, 4 * kh, "m"), Iter(2, 2, "m"), Iter(8, 4, L)]
    cols = [Iter(kt, mt * 4 * kh, "m"), Iter(kh, 4, "m"), Iter(4, 1, L), Iter(2, 1, "m")]
    return TileLayout(cols + rows if transposed else rows + cols)


def b_layout(kt: int, nt: int, k: int, transposed: bool = False) -> TileLayout:
    """B [k kt, 8 nt] (``transposed``: stored [N, K]); register nt * 2 kt kh + kt * 2 kh + 2 kHi
    + p."""
    kh = k // 8
    rows = [Iter(kt, 2 * kh, "m"), Iter(kh, 2, "m"), Iter(4, 1, L), Iter(2, 1, "m")]
    cols = [Iter(nt, kt * 2 * kh, "m"), Iter(8, 4, L)]
    return TileLayout(cols + rows if transposed else rows + cols)


@no_type_check
def frag_gemm(MT: int, NT: int, KT: int, k: int, *, dtype: str = "float16", ta: bool = False,
              tb: bool = False, beta: float = 0.0, c_is_d: bool = False,
              d_lay: TileLayout | None = None, a_dt: str | None = None,
              c_dt: str = "float32", alpha: float = 1.0) -> Any:
    """One warp: global A, B (C) into fragments, ``Tx.warp.gemm``, D back to global."""
    M, N, K = 16 * MT, 8 * NT, k * KT
    kh = k // 8
    Dl = d_layout(MT, NT) if d_lay is None else d_lay
    Al, Bl = a_layout(MT, KT, k, ta), b_layout(KT, NT, k, tb)
    a_shape = (K, M) if ta else (M, K)
    b_shape = (N, K) if tb else (K, N)
    a_dt = dtype if a_dt is None else a_dt

    @T.prim_func
    def kernel(a_ptr: T.handle, b_ptr: T.handle, c_ptr: T.handle, d_ptr: T.handle):
        A = T.match_buffer(a_ptr, a_shape, a_dt)
        B = T.match_buffer(b_ptr, b_shape, dtype)
        C = T.match_buffer(c_ptr, (M, N), "float32")
        D = T.match_buffer(d_ptr, (M, N), "float32")
        T.device_entry()
        _cta = T.cta_id([1])
        _warp = T.warp_id([1])
        lane = T.lane_id([32])
        Af = T.alloc_buffer(a_shape, a_dt, scope="local", layout=Al)
        Bf = T.alloc_buffer(b_shape, dtype, scope="local", layout=Bl)
        Cf = T.alloc_buffer((M, N), c_dt, scope="local", layout=Dl)
        Df = T.alloc_buffer((M, N), "float32", scope="local", layout=Dl)
        g = lane // 4
        t = lane % 4
        if ta:
            ar = Af.local(KT, kh, 2, MT, 2)
            for kt, hi, p, mt, rm in T.grid(KT, kh, 2, MT, 2):
                ar[kt, hi, p, mt, rm] = A[kt * k + 8 * hi + 2 * t + p, mt * 16 + 8 * rm + g]
        else:
            ar = Af.local(MT, 2, KT, kh, 2)
            for mt, rm, kt, hi, p in T.grid(MT, 2, KT, kh, 2):
                ar[mt, rm, kt, hi, p] = A[mt * 16 + 8 * rm + g, kt * k + 8 * hi + 2 * t + p]
        if tb:
            br = Bf.local(NT, KT, kh, 2)
            for nt, kt, hi, p in T.grid(NT, KT, kh, 2):
                br[nt, kt, hi, p] = B[nt * 8 + g, kt * k + 8 * hi + 2 * t + p]
        else:
            br = Bf.local(KT, kh, 2, NT)
            for kt, hi, p, nt in T.grid(KT, kh, 2, NT):
                br[kt, hi, p, nt] = B[kt * k + 8 * hi + 2 * t + p, nt * 8 + g]
        dr = Df.local(MT, 2, NT, 2)
        cr = Cf.local(MT, 2, NT, 2)
        for mt, rm, nt, rn in T.grid(MT, 2, NT, 2):
            if c_is_d:
                dr[mt, rm, nt, rn] = C[mt * 16 + 8 * rm + g, nt * 8 + 2 * t + rn]
            else:
                cr[mt, rm, nt, rn] = C[mt * 16 + 8 * rm + g, nt * 8 + 2 * t + rn]
        if c_is_d:
            Tx.warp.gemm(Df, Af, Bf, Df, transpose_A=ta, transpose_B=tb, alpha=alpha, beta=beta)
        else:
            Tx.warp.gemm(Df, Af, Bf, Cf, transpose_A=ta, transpose_B=tb, alpha=alpha, beta=beta)
        for mt, rm, nt, rn in T.grid(MT, 2, NT, 2):
            D[mt * 16 + 8 * rm + g, nt * 8 + 2 * t + rn] = dr[mt, rm, nt, rn]

    return kernel


def _lower(func: Any) -> str:
    with tvm.target.Target("cuda"):
        return tvm.tirx.transform.LowerTIRx()(tvm.IRModule({"main": func}))["main"].script()


# -- lowering ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("MT, NT, KT, k", [(1, 1, 1, 16), (3, 2, 1, 16), (2, 3, 2, 16),
                                           (1, 2, 5, 8), (2, 1, 1, 8)])
def test_one_mma_per_tile(MT: int, NT: int, KT: int, k: int) -> None:
    script = _lower(frag_gemm(MT, NT, KT, k))
    assert script.count("T.ptx.mma(") == MT * NT * KT
    assert script.count(f'"m16n8k{k}"') == MT * NT * KT
    # beta = 0: D's 4 registers of every tile are cleared once, before the K loop
    assert script.count("T.float32(0.0)") == MT * NT * 4


def test_registers_follow_the_layout() -> None:
    # MT = 2, NT = 2, K = 16: D's register of (mt, nt, e) is nt * 8 + mt * 4 + e, so the last
    # tile's accumulators are d_local[12..15]; A's second M tile starts at register 8 (kt = 0);
    # B's second N tile at register 4
    script = _lower(frag_gemm(2, 2, 1, 16))
    last = script.split("T.ptx.mma(")[-1]
    assert "d_local[12], d_local[13], d_local[14], d_local[15]" in last
    assert "a_local[8], a_local[10], a_local[12], a_local[14]" in last
    assert "b_local[4], b_local[6]" in last


def test_beta_one_copies_c_or_accumulates_in_place() -> None:
    copied = _lower(frag_gemm(1, 2, 1, 16, beta=1.0))
    assert copied.count("c_local[") == 8 and "T.float32(0.0)" not in copied
    in_place = _lower(frag_gemm(1, 2, 1, 16, beta=1.0, c_is_d=True))
    # (not a bare "c_local": register buffers print as T.alloc_local)
    assert " c_local" not in in_place and "c_local[" not in in_place
    assert "T.float32(0.0)" not in in_place
    assert in_place.count("T.ptx.mma(") == 2


@pytest.mark.parametrize("k, dtype", [(16, "bfloat16"), (8, "float16")])
def test_compiles_with_one_helper_per_form(k: int, dtype: str) -> None:
    # NVRTC compiles it for sm_80; the PTX sits once, in the helper, called once per tile
    ex = tvm.compile(frag_gemm(2, 1, 3, k, dtype=dtype, beta=1.0),
                     target={"kind": "cuda", "arch": "sm_80"})
    src = ex.inspect_source()
    t = "f16" if dtype == "float16" else "bf16"
    assert src.count(f"mma.sync.aligned.m16n8k{k}.row.col.f32.{t}.{t}.f32 ") == 1
    name = f"ptx_mma_m16n8k{k}_row_col_f32_{t}_{t}_f32("
    assert f"__device__ __forceinline__ void {name}float &d0" in src
    assert src.count(name) == 1 + 2 * 1 * 3


# -- declines ---------------------------------------------------------------------------------------
def _fails(func: Any, *reasons: str) -> None:
    with pytest.raises(RuntimeError, match="dispatch failed") as info:
        _lower(func)
    for r in reasons:
        assert r in str(info.value), str(info.value)


def test_wrong_lane_layout_is_named() -> None:
    # D's rows and columns swapped within the 16x8 tile's lane grid: not an mma fragment
    swapped = TileLayout([Iter(2, 2, "m"), Iter(8, 1, L), Iter(4, 8, L), Iter(2, 1, "m")])
    _fails(frag_gemm(1, 1, 1, 16, d_lay=swapped),
           "D's layout", "the mma fragment has it in lane",
           "the generic gemm computes each element of D in one thread")


@pytest.mark.parametrize("a_dt, c_dt, what", [
    ("float16", "float16", "C=float16"),  # f16 accumulation is not generated
    ("bfloat16", "float32", "A=bfloat16, B=float16"),  # mixed inputs
])
def test_dtype_signatures_decline(a_dt: str, c_dt: str, what: str) -> None:
    _fails(frag_gemm(1, 1, 1, 16, a_dt=a_dt, c_dt=c_dt, beta=1.0), what,
           "float16 x float16 or bfloat16 x bfloat16 with float32 C and D only")


def test_alpha_and_beta_decline() -> None:
    _fails(frag_gemm(1, 1, 1, 16, alpha=0.5), "alpha is 0.5; mma.sync has no scale")
    _fails(frag_gemm(1, 1, 1, 16, beta=2.0), "beta is 2.0; mma.sync accumulates 1 * C")


# -- numerics -----------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("MT, NT, KT, k, ta, tb, beta, c_is_d, dtype", [
    (2, 3, 2, 16, False, False, 0.0, False, "float16"),
    (1, 2, 5, 8, False, True, 1.0, False, "bfloat16"),
    (3, 1, 1, 16, True, False, 1.0, True, "float16"),
    (2, 2, 3, 8, True, True, 1.0, False, "float16"),
])
def test_fragment_gemm_on_gpu(MT: int, NT: int, KT: int, k: int, ta: bool, tb: bool, beta: float,
                              c_is_d: bool, dtype: str, device: str) -> None:
    torch = pytest.importorskip("torch")
    M, N, K = 16 * MT, 8 * NT, k * KT
    ex = tvm.compile(frag_gemm(MT, NT, KT, k, dtype=dtype, ta=ta, tb=tb, beta=beta,
                               c_is_d=c_is_d), target="cuda")
    gen = torch.Generator().manual_seed(7)
    tdt = getattr(torch, dtype)
    a = torch.randn((K, M) if ta else (M, K), generator=gen).to(tdt).to(device)
    b = torch.randn((N, K) if tb else (K, N), generator=gen).to(tdt).to(device)
    c = torch.randn((M, N), generator=gen).to(device)
    d = torch.zeros((M, N), device=device)
    ex(a, b, c, d)
    if device == "cuda":
        torch.cuda.synchronize()
    want = (a.T if ta else a).float() @ (b.T if tb else b).float() + (c if beta else 0)
    torch.testing.assert_close(d, want, rtol=1e-3, atol=1e-3)
