"""Adreno's ops: none (the seed's adreno package registers none). Here so that the backend has
the file layout every backend has."""

from __future__ import annotations

__all__ = ["OPS"]

OPS: tuple[str, ...] = ()
