"""``tvm.tirx.exec_scope``: execution scopes (``ExecScope``) and the kernel-form id statement
(``ScopeIdDef``), as Apache TVM names them.

Here an execution scope is its name: :class:`ExecScope` is a ``str`` (``ExecScope("cta") ==
"cta"``) with the seed's ``name`` and ``kind``, so it goes wherever a scope name goes
(``TilePrimitiveCall(..., scope=...)``, ``DispatchContext(target, scope)``).
"""

from __future__ import annotations

from ..ir.stmt import EXEC_SCOPES, ScopeIdDef

__all__ = ["EXEC_SCOPES", "ExecScope", "ScopeIdDef"]

# The seed's numbering (its ScopeKind enum): the scope's ``kind``.
_KIND = {"cluster": 2, "cta": 3, "warpgroup": 4, "warp": 5, "thread": 6}


class ExecScope(str):
    """One of ``cluster``, ``cta``, ``warpgroup``, ``warp``, ``thread``."""

    def __new__(cls, name: str) -> ExecScope:
        if name not in _KIND:
            raise ValueError(f"Unknown scope kind name {name!r}; expected one of "
                             f"{', '.join(EXEC_SCOPES)}")
        return super().__new__(cls, name)

    @property
    def name(self) -> str:
        return str(self)

    @property
    def kind(self) -> int:
        return _KIND[str(self)]

    def __repr__(self) -> str:
        return f"ExecScope({str(self)!r})"
