"""``tvm.tirx.cuda.operator.tile_primitive.gemm_async`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s gemm_wgmma and gemm_tcgen05."""

from __future__ import annotations

from . import reexport

reexport(globals(), "gemm_async")
