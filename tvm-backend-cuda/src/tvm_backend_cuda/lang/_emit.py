"""Small IR builders shared by the ``lang`` helpers (private)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm.ir import (
    AllocBuffer,
    Buffer,
    BufferLoad,
    DeclBuffer,
    Evaluate,
    IfThenElse,
    IntImm,
    PrimExpr,
    Stmt,
    const,
    seq,
)

__all__ = ["as_expr", "evaluate", "seq_of", "static_int", "when"]


def evaluate(*calls: Any) -> Stmt:
    """``Evaluate`` of each call, as one statement."""
    return seq([c if isinstance(c, Stmt) else Evaluate(c) for c in calls])


def seq_of(stmts: Sequence[Stmt | None]) -> Stmt:
    return seq([s for s in stmts if s is not None])


def when(cond: Any, body: Stmt) -> Stmt:
    """``if cond: body`` (``body`` alone when ``cond`` is the constant true)."""
    if isinstance(cond, bool):
        return body if cond else seq([])
    if isinstance(cond, IntImm) and cond.dtype.is_bool:
        return body if cond.value else seq([])
    return IfThenElse(cond, body)


def as_expr(value: Any, dtype: str = "int32") -> PrimExpr:
    if isinstance(value, PrimExpr):
        return value
    return const(value, dtype)


def static_int(value: Any, what: str, *, minimum: int | None = None) -> int:
    """A Python int from an int or integer constant, else a ValueError naming ``what``."""
    v = value.value if isinstance(value, IntImm) else value
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"{what} must be a constant integer, got {value!r}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{what} must be at least {minimum}, got {v}")
    return v


def alloc(buffer: Buffer) -> Stmt:
    return AllocBuffer(buffer)


def decl(buffer: Buffer) -> Stmt:
    return DeclBuffer(buffer)


def element(buffer: Buffer, *index: Any) -> BufferLoad:
    return BufferLoad(buffer, [as_expr(i) for i in index])
