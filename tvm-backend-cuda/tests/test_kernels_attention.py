"""``kernels.attention`` (FlashAttention forward, issue 23): on CI, every configuration compiles
with NVRTC for sm_90a and the factory and callable errors say what to change; on the H200
(marker ``gpu``), the output and log-sum-exp match ``scaled_dot_product_attention`` in float32
at shapes with masked tails, GQA/MQA, causal and not, d 64, 128 and 256, bfloat16 and float16, and
the ``torch.ops.tvm.attention`` op traces under ``torch.compile(fullgraph=True)``. Without a GPU
the ``gpu`` tests run the callables on CPU tensors under the CUDA emulator (the two torch.compile
tests at smaller shapes)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tvm_backend_cuda.plugin import register_backend

register_backend()  # a source checkout on PYTHONPATH has no entry point

import tvm  # noqa: E402
from tvm_backend_cuda import kernels  # noqa: E402
from tvm_backend_cuda.kernels._attention import block_n  # noqa: E402

SM90 = {"kind": "cuda", "arch": "sm_90a"}

# (batch, heads_q, heads_kv, seq_q, seq_k, d, dtype, causal)
CASES = [
    (1, 2, 2, 200, 300, 128, "bfloat16", False),  # tails of queries and keys
    (2, 4, 1, 256, 256, 64, "bfloat16", True),  # MQA, causal, whole blocks
    (1, 4, 2, 333, 333, 128, "float16", True),  # GQA, causal, tails
    (1, 1, 1, 1, 77, 64, "bfloat16", False),  # one query
    (1, 2, 1, 130, 520, 128, "bfloat16", True),  # causal with seq_k > seq_q (top-left)
    (1, 2, 2, 200, 250, 256, "bfloat16", True),  # d 256: blocks of 64 keys, tails
    (2, 2, 1, 128, 192, 256, "float16", False),  # d 256, MQA
]


def _id(c: tuple[Any, ...]) -> str:
    b, hq, hkv, sq, sk, d, dt, causal = c
    return f"b{b}h{hq}kv{hkv}q{sq}k{sk}d{d}-{dt}{'-causal' if causal else ''}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_attention_compiles_with_nvrtc(case: tuple[Any, ...]) -> None:
    b, hq, hkv, sq, sk, d, dt, causal = case
    func = kernels.attention_func(b, hq, hkv, sq, sk, d, dt, causal=causal, arch="sm_90a")
    assert [p.name for p in func.params] == ["Q", "K", "V", "O", "LSE"]
    ex = tvm.compile(func, target=SM90)
    assert ex.cubin[:4] == b"\x7fELF"
    src = ex.inspect_source()
    t = "bf16" if dt == "bfloat16" else "f16"
    # Q K^T from shared memory, P V with P from registers and V MN-major (transposed B)
    bn = block_n(d)
    assert f"wgmma.mma_async.sync.aligned.m64n{bn}k16.f32.{t}.{t}" in src
    assert f"wgmma.mma_async.sync.aligned.m64n64k16.f32.{t}.{t}" in src
    assert "__shfl_xor_sync" in src and "ex2.approx" in src
    assert "cp.async.bulk.tensor.2d" in src  # TMA loads of Q, K, V


def test_attention_factory_errors_say_what_to_change() -> None:
    f = kernels.attention_func
    with pytest.raises(ValueError, match="heads_q = 6 must be a multiple of heads_kv = 4"):
        f(1, 6, 4, 128, 128, 128, arch="sm_90a")
    with pytest.raises(ValueError, match=r"head_dim 96 is not one of \(64, 128, 256\); pad"):
        f(1, 1, 1, 128, 128, 96, arch="sm_90a")
    with pytest.raises(ValueError, match="dtype 'float32' is not one of"):
        f(1, 1, 1, 128, 128, 64, "float32", arch="sm_90a")
    with pytest.raises(ValueError, match="seq_k must be a positive int, got 0"):
        f(1, 1, 1, 128, 0, 64, arch="sm_90a")
    with pytest.raises(ValueError, match="scale must be a positive float"):
        f(1, 1, 1, 128, 128, 64, scale=-1.0, arch="sm_90a")
    with pytest.raises(ValueError, match=r"stages=9: between 1 and 3 stages"):
        f(1, 1, 1, 128, 128, 128, stages=9, arch="sm_90a")
    with pytest.raises(ValueError, match="arch 'sm_80'.*written for sm_90a"):
        f(1, 1, 1, 128, 128, 64, arch="sm_80")


def test_attention_callable_checks_its_arguments() -> None:
    torch = pytest.importorskip("torch")
    q = torch.zeros(1, 4, 16, 64, dtype=torch.bfloat16)
    kv = torch.zeros(1, 2, 16, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="q must be 4-d"):
        kernels.attention(q[0], kv, kv)
    with pytest.raises(ValueError, match="q, k and v must have one dtype"):
        kernels.attention(q, kv.half(), kv.half())
    with pytest.raises(ValueError, match="heads_q must be a multiple of heads_kv"):
        kernels.attention(q, torch.zeros(1, 3, 16, 64, dtype=torch.bfloat16),
                          torch.zeros(1, 3, 16, 64, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="head dimension 32 is not one of"):
        kernels.attention(q[..., :32], kv[..., :32], kv[..., :32])
    with pytest.raises(ValueError, match="q is on cpu; these kernels run on CUDA"):
        kernels.attention(q, kv, kv)


# -- on the GPU ------------------------------------------------------------------------------------


def _reference(torch: Any, q: Any, k: Any, v: Any, causal: bool) -> tuple[Any, Any]:
    """O and the log-sum-exp in float32 (K and V repeated for the query heads)."""
    group = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(group, dim=1)
    vf = v.float().repeat_interleave(group, dim=1)
    s = q.float() @ kf.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        sq, sk = s.shape[-2:]
        s = s.masked_fill(torch.ones(sq, sk, dtype=torch.bool, device=s.device).triu(1),
                          float("-inf"))
    return torch.softmax(s, -1) @ vf, torch.logsumexp(s, -1)


def _sync(torch: Any, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_attention_matches_torch(case: tuple[Any, ...], device: str) -> None:
    torch = pytest.importorskip("torch")
    b, hq, hkv, sq, sk, d, dt, causal = case
    g = torch.Generator(device=device).manual_seed(sq * 7 + sk)
    dtype = getattr(torch, dt)
    q = torch.randn(b, hq, sq, d, device=device, generator=g).to(dtype)
    k = torch.randn(b, hkv, sk, d, device=device, generator=g).to(dtype)
    v = torch.randn(b, hkv, sk, d, device=device, generator=g).to(dtype)
    out, lse = kernels.attention(q, k, v, causal=causal, return_lse=True)
    _sync(torch, device)
    ref, ref_lse = _reference(torch, q, k, v, causal)
    assert torch.isfinite(out.float()).all()
    err = float((out.float() - ref).norm() / ref.norm())
    assert err < 1e-2, err
    assert float((lse - ref_lse).abs().max()) < 1e-2
    # the layout torch's own attention takes, and its answer
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(hq // hkv, 1), v.repeat_interleave(hq // hkv, 1),
        is_causal=causal)
    assert float((out.float() - sdpa.float()).norm() / sdpa.float().norm()) < 1e-2


@pytest.mark.gpu
def test_attention_op_under_torch_compile(device: str) -> None:
    torch = pytest.importorskip("torch")
    b, h, s = (2, 8, 512) if device == "cuda" else (1, 2, 200)  # the emulator's smaller shape
    q = torch.randn(b, h, s, 128, device=device, dtype=torch.bfloat16)
    k = torch.randn(b, h, s, 128, device=device, dtype=torch.bfloat16)
    v = torch.randn(b, h, s, 128, device=device, dtype=torch.bfloat16)

    def block(q: Any, k: Any, v: Any) -> Any:
        return torch.ops.tvm.attention(q, k, v, True) * 2

    got = torch.compile(block, fullgraph=True)(q, k, v)
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) * 2
    assert float((got.float() - want.float()).norm() / want.float().norm()) < 1e-2


@pytest.mark.parametrize("causal", [False, True])
def test_reference_backward_matches_autograd(causal: bool) -> None:
    """The op's backward formula (torch arithmetic from O and the log-sum-exp, GQA heads
    summed) against autograd through the float64 reference, on the CPU."""
    torch = pytest.importorskip("torch")
    from tvm_backend_cuda.kernels._ops import attention_backward

    g = torch.Generator().manual_seed(3)
    q = torch.randn(2, 6, 37, 64, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 2, 45, 64, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 2, 45, 64, generator=g, dtype=torch.float64, requires_grad=True)
    s = q @ k.repeat_interleave(3, 1).transpose(-1, -2) * 0.3
    if causal:
        s = s.masked_fill(torch.ones(37, 45, dtype=torch.bool).triu(1), float("-inf"))
    out = torch.softmax(s, -1) @ v.repeat_interleave(3, 1)
    grad = torch.randn(out.shape, generator=g, dtype=torch.float64)
    out.backward(grad)
    lse = torch.logsumexp(s, -1).detach()
    dq, dk, dv = attention_backward(q.detach(), k.detach(), v.detach(), out.detach(), lse, grad,
                                    causal, 0.3)
    for got, want in ((dq, q.grad), (dk, k.grad), (dv, v.grad)):
        assert float((got - want).norm() / want.norm()) < 1e-5


@pytest.mark.gpu
def test_attention_op_trains_in_a_transformer_block(device: str) -> None:
    """``torch.ops.tvm.attention`` swapped into a small transformer block under
    ``torch.compile(fullgraph=True)``: the output and every gradient match the same block with
    ``scaled_dot_product_attention``."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional  # noqa: N806 - torch's own spelling
    torch.manual_seed(0)
    # the emulator's smaller block: half the heads, a shorter sequence
    dim, heads, kv_heads, seq = (512, 8, 2, 300) if device == "cuda" else (256, 4, 2, 150)
    hd = dim // heads
    wq = torch.randn(dim, dim, device=device) * dim ** -0.5
    wkv = torch.randn(2 * kv_heads * hd, dim, device=device) * dim ** -0.5
    wo = torch.randn(dim, dim, device=device) * dim ** -0.5
    params = [w.bfloat16().requires_grad_() for w in (wq, wkv, wo)]
    x = torch.randn(2, seq, dim, device=device, dtype=torch.bfloat16, requires_grad=True)

    def block(x: Any, wq: Any, wkv: Any, wo: Any, ours: bool) -> Any:
        b = x.shape[0]
        q = (x @ wq.T).view(b, seq, heads, hd).transpose(1, 2)
        k, v = (x @ wkv.T).view(b, seq, 2, kv_heads, hd).permute(2, 0, 3, 1, 4)
        if ours:
            a = torch.ops.tvm.attention(q.contiguous(), k.contiguous(), v.contiguous(), True)
        else:
            a = F.scaled_dot_product_attention(q, k.repeat_interleave(heads // kv_heads, 1),
                                               v.repeat_interleave(heads // kv_heads, 1),
                                               is_causal=True)
        return x + a.transpose(1, 2).reshape(b, seq, dim) @ wo.T

    results = []
    for ours in (True, False):
        fn = torch.compile(lambda *a, ours=ours: block(*a, ours), fullgraph=True)
        y = fn(x, *params)
        y.float().square().mean().backward()
        results.append([y.detach().float()] + [t.grad.float() for t in (x, *params)])
        for t in (x, *params):
            t.grad = None
    for got, want in zip(*results):
        assert float((got - want).norm() / want.norm()) < 2e-2


# -- the backward kernels ---------------------------------------------------------------------------

BWD_CASES = [c for c in CASES if c[5] in (64, 128)]


@pytest.mark.parametrize("case", BWD_CASES[:3], ids=_id)
def test_attention_backward_compiles_with_nvrtc(case: tuple[Any, ...]) -> None:
    b, hq, hkv, sq, sk, d, dt, causal = case
    for factory, outs in ((kernels.attention_bwd_dkdv_func, ["dK", "dV", "dQa"]),
                          (kernels.attention_bwd_dq_func, ["dQ"])):
        func = factory(b, hq, hkv, sq, sk, d, dt, causal=causal, arch="sm_90a")
        assert [p.name for p in func.params] == ["Q", "K", "V", "dO", "LSE2", "Dl", *outs]
        src = tvm.compile(func, target=SM90).inspect_source()
        assert "wgmma.mma_async" in src and "ex2.approx" in src


def test_attention_backward_factory_errors() -> None:
    with pytest.raises(ValueError, match=r"head_dim 256 is not one of \(64, 128\)"):
        kernels.attention_bwd_dq_func(1, 1, 1, 128, 128, 256, arch="sm_90a")
    with pytest.raises(ValueError, match="arch 'sm_80'"):
        kernels.attention_bwd_dkdv_func(1, 1, 1, 128, 128, 64, arch="sm_80")


@pytest.mark.gpu
@pytest.mark.parametrize("case", BWD_CASES, ids=_id)
def test_attention_backward_matches_autograd(case: tuple[Any, ...], device: str) -> None:
    """dq, dk, dv of the backward kernels against autograd through the float32 reference."""
    torch = pytest.importorskip("torch")
    b, hq, hkv, sq, sk, d, dt, causal = case
    g = torch.Generator(device=device).manual_seed(sq + 3 * sk)
    dtype = getattr(torch, dt)
    q, k, v = (torch.randn(b, h, s, d, device=device, generator=g).to(dtype)
               for h, s in ((hq, sq), (hkv, sk), (hkv, sk)))
    grad = torch.randn(b, hq, sq, d, device=device, generator=g).to(dtype)
    out, lse = kernels.attention(q, k, v, causal=causal, return_lse=True)
    qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
    ref, _ = _reference(torch, qf, kf, vf, causal)
    ref.backward(grad.float())
    for det in (False, True):  # dQ by atomic adds, then by the dQ kernel
        dq, dk, dv = kernels.attention_backward(q, k, v, out, lse, grad, causal=causal,
                                                deterministic=det)
        _sync(torch, device)
        errs = {name: (float((got.float() - want).norm() / want.norm()),
                       float((got.float() - want).abs().max()), float(want.abs().max()),
                       bool(torch.isfinite(got.float()).all()))
                for name, got, want in (("dq", dq, qf.grad), ("dk", dk, kf.grad),
                                        ("dv", dv, vf.grad))}
        # (relative error, largest difference, largest value, all finite) of each gradient
        assert all(e[0] < 2e-2 and e[3] for e in errs.values()), (det, errs)


@pytest.mark.gpu
def test_attention_backward_takes_transposed_views(device: str) -> None:
    """q, k, v, out and grad as ``[batch, seq, heads, d]`` tensors seen through
    ``.transpose(1, 2)`` (how an attention layer's projections give them): the gradients equal
    those of contiguous copies, in new contiguous tensors (``empty_like`` kept the views'
    strides, which ``.view(-1, d)`` of the kernels' rows refused)."""
    torch = pytest.importorskip("torch")
    b, hq, hkv, s, d = 1, 4, 2, 64, 64
    g = torch.Generator(device=device).manual_seed(11)

    def heads_inside(h: int) -> Any:
        x = torch.randn(b, s, h, d, device=device, generator=g).to(torch.bfloat16)
        return x.transpose(1, 2)

    q, k, v, grad = heads_inside(hq), heads_inside(hkv), heads_inside(hkv), heads_inside(hq)
    assert not (q.is_contiguous() or k.is_contiguous() or grad.is_contiguous())
    out, lse = kernels.attention(q, k, v, causal=True, return_lse=True)
    out_t = out.transpose(1, 2).contiguous().transpose(1, 2)  # O's values, a view's strides
    for det in (True, False):
        got = kernels.attention_backward(q, k, v, out_t, lse, grad, causal=True,
                                         deterministic=det)
        want = kernels.attention_backward(*(t.contiguous() for t in (q, k, v, out, lse, grad)),
                                          causal=True, deterministic=det)
        _sync(torch, device)
        for name, x, w, like in zip(("dq", "dk", "dv"), got, want, (q, k, v)):
            assert x.shape == like.shape and x.dtype == like.dtype and x.is_contiguous(), name
            if det or name != "dq":
                assert torch.equal(x, w), (det, name)
            else:  # atomic adds: the order (and so the last bits) may vary from run to run
                assert float((x.float() - w.float()).norm() / w.float().norm()) < 1e-2, name


# -- the backward under the CUDA emulator (CI: no GPU) ----------------------------------------------

EMU_BWD_CASES = [
    (1, 1, 1, 128, 300, 64, "bfloat16", False),  # d 64, a key tail past the first block
    (2, 8, 2, 150, 150, 64, "bfloat16", True),  # GQA, causal, batch 2, tails
    (1, 2, 1, 100, 77, 128, "float16", False),  # MQA, d 128, one partial key block
]


@pytest.mark.parametrize("case", EMU_BWD_CASES, ids=_id)
def test_attention_backward_under_the_emulator(case: tuple[Any, ...]) -> None:
    """Both backward kernels run on the CPU (TMA and wgmma emulated) and match a float64
    numpy backward; at d 64 this is the test that found dK starting from uninitialised
    registers."""
    import numpy as np

    ml_dtypes = pytest.importorskip("ml_dtypes")
    b, hq, hkv, sq, sk, d, dt, causal = case
    npt = ml_dtypes.bfloat16 if dt == "bfloat16" else np.float16
    rng = np.random.default_rng(sq + sk)
    q, k, v, g = (rng.standard_normal(s).astype(npt)
                  for s in ((b, hq, sq, d), (b, hkv, sk, d), (b, hkv, sk, d), (b, hq, sq, d)))
    group = hq // hkv
    qf, kf, vf, gf = (x.astype(np.float64) for x in (q, k, v, g))
    kr, vr = np.repeat(kf, group, 1), np.repeat(vf, group, 1)
    s = qf @ kr.transpose(0, 1, 3, 2) / math.sqrt(d)
    if causal:
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.exp(s - mx)
    total = p.sum(-1, keepdims=True)
    p /= total
    o = p @ vr
    lse = (np.log(total) + mx)[..., 0]
    ds = p * (gf @ vr.transpose(0, 1, 3, 2) - (gf * o).sum(-1, keepdims=True))
    want = {"dQ": ds @ kr / math.sqrt(d),
            "dK": (ds.transpose(0, 1, 3, 2) @ qf / math.sqrt(d)).reshape(
                b, hkv, group, sk, d).sum(2),
            "dV": (p.transpose(0, 1, 3, 2) @ gf).reshape(b, hkv, group, sk, d).sum(2)}
    o16 = o.astype(npt)
    dl = (g.astype(np.float32) * o16.astype(np.float32)).sum(-1).astype(np.float32)
    args = [x.reshape(-1, d) for x in (q, k, v, g)]
    for rows in (lse * math.log2(math.e), dl):  # LSE2 and Dl, each head's row padded
        padded = np.zeros((b * hq, kernels.padded_seq(sq)), np.float32)
        padded[:, :sq] = rows.reshape(b * hq, sq)
        args.append(padded)
    # the first kernel makes them from O, dO and the log-sum-exp (padding included)
    pre = [np.full_like(args[-2], np.nan), np.full_like(args[-1], np.nan)]
    tvm.compile(kernels.attention_bwd_pre_func(b * hq, sq, d, dt), target=SM90, emulate=True)(
        o16.reshape(-1, d), g.reshape(-1, d), lse.astype(np.float32).reshape(-1), *pre)
    for got_rows, want_rows in zip(pre, args[-2:]):
        np.testing.assert_allclose(got_rows, want_rows, rtol=1e-5, atol=1e-5)
    def emulate(factory: Any, **kw: Any) -> Any:
        return tvm.compile(factory(b, hq, hkv, sq, sk, d, dt, causal=causal, arch="sm_90a", **kw),
                           target=SM90, emulate=True)

    def check(got: dict[str, Any]) -> None:
        for name, w in want.items():
            err = (np.linalg.norm(got[name].astype(np.float64).reshape(w.shape) - w)
                   / np.linalg.norm(w))
            assert err < 1e-2, (name, err)

    def zeros(rows: int, t: Any = npt) -> Any:
        return np.zeros((rows, d), t)

    # one kernel, dQ added atomically into float32 (dQ = dQa * scale)
    got = {"dK": zeros(b * hkv * sk), "dV": zeros(b * hkv * sk)}
    dqa = np.zeros(b * hq * kernels.padded_seq(sq) * d, np.float32)
    emulate(kernels.attention_bwd_dkdv_func)(*args, got["dK"], got["dV"], dqa)
    shape, axes = kernels.dqa_layout(b * hq, sq, d)
    rows = dqa.reshape(shape).transpose(axes).reshape(b * hq, -1, d)[:, :sq]
    check({**got, "dQ": rows / math.sqrt(d)})
    # the last kernel reads the same tiles into rows of dQ
    got["dQ"] = np.full((b * hq * sq, d), np.nan, npt)
    tvm.compile(kernels.attention_bwd_post_func(b * hq, sq, d, dt), target=SM90,
                emulate=True)(dqa, got["dQ"])
    np.testing.assert_allclose(got["dQ"].astype(np.float32).reshape(b * hq, sq, d),
                               (rows / math.sqrt(d)).astype(npt).astype(np.float32),
                               rtol=8e-3)  # one 16-bit rounding apart at most
    # deterministic: dK/dV, then the dQ kernel
    got = {"dQ": zeros(b * hq * sq), "dK": zeros(b * hkv * sk), "dV": zeros(b * hkv * sk)}
    emulate(kernels.attention_bwd_dkdv_func, dq_atomic=False)(
        *args, got["dK"], got["dV"], np.zeros(1, np.float32))
    emulate(kernels.attention_bwd_dq_func)(*args, got["dQ"])
    check(got)
