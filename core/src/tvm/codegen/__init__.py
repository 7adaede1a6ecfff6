"""Code generation shared by backends: a C-style source printer for lowered IR.

:class:`CodegenCStyle` renders the IR described in ``docs/lowering.md`` (section 5) as C-family
source. The host backend (``tvm.host.codegen``) prints plain C with it; GPU backends subclass it
and change data (keywords, qualifiers, thread-index spellings, type names, op templates), not
the printing logic.
"""

from __future__ import annotations

from .c_style import CodegenCStyle, FunctionInfo, OpTemplate, ParamInfo

__all__ = ["CodegenCStyle", "FunctionInfo", "OpTemplate", "ParamInfo"]
