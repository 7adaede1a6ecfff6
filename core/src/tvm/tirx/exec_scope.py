"""``tvm.tirx.exec_scope``: execution scopes (``ExecScope``) and the kernel-form id statement
(``ScopeIdDef``), as Apache TVM names them.

Here an execution scope is its name: :class:`ExecScope` is a ``str`` (``ExecScope("cta") ==
"cta"``) with the seed's ``name`` and ``kind``, so it goes wherever a scope name goes
(``TilePrimitiveCall(..., scope=...)``, ``DispatchContext(target, scope)``).
"""

from __future__ import annotations

from ..ir.stmt import EXEC_SCOPES, ExecScope, ScopeIdDef

__all__ = ["EXEC_SCOPES", "ExecScope", "ScopeIdDef"]
