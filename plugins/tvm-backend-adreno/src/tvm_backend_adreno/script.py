"""Adreno's script namespaces: none (the seed's adreno package registers none). Here so that the
backend has the file layout every backend has."""

from __future__ import annotations

__all__ = ["NAMESPACES"]

NAMESPACES: dict[str, object] = {}
