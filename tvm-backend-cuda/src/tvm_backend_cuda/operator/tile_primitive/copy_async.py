"""``tvm.tirx.cuda.operator.tile_primitive.copy_async`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s copy_async."""

from __future__ import annotations

from . import reexport

reexport(globals(), "copy_async")
