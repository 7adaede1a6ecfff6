"""``tvm.tirx.cuda.operator.tile_primitive.copy`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s copy."""

from __future__ import annotations

from . import reexport

reexport(globals(), "copy")
