"""``torch.ops.tvm.gemm``, ``rms_norm``, ``softmax``, ``layer_norm``, ``attention``: the ready
callables as torch custom ops, with fake implementations, so ``torch.compile(fullgraph=True)``
traces them without a graph break and a CUDA graph captures their launches. (torch's custom ops
take no keyword-only tensors: the gemm op's epilogue arguments are positional-or-keyword.)

``attention`` has an autograd formula: its forward is ``kernels.attention``; its backward is
``kernels.attention_backward`` (the FlashAttention backward kernels) at d 64 and 128, and at
d 256 (:func:`attention_backward`) torch arithmetic that recomputes the probabilities from
the saved log-sum-exp, materialising the scores of a few heads at a time."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import _api
from ._attention_bwd import BWD_HEAD_DIMS

_REGISTERED: dict[str, Any] = {}

GEMM_SCHEMA = ("(Tensor a, Tensor b, Tensor? bias=None, str? activation=None, "
               "Tensor? residual=None, Tensor? scale_a=None, Tensor? scale_b=None, "
               "bool accurate=False) -> Tensor")


#: query heads whose scores the reference backward materialises at once (memory: this many
#: seq_q x seq_k float32 matrices, a few times over)
BACKWARD_CHUNK_HEADS = 4


def attention_backward(q: Any, k: Any, v: Any, out: Any, lse: Any, grad: Any, causal: bool,
                       scale: float | None) -> tuple[Any, Any, Any]:
    """dq, dk, dv of ``attention(q, k, v)`` from its output and log-sum-exp: ``P = exp(S *
    scale - lse)``, ``dV = P^T dO``, ``dS = P * (dO V^T - rowsum(dO * O))``, ``dQ = dS K *
    scale``, ``dK = dS^T Q * scale``, in float32 (float64 inputs: float64), key/value heads summed over their query
    heads (GQA)."""
    import torch

    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    group = hq // hkv
    sc = 1.0 / math.sqrt(d) if scale is None else float(scale)
    ct = torch.promote_types(q.dtype, torch.float32)  # float32 (float64 stays)
    dq = torch.empty(q.shape, dtype=ct, device=q.device)
    dk = torch.zeros(k.shape, dtype=ct, device=q.device)
    dv = torch.zeros(v.shape, dtype=ct, device=q.device)
    mask = (torch.ones(sq, sk, dtype=torch.bool, device=q.device).triu(1) if causal else None)
    delta = (grad.to(ct) * out.to(ct)).sum(-1, keepdim=True)
    for h0 in range(0, hq, BACKWARD_CHUNK_HEADS):
        hs = slice(h0, min(hq, h0 + BACKWARD_CHUNK_HEADS))
        kv_heads = torch.arange(hs.start, hs.stop, device=q.device) // group
        qf, gf = q[:, hs].to(ct), grad[:, hs].to(ct)
        kf, vf = k[:, kv_heads].to(ct), v[:, kv_heads].to(ct)
        s = qf @ kf.transpose(-1, -2) * sc
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        p = torch.exp(s - lse[:, hs].unsqueeze(-1))
        ds = p * (gf @ vf.transpose(-1, -2) - delta[:, hs])
        dq[:, hs] = ds @ kf * sc
        dk.index_add_(1, kv_heads, ds.transpose(-1, -2) @ qf * sc)
        dv.index_add_(1, kv_heads, p.transpose(-1, -2) @ gf)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


def register_torch_ops() -> dict[str, Any]:
    """Register the ops (once; idempotent) and return them by name."""
    if _REGISTERED:
        return _REGISTERED
    import torch

    lib = torch.library

    def gemm(a: Any, b: Any, bias: Any = None, activation: str | None = None,
             residual: Any = None, scale_a: Any = None, scale_b: Any = None,
             accurate: bool = False) -> Any:
        return _api.gemm(a, b, bias=bias, activation=activation, residual=residual,
                         scale_a=scale_a, scale_b=scale_b, accurate=accurate)

    def gemm_fake(a: Any, b: Any, bias: Any = None, activation: str | None = None,
                  residual: Any = None, scale_a: Any = None, scale_b: Any = None,
                  accurate: bool = False) -> Any:
        out = torch.float16 if a.dtype == torch.float16 else torch.bfloat16
        return a.new_empty((*a.shape[:-1], b.shape[0]), dtype=out)

    def rms_norm(x: Any, weight: Any, eps: float = 1e-6) -> Any:
        return _api.rms_norm(x, weight, eps)

    def layer_norm(x: Any, weight: Any, bias: Any, eps: float = 1e-5) -> Any:
        return _api.layer_norm(x, weight, bias, eps)

    def softmax(x: Any) -> Any:
        return _api.softmax(x)

    def attention(q: Any, k: Any, v: Any, causal: bool = False, scale: float | None = None
                  ) -> tuple[Any, Any]:
        return _api.attention(q, k, v, causal=causal, scale=scale, return_lse=True)

    def attention_fake(q: Any, k: Any, v: Any, causal: bool = False,
                       scale: float | None = None) -> tuple[Any, Any]:
        return (torch.empty_like(q, memory_format=torch.contiguous_format),
                q.new_empty(q.shape[:-1], dtype=torch.float32))

    def like_x(x: Any, *_: Any, **__: Any) -> Any:
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    specs: list[tuple[str, Callable[..., Any], str, Callable[..., Any]]] = [("gemm", gemm, GEMM_SCHEMA, gemm_fake),
             ("rms_norm", rms_norm, "(Tensor x, Tensor weight, float eps=1e-06) -> Tensor",
              like_x),
             ("layer_norm", layer_norm,
              "(Tensor x, Tensor weight, Tensor bias, float eps=1e-05) -> Tensor", like_x),
             ("softmax", softmax, "(Tensor x) -> Tensor", like_x),
             ("attention_fwd", attention,
              "(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None) "
              "-> (Tensor, Tensor)", attention_fake)]
    for name, fn, schema, fake in specs:
        op = lib.custom_op(f"tvm::{name}", fn, mutates_args=(), schema=schema)
        op.register_fake(fake)
        _REGISTERED[name] = op
    _register_attention(lib)
    return _REGISTERED


def _register_attention(lib: Any) -> None:
    """``tvm::attention`` (O only) on top of ``tvm::attention_fwd`` (O and the log-sum-exp),
    with its autograd formula, and ``tvm::attention_bwd``."""
    import torch

    fwd = _REGISTERED["attention_fwd"]

    def attention_bwd(q: Any, k: Any, v: Any, out: Any, lse: Any, grad: Any, causal: bool,
                      scale: float | None) -> tuple[Any, Any, Any]:
        if q.shape[-1] in BWD_HEAD_DIMS:
            return _api.attention_backward(q, k, v, out, lse, grad, causal=causal, scale=scale)
        return attention_backward(q, k, v, out, lse, grad.contiguous(), causal, scale)

    def attention_bwd_fake(q: Any, k: Any, v: Any, out: Any, lse: Any, grad: Any,
                           causal: bool, scale: float | None) -> tuple[Any, Any, Any]:
        # contiguous, as both implementations return them
        dq, dk, dv = (torch.empty_like(t, memory_format=torch.contiguous_format)
                      for t in (q, k, v))
        return dq, dk, dv

    bwd = lib.custom_op("tvm::attention_bwd", attention_bwd, mutates_args=(),
                        schema="(Tensor q, Tensor k, Tensor v, Tensor out, Tensor lse, "
                               "Tensor grad, bool causal, float? scale) "
                               "-> (Tensor, Tensor, Tensor)")
    bwd.register_fake(attention_bwd_fake)
    _REGISTERED["attention_bwd"] = bwd

    def attention(q: Any, k: Any, v: Any, causal: bool = False, scale: float | None = None
                  ) -> Any:
        return fwd(q, k, v, causal, scale)[0]

    # a composite op: torch.compile sees attention_fwd (and attention_bwd in the backward)
    op = lib.custom_op("tvm::attention", attention, mutates_args=(),
                       schema="(Tensor q, Tensor k, Tensor v, bool causal=False, "
                              "float? scale=None) -> Tensor")
    op.register_fake(lambda q, k, v, causal=False, scale=None:
                     torch.empty_like(q, memory_format=torch.contiguous_format))

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        q, k, v, causal, scale = inputs
        ctx.causal, ctx.scale = causal, scale
        ctx.save_for_backward(q, k, v)

    def backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
        q, k, v = ctx.saved_tensors
        out, lse = fwd(q, k, v, ctx.causal, ctx.scale)
        dq, dk, dv = bwd(q, k, v, out, lse, grad, ctx.causal, ctx.scale)
        return dq, dk, dv, None, None

    op.register_autograd(backward, setup_context=setup_context)
    _REGISTERED["attention"] = op
