"""ROCm's device intrinsics: none yet.

The seed's rocm package registers no ops (its ``register_backend`` returns None), and the
barriers the dispatch variants need are HIP builtins called through ``T.call_extern``
(``__syncthreads``, ``__builtin_amdgcn_wave_barrier``). This module is here so that the backend
has the file layout every backend has.
"""

from __future__ import annotations

__all__ = ["OPS", "register_ops"]

OPS: tuple[str, ...] = ()


def register_ops() -> None:
    """Nothing to register (the ``tvm_register_ops`` hook)."""
