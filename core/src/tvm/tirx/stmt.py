"""The seed's module path ``tvm.tirx.stmt``: the names of :mod:`tvm.ir.stmt`, and
``BufferRegion`` (in :mod:`tvm.ir.buffer` here)."""

from __future__ import annotations

from ..ir.buffer import BufferRegion
from ..ir.stmt import *  # noqa: F403 - this module is that one's seed path
from ..ir.stmt import __all__ as _STMT_NAMES

__all__ = [*_STMT_NAMES, "BufferRegion"]
