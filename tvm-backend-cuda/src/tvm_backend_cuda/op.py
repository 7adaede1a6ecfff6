"""The seed's builders (``tvm.backend.cuda.op``, alias ``tvm.tirx.cuda.op``): ``ptx_mma``,
``cuda_thread_fence``, ``nvshmem_fence``, ``mma_store``, ``timer_init_cuda``, ...

Each builder is derived from its intrinsic's declaration in ``intrinsics/<family>.py`` and
returns a :class:`tvm.ir.Call` whose operands are exactly what the printer writes, so
``ptx_map_shared_rank(r, 2)`` prints as ``T.ptx.mapa(r, 2, "", "u64", "uint64")``. The ops
exist once :func:`register_ops` ran (the plugin's ``tvm_register_ops`` hook does it).
"""

from __future__ import annotations

from .intrinsics import TABLE, builders, register_ops

__all__ = ["register_ops", *sorted(builders())]


# the builders are this module's attributes too
__getattr__, __dir__ = TABLE.module_hooks(globals())
