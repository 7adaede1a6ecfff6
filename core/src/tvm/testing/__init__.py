"""Testing helpers: the pytest plugin (markers ``gpu`` and ``macos``, fixtures) and shared checks
that backends run against themselves."""

from __future__ import annotations

from .utils import assert_allclose, random_array

__all__ = ["assert_allclose", "random_array"]
