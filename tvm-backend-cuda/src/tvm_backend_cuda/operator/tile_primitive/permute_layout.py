"""``tvm.tirx.cuda.operator.tile_primitive.permute_layout`` (the seed's path): the public names of
``tvm_backend_cuda.dispatch``'s permute_layout."""

from __future__ import annotations

from . import reexport

reexport(globals(), "permute_layout")
