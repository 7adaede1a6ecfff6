"""``tvm.tirx.cuda.operator.tile_primitive.reduction`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s reduction."""

from __future__ import annotations

from . import reexport

reexport(globals(), "reduction")
