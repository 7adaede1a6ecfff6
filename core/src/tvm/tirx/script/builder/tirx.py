"""Seed-compatible location of the tile primitives' builders (``tvm.tirx.script.builder.tirx``):
``from tvm.tirx.script.builder.tirx import gemm_async`` is ``Tx.gemm_async``, one function per
registered tile primitive (``tvm.script.tirx.tile``)."""

from __future__ import annotations

from typing import Any

from ....script.tirx import tile as _tile


def __getattr__(name: str) -> Any:
    try:
        return getattr(_tile, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it holds the tile "
                             "primitives (Tx.<op>, from tvm.script.tirx import tile as Tx)") from None
