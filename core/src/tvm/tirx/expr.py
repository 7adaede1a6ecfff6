"""The seed's module path ``tvm.tirx.expr``: the names of :mod:`tvm.ir.expr`."""

from __future__ import annotations

from ..ir.expr import *  # noqa: F403 - this module is that one's seed path
from ..ir.expr import __all__ as __all__
