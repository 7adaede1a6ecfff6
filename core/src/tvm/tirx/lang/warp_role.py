"""Redirect (the seed's old path): the public names of ``tvm_backend_cuda.lang.warp_role``."""

from __future__ import annotations

from . import redirect

redirect(globals(), "warp_role")
