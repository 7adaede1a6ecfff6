"""``tvm.tirx.cuda.operator.tile_primitive.tma_utils`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s tma_utils."""

from __future__ import annotations

from . import reexport

reexport(globals(), "tma_utils")
