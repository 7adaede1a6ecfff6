"""Redirect (the seed's old path): the public names of ``tvm_backend_cuda.lang.smem_desc``."""

from __future__ import annotations

from . import redirect

redirect(globals(), "smem_desc")
