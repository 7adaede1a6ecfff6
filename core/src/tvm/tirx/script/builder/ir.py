"""Seed-compatible path: ``from tvm.tirx.script.builder.ir import register_script_namespace``.

Namespaces registered here resolve as module attributes too (``ir.cuda``), looked up live.
"""

from __future__ import annotations

from typing import Any

from ....script.namespace import NAMESPACES, register_script_namespace

__all__ = ["register_script_namespace"]


def namespace_attribute(module: str, name: str) -> Any:
    """The script namespace ``name`` (``cuda``, ``ptx``, ...), as an attribute of ``module``
    (the seed's builder and parser modules all show them)."""
    ns = NAMESPACES.get(name)
    if ns is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return ns


def __getattr__(name: str) -> Any:
    return namespace_attribute(__name__, name)
