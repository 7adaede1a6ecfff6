"""``tvm.ir.transform`` (Apache TVM's path): the pass infrastructure of :mod:`tvm.transform`."""

from __future__ import annotations

from ..transform import *  # noqa: F403 - this module is an alias
from ..transform import __all__ as _all

__all__ = list(_all)
