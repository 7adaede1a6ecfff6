"""The GEMM of ``tvm_backend_cuda.kernels`` without a GPU: NVRTC compiles of every variant
(sm_90a and sm_100a; epilogues, float16 out, accurate float8, both tile widths), the fused
epilogue's arithmetic on the CTA emulator (the same ``epilogue_pair`` the kernel calls, with the
kernel's register-to-element mapping, at an edge tile), and the argument checks of the factory
and of the ready callable. On the GPU: ``test_gpu_kernels_lib.py``."""

from __future__ import annotations

import math
from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()  # a source checkout on PYTHONPATH has no entry point

from cta_emulator import run_kernel  # noqa: E402

from tvm_backend_cuda import kernels  # noqa: E402
from tvm_backend_cuda.kernels import Epilogue, gemm_func  # noqa: E402
from tvm_backend_cuda.kernels._gemm import HALVES_BLOCK, epilogue_pair  # noqa: E402


def _compile(func: Any, arch: str) -> Any:
    return tvm.compile(func, target={"kind": "cuda", "arch": arch})


# -- NVRTC ---------------------------------------------------------------------------------------

GEMM_SHAPES = [(300, 264, 48, "bfloat16"), (1000, 1000, 512, "bfloat16"),
               (129, 520, 64, "float16"), (777, 1032, 256, "float8_e4m3fn")]


@pytest.mark.parametrize("m, n, k, dtype", GEMM_SHAPES)
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_gemm_compiles_with_nvrtc(m: int, n: int, k: int, dtype: str, arch: str) -> None:
    ex = _compile(gemm_func(m, n, k, dtype, arch=arch), arch)
    src = ex.inspect_source()
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in src  # the TMA-store epilogue
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier" in src  # TMA loads
    k_inst = "k32" if dtype.startswith("float8") else "k16"
    if arch == "sm_90a":
        assert "__launch_bounds__(384, 1)" in src
        assert "setmaxnreg.dec.sync.aligned.u32 40" in src
        assert "setmaxnreg.inc.sync.aligned.u32 232" in src
        assert src.count(f"wgmma.mma_async.sync.aligned.m64n256{k_inst}") == 4
    else:
        kind = "f8f6f4" if dtype.startswith("float8") else "f16"
        assert src.count(f"tcgen05.mma.cta_group::1.kind::{kind}") == 4
        assert src.count("tcgen05.ld.sync.aligned.32x32b.x64.b32") == 4
        assert "tcgen05.alloc.cta_group::1" in src and "tcgen05.dealloc.cta_group::1" in src
    pack = "tvm_float22half2_rn(" if dtype == "float16" else "tvm_float22bfloat162_rn("
    assert pack in src


EPILOGUES = [
    {"bias": True, "activation": "silu"},
    {"residual": True},
    {"bias": True, "activation": "gelu", "residual": True, "scaled": True},
    {"activation": "relu", "block_n": 128},
]


