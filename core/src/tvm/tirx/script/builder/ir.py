"""Seed-compatible path: ``from tvm.tirx.script.builder.ir import register_script_namespace``.

Namespaces registered here resolve as module attributes too (``ir.cuda``), looked up live.
"""

from __future__ import annotations

from typing import Any

from ....script.namespace import NAMESPACES, register_script_namespace

__all__ = ["register_script_namespace"]


def __getattr__(name: str) -> Any:
    ns = NAMESPACES.get(name)
    if ns is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return ns
