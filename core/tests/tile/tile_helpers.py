"""Builders shared by the tile-primitive tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm.ir import (
    Buffer,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    PrimFunc,
    ScopeIdDef,
    SeqStmt,
    Stmt,
    Var,
    post_order_visit,
    seq,
)
from tvm.tirx.operator.tile_primitive.ops import make_call


def func_of(buffers: Sequence[Buffer], *body: Stmt, name: str = "main") -> PrimFunc:
    return PrimFunc([b.data for b in buffers], seq(list(body)), {b.data: b for b in buffers},
                    name=name)


def kernel_of(buffers: Sequence[Buffer], threads: int, *body: Stmt) -> tuple[PrimFunc, Var]:
    """A kernel-form function with one CTA of ``threads`` threads."""
    from tvm.tirx import op as T

    bx, tx = Var("bx"), Var("tx")
    stmts = [Evaluate(T.device_entry()), ScopeIdDef("cta_id", [bx], [1]),
             ScopeIdDef("thread_id", [tx], [threads]), *body]
    return func_of(buffers, *stmts), tx


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    return make_call(name, *args, **kwargs)


def nodes_of(node: Any, cls: type) -> list[Any]:
    found: list[Any] = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


__all__ = ["For", "IfThenElse", "LetStmt", "SeqStmt", "call", "func_of", "kernel_of", "nodes_of"]
