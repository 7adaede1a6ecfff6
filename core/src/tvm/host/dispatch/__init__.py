"""Tile-primitive dispatch variants of the host target ``c`` (and of ``llvm``, which the host
backend builds the same way).

Registered by the host plugin's ``tvm_register_dispatch`` hook (:func:`register_all`), through
the same ``register_dispatch`` API and registration transaction as any backend's variants:

- :mod:`.elementwise`: ``vector`` for the element-wise families (copy, cast, fill, unary,
  binary, fma, select, binary_chain): loops whose innermost axis is the destination's contiguous
  one (vectorised by the C compiler), the outer axis run by OpenMP threads for large ops, and
  marked so that ``FuseRowLoops`` can fuse neighbouring ops;
- :mod:`.reduction`: ``vector`` for ``sum``/``max``/``min`` over the innermost contiguous axis
  (several accumulator lanes per row, combined at the end), rows run by OpenMP threads;
- :mod:`.gemm`: ``blocked`` for ``gemm``/``gemm_async``: a call of the host library's
  cache-blocked, packed, register-tiled GEMM (``kernels/gemm.c``), f32 and f64, float16 and
  bfloat16 inputs computed in float32.

Every variant declines (with its reason in the dispatch table) where core's ``fallback``
must run instead.
"""

from __future__ import annotations

from . import elementwise, gemm, reduction

__all__ = ["register_all"]


def register_all() -> None:
    """Register the host variants (a re-load after a rollback registers them again)."""
    elementwise.register()
    reduction.register()
    gemm.register()
