"""Passes and how they run: :class:`Pass`, :class:`PassContext` (options, instruments,
``TVM_DUMP_DIR`` dumps), :class:`Sequential`, :class:`Pipeline` (what ``tvm.compile`` runs: named main, host and
device stages), and the :func:`module_pass` / :func:`prim_func_pass` constructors.

>>> with tvm.transform.PassContext(opt_level=3, instruments=[MyInstrument()]):
...     mod = tvm.transform.Sequential([StmtSimplify(), FlattenBuffer()])(mod)
"""

from __future__ import annotations

from ._context import PassContext, PassInfo, PassInstrument, module_text
from ._pass import (
    ModulePass,
    Pass,
    PrimFuncPass,
    Sequential,
    module_pass,
    prim_func_pass,
)
from ._pipeline import Pipeline

__all__ = [
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "Pipeline",
    "PrimFuncPass",
    "Sequential",
    "module_pass",
    "module_text",
    "prim_func_pass",
]
