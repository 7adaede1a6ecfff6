"""The ``I`` facade: ``from tvm.script import ir as I``.

``@I.ir_module`` on a class whose methods are ``@T.prim_func`` functions gives an
:class:`~tvm.ir.IRModule` keyed by method name; ``I.module_attrs({...})`` in the class body
sets module attributes.
"""

from __future__ import annotations

import sys
from typing import Any

from ..ir.function import IRModule, PrimFunc
from .jit import constexpr

__all__ = ["constexpr", "ir_module", "module_attrs"]
__tvm_script_namespace__ = True  # I.constexpr is @T.jit's marker (jit.NAMESPACE_MARK)


_ATTRS_KEY = "__tvm_module_attrs__"


def module_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """Module attributes, written as a statement of an ``@I.ir_module`` class body."""
    # A class body's frame locals are its namespace: leave the attributes there for ir_module.
    sys._getframe(1).f_locals[_ATTRS_KEY] = dict(attrs)
    return dict(attrs)


def ir_module(cls: type | None = None, *, s_tir: bool = False,
              check_well_formed: bool = True) -> Any:
    """Decorator: an IRModule of the ``@T.prim_func`` methods of ``cls``.

    ``@I.ir_module(s_tir=True)`` is the seed's spelling for a module of its schedulable-TIR
    dialect; there is one dialect here, so the flag is checked to be a bool and the class is
    read as usual (as is ``check_well_formed``)."""
    _check_flags(s_tir=s_tir, check_well_formed=check_well_formed)
    if cls is None:
        return _module_of
    return _module_of(cls)


def _check_flags(**flags: Any) -> None:
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{name}= takes True or False, got {value!r}")


def _module_of(cls: type) -> IRModule:
    funcs: dict[str, PrimFunc] = {}
    attrs: dict[str, Any] = {}
    for name, value in vars(cls).items():
        if isinstance(value, PrimFunc):
            funcs[name] = value
        elif name == _ATTRS_KEY:
            attrs.update(value)
    return IRModule(funcs, attrs)
