"""The seed's module path ``tvm.tirx.buffer``: the names of :mod:`tvm.ir.buffer`."""

from __future__ import annotations

from ..ir.buffer import *  # noqa: F403 - this module is that one's seed path
from ..ir.buffer import __all__ as __all__