@pytest.mark.parametrize("opts", EPILOGUES, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_fused_epilogue_compiles_with_nvrtc(opts: dict[str, Any], arch: str) -> None:
    f = gemm_func(1000, 1032, 256, arch=arch, **opts)
    names = [p.name for p in f.params]
    want = ["A", "B", *(["bias"] if opts.get("bias") else []),
            *(["residual"] if opts.get("residual") else []),
            *(["scale_a", "scale_b"] if opts.get("scaled") else []), "C"]
    assert names == want
    src = _compile(f, arch).inspect_source()
    kernel = src[src.index("__global__"):]
    assert ("bias_w[" in kernel) == bool(opts.get("bias"))
    assert ("residual_w[" in kernel) == bool(opts.get("residual"))
    act = opts.get("activation")
    assert ("tvm_ptx_tanh(" in kernel) == (act in ("silu", "gelu"))
    # the math is plain asm: the compiler may schedule the epilogue's loads around it
    assert 'asm("tanh.approx.f32' in src if act in ("silu", "gelu") else True
    assert "(scale_a[0] * scale_b[0])" in kernel if opts.get("scaled") else "scale_a" not in kernel
    # the bias and residual loads are clamped into the arrays (edge tiles)
    if opts.get("residual"):
        assert "(999)" in kernel and "* 516)" in kernel
    if opts.get("bias") or opts.get("residual"):
        assert "(1030)" in kernel


def test_accurate_fp8_promotes_into_float32_registers() -> None:
    fast = _compile(gemm_func(256, 256, 1024, "float8_e4m3fn", arch="sm_90a"), "sm_90a")
    acc = _compile(gemm_func(256, 256, 1024, "float8_e4m3fn", arch="sm_90a", accurate=True,
                             block_n=128), "sm_90a")
    src = acc.inspect_source()
    # a 128-wide tile: 64 accumulators a thread in each of two scratch accumulators taking
    # turns, and 64 float32 ones they are added into; K 1024 is one block of 8 stages (4 MMAs
    # each), each stage waiting for all but its own group, the last for all
    assert src.count("wgmma.mma_async.sync.aligned.m64n128k32") == 32
    assert "float fin[64]" in src and "float acc2[64]" in src
    assert src.count("wgmma.wait_group.sync.aligned 1") == 7
    assert src.count("wgmma.wait_group.sync.aligned 0") == 1
    assert src.count("fin[63] = (fin[63] + acc[63]);") == 4
    assert src.count("fin[63] = (fin[63] + acc2[63]);") == 4
    assert "float fin[64]" not in fast.inspect_source()
    assert "wgmma.wait_group.sync.aligned 1" in fast.inspect_source()
    every2 = _compile(gemm_func(256, 256, 1024, "float8_e4m3fn", arch="sm_90a", accurate=True,
                                block_n=128, promote_every=2), "sm_90a").inspect_source()
    # groups of two stages: half as many additions
    assert every2.count("wgmma.wait_group.sync.aligned 1") == 7
    assert every2.count("fin[63] = (fin[63] + acc[63]);") == 2
    assert every2.count("fin[63] = (fin[63] + acc2[63]);") == 2
    # the default 192-wide tile: two scratch accumulators of half its columns (48 registers
    # each) beside 96 float32 sums, consumers at 240 registers; each stage is two groups (one
    # a half), each group waiting for all but itself and adding the previous one into fin; a
    # loop of blocks of HALVES_BLOCK stages, the last group of a block waited for
    wide = _compile(gemm_func(256, 256, 1024, "float8_e4m3fn", arch="sm_90a", accurate=True),
                    "sm_90a").inspect_source()
    groups = 2 * HALVES_BLOCK
    assert wide.count("wgmma.mma_async.sync.aligned.m64n96k32") == 4 * groups
    assert "float fin[96]" in wide and "float acc2[48]" in wide
    assert "setmaxnreg.inc.sync.aligned.u32 240" in wide
    assert wide.count("wgmma.wait_group.sync.aligned 1") == groups - 1
    assert wide.count("wgmma.wait_group.sync.aligned 0") == 1
    assert wide.count("fin[47] = (fin[47] + acc[47]);") == HALVES_BLOCK
    assert wide.count("fin[95] = (fin[95] + acc2[47]);") == HALVES_BLOCK


@pytest.mark.parametrize("cluster, multicasts, peers", [((2, 1), 1, 2), ((1, 2), 1, 2),
                                                     ((2, 2), 2, 3)])
def test_clusters_multicast_and_release_to_every_reader(cluster: tuple[int, int],
                                                        multicasts: int, peers: int) -> None:
    """In a cluster each CTA loads its part of the tiles it shares and multicasts it; a
    consumer warpgroup arrives once on the empty barrier of each CTA whose multicasts it read
    (``peers``: its cluster row and column), so the barriers count 2 warpgroups x peers."""
    import re

    f = gemm_func(300, 520, 256, arch="sm_90a", cluster=cluster)
    src = _compile(f, "sm_90a").inspect_source()
    size = cluster[0] * cluster[1]
    assert f"__cluster_dims__({size}, 1, 1)" in src
    assert src.count(".multicast::cluster") == multicasts
    empty_counts = re.findall(r"pipe_empty\[\d+\]\)\)\), \"r\"\(\(unsigned\)\((\d+)\)\)", src)
    assert empty_counts and set(empty_counts) == {str(2 * peers)}
    assert "mbarrier.arrive.release.cluster.shared::cluster.b64" in src  # the remote arrivals
    # one cluster barrier after the barriers' set-up, one before the CTAs leave
    assert src.count("barrier.cluster.arrive") == 2
    plain = _compile(gemm_func(300, 520, 256, arch="sm_90a"), "sm_90a").inspect_source()
    assert "__cluster_dims__" not in plain and ".multicast::cluster" not in plain


def test_accurate_on_blackwell_is_the_float32_accumulator() -> None:
    a = gemm_func(256, 256, 512, "float8_e4m3fn", arch="sm_100a", accurate=True)
    b = gemm_func(256, 256, 512, "float8_e4m3fn", arch="sm_100a", block_n=128)
    assert a.script() == b.script()


def test_factory_errors_say_what_to_change() -> None:
    cases = [
        (dict(m=64, n=64, k=40), "k = 40 must be a multiple of 16"),
        (dict(m=64, n=60, k=64), "n = 60 must be a multiple of 8"),
        (dict(m=0, n=64, k=64), "m must be a positive int, got 0"),
        (dict(m=64, n=64, k=64, out_dtype="float32"), "out_dtype 'float32'"),
        (dict(m=64, n=64, k=64, dtype="float32"), "dtype 'float32' is not one of"),
        (dict(m=64, n=64, k=64, stages=9), "stages=9: between 2 and 3 stages of 49152 bytes"),
        (dict(m=64, n=64, k=64, block_n=64), "block_n=64 is not one of (128, 256)"),
        (dict(m=64, n=64, k=64, dtype="float8_e4m3fn", accurate=True, block_n=256),
         "block_n must be one of (128, 192), got 256"),
        (dict(m=64, n=64, k=64, activation="tanh"), "activation 'tanh' is not one of"),
        (dict(m=64, n=64, k=64, arch="sm_80"), "arch 'sm_80': the kernel is written for"),
        (dict(m=64, n=64, k=64, cluster=(4, 1)), "cluster=(4, 1) must be (cluster_m, "
                                                 "cluster_n), each 1 or 2"),
        (dict(m=64, n=64, k=64, cluster=2), "cluster=2 must be (cluster_m, cluster_n)"),
        (dict(m=64, n=64, k=64, cluster=(2, 1), arch="sm_100a"),
         "cluster=(2, 1) (TMA multicast) is built for sm_90a; on sm_100a use cluster=(1, 1)"),
    ]
    for kwargs, message in cases:
        kwargs.setdefault("arch", "sm_90a")
        with pytest.raises(ValueError) as info:
            gemm_func(**kwargs)
        assert message in str(info.value), (kwargs, str(info.value))


# -- the epilogue's arithmetic on the emulator -------------------------------------------------


@no_type_check
def epilogue_probe(ep: Epilogue, m: int, n: int, m0: int, n0: int, bn: int, out_dtype: str
                   ) -> Any:
    """One consumer warpgroup's ``64 x bn`` accumulators (read from ``Acc``) through
    :func:`epilogue_pair` with the kernel's register-to-element mapping, for the tile at
    ``(m0, n0)`` of an ``m x n`` output; ``Out`` gets the packed words."""

    @T.prim_func
    def probe(Acc: T.Buffer((64, bn), "float32"), bias: T.Buffer((n,), out_dtype),
              residual: T.Buffer((m, n), out_dtype), scale_a: T.Buffer((1,), "float32"),
              scale_b: T.Buffer((1,), "float32"), Out: T.Buffer((64, bn // 2), "uint32")):
        T.device_entry()
        bias_w = T.decl_buffer((n // 2,), "uint32", data=bias.data)
        residual_w = T.decl_buffer((m, n // 2), "uint32", data=residual.data)
        bx = T.cta_id([1])  # noqa: F841
        tid = T.thread_id([128])
        for p in T.serial(bn // 4):
            r = T.meta_var(tid // 32 * 16 + p % 2 * 8 + tid % 32 // 4)
            c = T.meta_var(p // 2 * 8 + tid % 4 * 2)
            Out[r, c // 2] = epilogue_pair(ep, Acc[r, c], Acc[r, c + 1], m0 + r, n0 + c,
                                           shape=(m, n), out_dtype=out_dtype, bias_w=bias_w,
                                           residual_w=residual_w,
                                           scale=scale_a[0] * scale_b[0])

    return probe


def _np16(dtype: str) -> Any:
    import ml_dtypes

    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16


def _activate(x: np.ndarray, act: str | None) -> np.ndarray:
    if act == "relu":
        return np.maximum(x, 0)
    if act == "silu":
        return x / (1 + np.exp(-x))
    if act == "gelu":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return x


PROBES = [
    (Epilogue(bias=True, activation="silu"), "bfloat16"),
    (Epilogue(bias=True, activation="gelu", residual=True, scaled=True), "bfloat16"),
    (Epilogue(activation="relu", residual=True), "float16"),
    (Epilogue(scaled=True), "bfloat16"),
]


@pytest.mark.parametrize("ep, out_dtype", PROBES, ids=lambda v: str(v))
def test_epilogue_arithmetic_on_the_emulator(ep: Epilogue, out_dtype: str) -> None:
    # the last tile of a 100 x 136 output with 128-wide tiles: rows 64.. and columns 128..
    # run past the edge (those elements are the TMA store's to clip; their loads stay inside)
    m, n, bn, m0, n0 = 100, 136, 128, 64, 128
    rng = np.random.default_rng(7)
    dt = _np16(out_dtype)
    acc = (rng.standard_normal((64, bn)) * 3).astype(np.float32)
    bias = rng.standard_normal(n).astype(dt)
    residual = rng.standard_normal((m, n)).astype(dt)
    sa, sb = np.array([0.5], np.float32), np.array([1.5], np.float32)
    out = np.full((64, bn // 2), 0xFFFFFFFF, dtype=np.uint32)
    run_kernel(epilogue_probe(ep, m, n, m0, n0, bn, out_dtype),
               [acc, bias, residual, sa, sb, out], arch="sm_90a")
    got = out.view(dt).astype(np.float64)  # the pairs, low element first, as in memory
    x = acc.astype(np.float64) * (0.75 if ep.scaled else 1.0)
    rows, cols = np.arange(64)[:, None] + m0, np.arange(bn)[None, :] + n0
    inside = (rows < m) & (cols < n)
    if ep.bias:
        x = x + bias.astype(np.float64)[np.minimum(cols, n - 1)]
    x = _activate(x, ep.activation)
    if ep.residual:
        x = x + residual.astype(np.float64)[np.minimum(rows, m - 1), np.minimum(cols, n - 1)]
    want = x.astype(dt).astype(np.float64)
    assert np.isfinite(got).all()  # every element was written, the clamped ones too
    np.testing.assert_allclose(got[inside], want[inside], rtol=1e-2, atol=2e-2)
    assert inside.sum() == 36 * 8


# -- the ready callable's checks (no GPU: they come before any launch) -----------------------------


def test_gemm_callable_checks_its_arguments() -> None:
    torch = pytest.importorskip("torch")
    bf = torch.bfloat16
    cases = [
        (lambda: kernels.gemm(torch.ones(4, 16), torch.ones(8, 16)),
         "kernels.gemm: a has dtype torch.float32; supported: bfloat16, float16, float8_e4m3fn"),
        (lambda: kernels.gemm(torch.ones(4, 16, dtype=bf), torch.ones(8, 16, dtype=torch.float16)),
         "a is torch.bfloat16 but b is torch.float16"),
        (lambda: kernels.gemm(torch.ones(4, 16, dtype=bf), torch.ones(8, 32, dtype=bf)),
         "a is [..., 16] but b is [8, 32]"),
        (lambda: kernels.gemm(torch.ones(4, 24, dtype=bf), torch.ones(8, 24, dtype=bf)),
         "k = 24 must be a multiple of 16"),
        (lambda: kernels.gemm(torch.ones(4, 16, dtype=bf), torch.ones(8, 16, dtype=bf)),
         "a is on cpu; these kernels run on CUDA devices"),
        (lambda: kernels.gemm(torch.ones(4, 16, dtype=bf, device="meta"),
                              torch.ones(8, 16, dtype=bf)),
         "a is on meta; these kernels run on CUDA devices"),
        (lambda: kernels.gemm(torch.ones(4, 16, dtype=bf), torch.ones(8, 16, dtype=bf),
                              bias=torch.ones(9, dtype=bf)),
         "kernels.gemm: bias must have shape (8,), got (9,)"),
        (lambda: kernels.gemm(torch.ones(4, 16, dtype=bf), torch.ones(8, 16, dtype=bf),
                              residual=torch.ones(4, 9, dtype=bf)),
         "kernels.gemm: residual must have the result's shape (4, 8), got (4, 9)"),
        (lambda: kernels.gemm(torch.ones(4, 16, dtype=bf), torch.ones(8, 16, dtype=bf),
                              bias=torch.ones(8)),
         "kernels.gemm: bias has dtype torch.float32; supported: bfloat16"),
        (lambda: kernels.softmax(torch.ones(4, 12)),
         "kernels.softmax: the last dimension (12) must be a positive multiple of 8"),
        (lambda: kernels.rms_norm(torch.ones(4, 16, dtype=torch.float16), torch.ones(16)),
         "kernels.rms_norm: x has dtype torch.float16; supported: float32, bfloat16"),
        (lambda: kernels.add(torch.ones(8), torch.ones(16)),
         "kernels.add: a and b must have the same shape, got (8,) and (16,)"),
        (lambda: kernels.gemm([1], None), "kernels.gemm: a must be a torch tensor, got list"),
    ]
    for call, message in cases:
        with pytest.raises((TypeError, ValueError)) as info:
            call()
        assert message in str(info.value), (message, str(info.value))


def test_gemm_candidates_fill_the_last_wave() -> None:
    # 1280 x 3584 on 132 SMs: 128 x 256 tiles are 140 (the second wave 6% busy), 128 x 128
    # ones 280 (71% of three waves busy): the narrower tile is the default
    cands = kernels.gemm_candidates(1280, 3584, 4096, "bfloat16")("sm_90a", 132)
    assert cands[0] == {"block_n": 128, "group_m": 8, "num_ctas": 132}
    assert {c["block_n"] for c in cands} == {128, 256}
    square = kernels.gemm_candidates(4096, 4096, 4096, "bfloat16")("sm_90a", 132)
    assert square[0]["block_n"] == 256
    acc = kernels.gemm_candidates(8192, 8192, 8192, "float8_e4m3fn", True)("sm_90a", 132)
    # accurate float8: the 192-wide tile (half-width scratch accumulators) first, then 128
    assert acc[0]["block_n"] == 192 and {c["block_n"] for c in acc} == {128, 192}
    # 8192^3 in 128 x 256 tiles: 2048 tiles are 15.5 waves on 132 SMs, 16 tiles each on 128
    big = kernels.gemm_candidates(8192, 8192, 8192, "float8_e4m3fn")("sm_90a", 132)
    assert {"block_n": 256, "group_m": 8, "num_ctas": 128} in big
    assert [c["num_ctas"] for c in square if c["block_n"] == 256] == [132, 132, 128, 132]
    # on sm_90a, pairs of CTAs sharing B's tile by multicast, one candidate a tile width (the
    # accurate tiles with their group); none on sm_100a (tcgen05's 2-CTA MMA is another kernel)
    assert [c for c in square if "cluster" in c] == [
        {"block_n": bn, "group_m": 8, "num_ctas": 132, "cluster": (2, 1)} for bn in (256, 128)]
    assert [c for c in acc if "cluster" in c] == [
        {"block_n": bn, "group_m": 16, "num_ctas": 132, "cluster": (2, 1)} for bn in (192, 128)]
    assert not any("cluster" in c for c in kernels.gemm_candidates(
        4096, 4096, 4096, "bfloat16")("sm_100a", 148))
    # C in parts (``store_n``) measured slower on the H200: not a candidate
    assert not any("store_n" in c for c in square + acc)
    # 1280 x 3584 in 128 x 128 tiles: 280 tiles, 3 waves of 94 CTAs
    assert {"block_n": 128, "group_m": 8, "num_ctas": 94} in cands
    for c in cands + acc:  # every candidate is a valid configuration of the factory
        gemm_func(256, 256, 256, "float8_e4m3fn" if c in acc else "bfloat16", arch="sm_90a",
                  accurate=c in acc, **c)


def test_the_library_is_reachable_from_tvm() -> None:
    import tvm.backend.cuda.kernels as via_tvm

    assert via_tvm is kernels and via_tvm.gemm_func is gemm_func


@pytest.mark.parametrize("block_n", [64, 128, 256])  # 64: a part of C stored in parts
def test_the_staging_tiles_word_view_is_the_same_bytes(block_n: int) -> None:
    # the epilogue writes pairs through a uint32 view (Cw) of the 128B-swizzled bf16 staging
    # tile (Cs) that the TMA store reads: every pair must land on its two elements' bytes
    from tvm.arith import Analyzer
    from tvm_backend_cuda.dispatch.tma_utils import mma_shared_layout

    shape16, shape32 = (2, 64, block_n), (2, 64, block_n // 2)
    l16 = mma_shared_layout("bfloat16", "128B", shape16)
    l32 = mma_shared_layout("uint32", "128B", shape32)
    simplify = Analyzer().simplify
    for w, r, c in [(w, r, c) for w in range(2) for r in range(0, 64, 5)
                    for c in range(0, block_n, 2)]:
        o16 = simplify(l16.apply([w, r, c], shape16)["m"]).value
        o32 = simplify(l32.apply([w, r, c // 2], shape32)["m"]).value
        assert o16 == 2 * o32, (w, r, c)


def test_torch_ops_trace_without_a_gpu() -> None:
    # the fake implementations: shapes and dtypes for torch.compile, no launch (no GPU needed)
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode

    assert str(torch.ops.tvm.gemm.default._schema) == (
        "tvm::gemm(Tensor a, Tensor b, Tensor? bias=None, str? activation=None, "
        "Tensor? residual=None, Tensor? scale_a=None, Tensor? scale_b=None, "
        "bool accurate=False) -> Tensor")
    rms = torch.ops.tvm.rms_norm.default._schema
    assert [a.name for a in rms.arguments] == ["x", "weight", "eps"]
    assert rms.arguments[2].default_value == pytest.approx(1e-6)
    with FakeTensorMode():
        a = torch.empty(2, 100, 64, dtype=torch.float16, device="cuda")
        b = torch.empty(48, 64, dtype=torch.float16, device="cuda")
        y = torch.ops.tvm.gemm(a, b, activation="silu")
        assert (tuple(y.shape), y.dtype, y.device.type) == ((2, 100, 48), torch.float16, "cuda")
        a8 = torch.empty(16, 64, dtype=torch.float8_e4m3fn, device="cuda")
        b8 = torch.empty(32, 64, dtype=torch.float8_e4m3fn, device="cuda")
        assert torch.ops.tvm.gemm(a8, b8).dtype == torch.bfloat16
        x = torch.empty(5, 64, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(64, dtype=torch.bfloat16, device="cuda")
        for out in (torch.ops.tvm.rms_norm(x, w), torch.ops.tvm.softmax(x),
                    torch.ops.tvm.layer_norm(x, w, w, 1e-5)):
            assert tuple(out.shape) == (5, 64) and out.dtype == torch.bfloat16


def test_the_factories_work_where_the_backend_was_not_loaded() -> None:
    """Importing the library loads its backend: in a process where ``import tvm`` did not (a
    source checkout has no entry point; here ``TVM_BACKENDS=-cuda``), a factory's TVMScript
    still finds the backend's intrinsics."""
    import os
    import subprocess
    import sys

    code = ("import tvm, tvm.backend as b\n"
            "assert not b.is_loaded('cuda')\n"
            "from tvm_backend_cuda import kernels\n"
            "kernels.gemm_func(256, 256, 256, 'bfloat16', arch='sm_90a')\n"
            "kernels.softmax_func(64, 128, 'float32')\n"
            "print('built')\n")
    env = dict(os.environ, TVM_BACKENDS="-cuda")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "built"
