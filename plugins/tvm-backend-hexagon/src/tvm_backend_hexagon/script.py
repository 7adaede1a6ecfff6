"""Hexagon's script namespaces: none (the seed has no ``T.hexagon``). Here so that the backend
has the layout every backend has."""

from __future__ import annotations

__all__ = ["NAMESPACES"]

NAMESPACES: dict[str, object] = {}
