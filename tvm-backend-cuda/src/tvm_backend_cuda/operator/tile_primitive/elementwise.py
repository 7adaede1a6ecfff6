"""``tvm.tirx.cuda.operator.tile_primitive.elementwise`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s elementwise."""

from __future__ import annotations

from . import reexport

reexport(globals(), "elementwise")
