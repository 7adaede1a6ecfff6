"""``tvm.tirx.cuda.operator.tile_primitive.common`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s common."""

from __future__ import annotations

from . import reexport

reexport(globals(), "common")
