"""Kernels that ship with the CUDA backend: ``tvm_backend_cuda.kernels`` (also
``tvm.backend.cuda.kernels``).

Each kernel is a *factory* returning a PrimFunc for a shape and dtype (compile it yourself with
``tvm.compile``), and a *ready callable* on torch CUDA tensors (or, with ``TVM_CUDA_EMULATE=1``,
CPU tensors, run under the CUDA emulator) that compiles once per (shape,
dtype, arch, options), keeps the executable in memory (the compile cache keeps the cubin across
processes), uses the tuned configuration (``tvm.autotune``; ``TVM_AUTOTUNE=0``: the defaults)
and launches on torch's current stream:

==========================================================  ========================================
callable                                                     factory
==========================================================  ========================================
``gemm(a, b, out=None, *, bias, activation, residual,``      ``gemm_func(m, n, k, dtype, out_dtype,
``scale_a, scale_b, accurate)``                              *, arch, bias, activation, ...)``
``softmax(x, out=None)``                                     ``softmax_func(m, n, dtype)``
``rms_norm(x, weight, eps=1e-6, out=None)``                  ``rms_norm_func(m, n, dtype, eps)``
``layer_norm(x, weight, bias, eps=1e-5, out=None)``          ``layer_norm_func(m, n, dtype, eps)``
``add(a, b, out=None)``                                      ``add_func(n, dtype)``
``attention(q, k, v, *, causal, scale, return_lse)``         ``attention_func(batch, heads_q,
                                                             heads_kv, seq_q, seq_k, head_dim,
                                                             dtype, *, causal, scale, arch)``
``attention_backward(q, k, v, out, lse, grad, *, causal,``   ``attention_bwd_dkdv_func(...)``,
``scale, deterministic=False)``                              ``attention_bwd_dq_func(...)``
==========================================================  ========================================

With torch installed, importing this package also registers ``torch.ops.tvm.gemm``,
``rms_norm``, ``softmax``, ``layer_norm`` and ``attention`` (with its backward for autograd;
:func:`register_torch_ops`), custom ops that ``torch.compile(fullgraph=True)`` traces and CUDA
graphs capture.
"""

from __future__ import annotations

import importlib.util

from .. import register_backend as _register_backend
from ._add import add_func
from ._api import (
    add,
    attention,
    attention_backward,
    balanced_grid,
    gemm,
    gemm_candidates,
    layer_norm,
    rms_norm,
    softmax,
)
from ._attention import attention_func
from ._attention_bwd import (
    attention_bwd_dkdv_func,
    attention_bwd_dq_func,
    padded_seq,
)
from ._attention_bwd_rows import attention_bwd_post_func, attention_bwd_pre_func, dqa_layout
from ._gemm import ACTIVATIONS, Epilogue, gemm_func
from ._layer_norm import layer_norm_func
from ._ops import register_torch_ops
from ._rms_norm import rms_norm_func
from ._softmax import softmax_func

__all__ = ["ACTIVATIONS", "Epilogue", "add", "add_func", "attention", "attention_backward",
           "balanced_grid",
           "attention_bwd_dkdv_func", "attention_bwd_dq_func", "attention_bwd_post_func", "attention_bwd_pre_func", "attention_func", "dqa_layout", "gemm",
           "gemm_candidates", "gemm_func", "layer_norm", "layer_norm_func", "padded_seq",
           "register_torch_ops", "rms_norm", "rms_norm_func", "softmax", "softmax_func"]

# the factories parse TVMScript that uses this backend's intrinsics: loaded where it is not yet
# (a source checkout has no entry point; TVM_BACKENDS may leave it out); idempotent
_register_backend()
if importlib.util.find_spec("torch") is not None:
    register_torch_ops()
