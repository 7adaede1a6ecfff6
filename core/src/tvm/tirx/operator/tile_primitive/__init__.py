"""Tile primitives and their dispatcher. Per-backend variants are registered when a backend
loads (``tvm.backend.load(name)``)."""

from __future__ import annotations

from . import ops as ops
