"""Script namespaces: ``T.<name>`` objects that backends (and core) register.

``register_script_namespace("cuda", CUDANamespace())`` makes ``T.cuda`` resolve, in every facade
module, including ones imported later (the facades look names up here on attribute access).
Registering walks the namespace and gives every op it reaches its dotted attribute path as
printer name: a callable carrying ``__tir_op_name__ = "tirx.cuda.atomic_add"`` found at
``T.cuda.atomic_add`` prints as ``T.cuda.atomic_add(...)``. Sub-namespaces may themselves be
callable (``T.ptx.mma(...)`` beside ``T.ptx.mma.sp(...)``): such an object carries
``__tir_op_name__`` too.
"""

from __future__ import annotations

from typing import Any

from .._registry import Registry, record_undo
from ..ir.op import OP_REGISTRY

__all__ = ["NAMESPACES", "get_namespace", "register_script_namespace"]

NAMESPACES: Registry[str, Any] = Registry("script namespace")


def register_script_namespace(name: str, namespace: Any, *, override: bool = False) -> Any:
    """Make ``T.<name>`` resolve to ``namespace``; returns it."""
    if not name.isidentifier() or name.startswith("_"):
        raise ValueError(f"script namespace name {name!r} must be a public Python identifier")
    NAMESPACES.register(name, namespace, override=override)
    _assign_printer_names(namespace, name, set())
    return namespace


def get_namespace(name: str) -> Any:
    return NAMESPACES.get(name)


def _assign_printer_names(obj: Any, path: str, seen: set[int]) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    _set_printer_name(obj, path)
    for attr in dir(obj):
        if attr.startswith("_"):
            continue
        try:
            child = getattr(obj, attr)
        except Exception:  # a namespace attribute that cannot be read is simply skipped
            continue
        if _is_namespace(child):
            _assign_printer_names(child, f"{path}.{attr}", seen)
        elif callable(child):
            _set_printer_name(child, f"{path}.{attr}")


def _is_namespace(obj: Any) -> bool:
    return type(obj).__name__.endswith("Namespace") or getattr(obj, "__tir_namespace__", False)


def _set_printer_name(obj: Any, path: str) -> None:
    op_name = getattr(obj, "__tir_op_name__", None)
    if not isinstance(op_name, str):
        return
    op = OP_REGISTRY.get(op_name)
    if op is None or op.printer_name == path:
        return
    old = op.printer_name
    op.printer_name = path
    record_undo(lambda: setattr(op, "printer_name", old))
