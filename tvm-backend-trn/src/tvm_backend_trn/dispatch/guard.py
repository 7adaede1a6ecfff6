"""Hide core's generic ``fallback`` variants on trn: they lower to scalar loops, which the NKI
instruction form cannot run, so a call no trn variant takes fails with the table of reasons."""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import TILE_OPS, fail, register_dispatch

__all__ = ["register"]


def _no_fallback(op_call: Any, sctx: Any) -> Any:
    fail("the generic fallback lowers to scalar loops, which Trainium engines cannot run; "
         "see the other variants' reasons")


def register() -> None:
    for name in TILE_OPS:
        register_dispatch(name, "trn", variant="fallback", priority=-100)(_no_fallback)
