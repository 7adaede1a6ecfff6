"""The argument signatures of the functions a C-style code generator exported.

A backend that prints C (the host target, the example template, Hexagon) keeps, in its
artifact's metadata, each exported function's :class:`~tvm.runtime.arguments.Signature`, derived
from the IR function of the same symbol; :func:`exported_signatures` is that lookup, once.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..codegen.c_base import FunctionInfo
from ..codegen.signature import signature_from_func
from ..ir.function import IRModule
from ..runtime.arguments import Signature

__all__ = ["exported_signatures"]


def exported_signatures(mod: IRModule, functions: Sequence[FunctionInfo], device: str
                        ) -> dict[str, Signature]:
    """The argument signature of every exported function (by its C name, in the order of
    ``functions``) whose IR function is in ``mod``, for arrays on ``device``."""
    by_symbol = {str(f.attrs.get("global_symbol", name)): f for name, f in mod.functions.items()}
    return {info.name: signature_from_func(by_symbol[info.name], device, name=info.name)
            for info in functions if info.name in by_symbol}
