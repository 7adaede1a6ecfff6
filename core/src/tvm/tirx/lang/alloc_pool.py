"""Redirect (the seed's old path): the public names of ``tvm_backend_cuda.lang.alloc_pool``."""

from __future__ import annotations

from . import redirect

redirect(globals(), "alloc_pool")
