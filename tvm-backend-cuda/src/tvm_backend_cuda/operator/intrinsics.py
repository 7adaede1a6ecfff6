"""``tvm.tirx.cuda.operator.intrinsics`` (the seed's path): the names of
:mod:`tvm_backend_cuda.intrinsics`, where the CUDA intrinsics and their codegen rules live."""

from __future__ import annotations

from .. import intrinsics as _intrinsics
from ..intrinsics import *  # noqa: F403 - this module is an alias

__all__ = list(_intrinsics.__all__)
