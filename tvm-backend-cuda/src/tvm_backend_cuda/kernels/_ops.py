"""``torch.ops.tvm.gemm``, ``rms_norm``, ``softmax``, ``layer_norm``: the ready callables as
torch custom ops, with fake implementations, so ``torch.compile(fullgraph=True)`` traces them
without a graph break and a CUDA graph captures their launches. (torch's custom ops take no
keyword-only tensors: the gemm op's epilogue arguments are positional-or-keyword.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _api

_REGISTERED: dict[str, Any] = {}

GEMM_SCHEMA = ("(Tensor a, Tensor b, Tensor? bias=None, str? activation=None, "
               "Tensor? residual=None, Tensor? scale_a=None, Tensor? scale_b=None, "
               "bool accurate=False) -> Tensor")


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

    def like_x(x: Any, *_: Any, **__: Any) -> Any:
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    specs: list[tuple[str, Callable[..., Any], str, Callable[..., Any]]] = [("gemm", gemm, GEMM_SCHEMA, gemm_fake),
             ("rms_norm", rms_norm, "(Tensor x, Tensor weight, float eps=1e-06) -> Tensor",
              like_x),
             ("layer_norm", layer_norm,
              "(Tensor x, Tensor weight, Tensor bias, float eps=1e-05) -> Tensor", like_x),
             ("softmax", softmax, "(Tensor x) -> Tensor", like_x)]
    for name, fn, schema, fake in specs:
        op = lib.custom_op(f"tvm::{name}", fn, mutates_args=(), schema=schema)
        op.register_fake(fake)
        _REGISTERED[name] = op
    return _REGISTERED
