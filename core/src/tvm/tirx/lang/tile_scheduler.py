"""Redirect (the seed's old path): the public names of ``tvm_backend_cuda.lang.tile_scheduler``."""

from __future__ import annotations

from . import redirect

redirect(globals(), "tile_scheduler")
