"""``tvm.tirx.cuda.operator.tile_primitive.gemm`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s gemm_mma."""

from __future__ import annotations

from . import reexport

reexport(globals(), "gemm")
