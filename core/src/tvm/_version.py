"""The version of tvm-core (the base layer: everything may read it)."""

from __future__ import annotations

__version__ = "0.1.0"
