"""The ``I`` facade: ``from tvm.script import ir as I``.

``@I.ir_module`` on a class whose methods are ``@T.prim_func`` functions gives an
:class:`~tvm.ir.IRModule` keyed by method name; ``I.module_attrs({...})`` in the class body
sets module attributes.
"""

from __future__ import annotations

import sys
from typing import Any

from ..ir.function import IRModule, PrimFunc

__all__ = ["ir_module", "module_attrs"]


_ATTRS_KEY = "__tvm_module_attrs__"


def module_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """Module attributes, written as a statement of an ``@I.ir_module`` class body."""
    # A class body's frame locals are its namespace: leave the attributes there for ir_module.
    sys._getframe(1).f_locals[_ATTRS_KEY] = dict(attrs)
    return dict(attrs)


def ir_module(cls: type) -> IRModule:
    """Decorator: an IRModule of the ``@T.prim_func`` methods of ``cls``."""
    funcs: dict[str, PrimFunc] = {}
    attrs: dict[str, Any] = {}
    for name, value in vars(cls).items():
        if isinstance(value, PrimFunc):
            funcs[name] = value
        elif name == _ATTRS_KEY:
            attrs.update(value)
    return IRModule(funcs, attrs)
