"""Tile-primitive dispatch of the CUDA backend: scope barriers and fast variants.

Imported by the ``tvm_register_dispatch`` hook (:func:`register_all`), inside the backend's
registration transaction, so everything registered here is owned by ``tvm-backend-cuda``.

- :mod:`.barriers`: the barrier of every multi-thread scope (warp, warpgroup, cta, cluster), so
  core's generic fallback works at those scopes on CUDA;
- :mod:`.reduction`: ``sum``/``max``/``min`` through warp shuffles (variant ``warp_shuffle``);
- :mod:`.gemm_mma`: ``gemm`` on the tensor cores, ``mma.sync.m16n8k16/k8`` on register fragments or after ``ldmatrix``
  (variant ``mma.m16n8k*``, sm_80+);
- :mod:`.copy`: ``copy``/``cast`` variants ``reg``, ``gmem_smem``, ``ldstmatrix``;
- :mod:`.copy_async`: ``tma``, ``ldgsts``, ``dsmem``, ``smem->tmem``, ``tmem<->local``;
- :mod:`.elementwise`: unary/binary/``fma``/fill variants ``reg`` and ``smem``;
- :mod:`.reduction` also: ``local`` (registers spread over threads) and ``shared``;
- :mod:`.permute_layout`: ``warp_xor_swizzle``;
- :mod:`.gemm_wgmma`: ``gemm_async`` on Hopper's ``wgmma.mma_async`` (variant ``wgmma``,
  sm_90a), operand descriptors from :mod:`.mma_desc`;
- :mod:`.gemm_tcgen05`: ``gemm_async`` on Blackwell's ``tcgen05.mma`` (variant ``tcgen05``,
  sm_100a), accumulators in tensor memory.

Helpers: :mod:`.tma_utils` (swizzled shared layouts, tensor maps), :mod:`._tiles` (where a
tile's elements live), :mod:`.common`.
"""

from __future__ import annotations

__all__ = ["register_all"]


def register_all() -> None:
    """Register the barriers and the variants (a re-load after a rollback registers again)."""
    # The variant modules load when the hook runs, not when the plugin is imported (a backend
    # that is incompatible or fails its checks never pays for them).
    from . import (  # noqa: PLC0415 - import-time budget (variants)
        barriers,
        copy,
        copy_async,
        elementwise,
        gemm_mma,
        gemm_tcgen05,
        gemm_wgmma,
        permute_layout,
        reduction,
        tensor_map_encode,
    )

    barriers.register()
    reduction.register()
    gemm_mma.register()
    copy.register()
    copy_async.register()
    tensor_map_encode.register()
    elementwise.register()
    permute_layout.register()
    gemm_wgmma.register()
    gemm_tcgen05.register()
