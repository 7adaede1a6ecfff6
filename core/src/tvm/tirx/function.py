"""The seed's module path ``tvm.tirx.function``: the names of :mod:`tvm.ir.function`."""

from __future__ import annotations

from ..ir.function import *  # noqa: F403 - this module is that one's seed path
from ..ir.function import __all__ as __all__
