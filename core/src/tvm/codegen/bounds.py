"""Run-time bounds checking, opt-in: whether it is on, and which accesses a statement makes.

It is on when any of these asks for it (the first that says anything decides):

* the build option ``bounds_check=True`` (``tvm.compile(f, target, bounds_check=True)``: a field
  of every backend's options; core's build runs codegen inside :func:`bounds_check_scope`);
* the module attribute ``tir.bounds_check`` (``tvm.compile`` sets it from the PassContext);
* the PassContext config ``"tir.bounds_check"``
  (``tvm.compile(f, pass_config={"tir.bounds_check": True})``);
* the environment variable ``TVM_BOUNDS_CHECK`` (``1``/``true``/``yes``/``on``).

Code generators that print through :class:`~tvm.codegen.c_style.CodegenCStyle` (host C, CUDA,
Metal) then check every buffer access and every integer division before the statement that
makes it, and convert floats to integers the defined way (saturating); the Trainium simulator
checks every access pattern against its tensor's dimensions.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.visitor import substitute
from ..transform import PassContext

__all__ = ["BOUNDS_CHECK_ATTR", "BOUNDS_MESSAGE", "Access", "Division", "bounds_check_enabled",
           "bounds_check_scope", "build_bounds_check", "statement_accesses", "statement_checks"]

#: the module / PassContext key that turns checking on
BOUNDS_CHECK_ATTR = "tir.bounds_check"
#: how every failed check's message starts (runtimes raise BoundsCheckError for it)
BOUNDS_MESSAGE = "bounds check failed:"
_ENV = "TVM_BOUNDS_CHECK"
_TRUE = ("1", "true", "yes", "on")

#: the ``bounds_check`` option of the build in progress (core's build, in
#: :func:`tvm.backend.contract.build`, runs codegen inside :func:`bounds_check_scope`); None: no
#: build, or no opinion
_BOUNDS_CHECK: contextvars.ContextVar[bool | None] = contextvars.ContextVar("tvm_bounds_check",
                                                                            default=None)


@contextlib.contextmanager
def bounds_check_scope(value: bool | None) -> Iterator[None]:
    """The build option for the code generated inside the block (``None``: no opinion)."""
    token = _BOUNDS_CHECK.set(value)
    try:
        yield
    finally:
        _BOUNDS_CHECK.reset(token)


def build_bounds_check() -> bool | None:
    """The ``bounds_check`` option of the build in progress (set by :func:`bounds_check_scope`)."""
    return _BOUNDS_CHECK.get()


def bounds_check_enabled(mod: Any = None, options: Mapping[str, Any] | None = None) -> bool:
    """Whether run-time bounds checks are asked for (see the module docstring)."""
    if options is not None and options.get("bounds_check") is not None:
        return bool(options["bounds_check"])
    scoped = build_bounds_check()
    if scoped is not None:  # the build option of the build in progress
        return bool(scoped)
    attrs = getattr(mod, "attrs", None)
    if isinstance(attrs, Mapping) and attrs.get(BOUNDS_CHECK_ATTR) is not None:
        return bool(attrs[BOUNDS_CHECK_ATTR])
    config = PassContext.current().config
    if config.get(BOUNDS_CHECK_ATTR) is not None:
        return bool(config[BOUNDS_CHECK_ATTR])
    return os.environ.get(_ENV, "").strip().lower() in _TRUE


@dataclass
class Access:
    """One buffer access: the buffer, its indices, and the conditions under which it runs
    (``A[i]`` in ``T.if_then_else(i < n, A[i], 0)`` runs only when ``i < n``)."""

    buffer: Buffer
    indices: list[E.PrimExpr]
    guards: list[E.PrimExpr] = field(default_factory=list)


@dataclass
class Division:
    """An integer division (or remainder) whose divisor is not a nonzero constant."""

    expr: E.BinaryOp
    guards: list[E.PrimExpr] = field(default_factory=list)


def statement_checks(stmt: S.Stmt) -> list[Access | Division]:
    """What checked mode verifies before ``stmt``: the accesses and integer divisions it makes
    itself (not those of its body statements), inner ones first (the loads inside an index
    come before the access that uses it)."""
    out: list[Access | Division] = []
    if isinstance(stmt, S.While):
        return out  # its condition is checked at every iteration (CStmtPrinter.stmt_While)
    for _, value in stmt.fields():
        for e in _exprs(value):
            _collect(e, [], out)
    if isinstance(stmt, S.BufferStore):
        out.append(Access(stmt.buffer, list(stmt.indices)))
    return out


def statement_accesses(stmt: S.Stmt) -> list[Access]:
    """The accesses among :func:`statement_checks`."""
    return [c for c in statement_checks(stmt) if isinstance(c, Access)]


def _exprs(value: Any) -> Iterator[E.PrimExpr]:
    if isinstance(value, E.PrimExpr):
        yield value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, E.PrimExpr):
                yield item


_DIVISIONS = (E.Div, E.Mod, E.FloorDiv, E.FloorMod)


def _collect(e: Any, guards: list[E.PrimExpr], out: list[Any]) -> None:
    if not isinstance(e, E.PrimExpr):
        return
    if isinstance(e, E.BufferLoad):
        for i in e.indices:
            _collect(i, guards, out)
        out.append(Access(e.buffer, list(e.indices), guards))
    elif isinstance(e, E.Call) and e.op.name == "tirx.if_then_else" and len(e.args) == 3:
        cond = e.args[0]
        _collect(cond, guards, out)
        _collect(e.args[1], [*guards, cond], out)
        _collect(e.args[2], [*guards, E.Not(cond)], out)
    elif isinstance(e, E.Call) and e.op.name == "tirx.address_of":
        for a in e.args:  # the address of an element is not an access of it
            if isinstance(a, E.BufferLoad):
                for i in a.indices:
                    _collect(i, guards, out)
    elif isinstance(e, E.Select):
        _collect(e.condition, guards, out)
        _collect(e.true_value, [*guards, e.condition], out)
        _collect(e.false_value, [*guards, E.Not(e.condition)], out)
    elif isinstance(e, (E.And, E.Or)):
        _collect(e.a, guards, out)
        _collect(e.b, [*guards, e.a if isinstance(e, E.And) else E.Not(e.a)], out)
    elif isinstance(e, E.Let):
        _collect(substitute(e.body, {e.var: e.value}), guards, out)
    else:
        for _, value in e.fields():
            for sub in (value if isinstance(value, list) else [value]):
                _collect(sub, guards, out)
        if isinstance(e, _DIVISIONS) and e.dtype.is_integer and e.dtype.lanes == 1 \
                and not (isinstance(e.b, E.IntImm) and e.b.value not in (0, -1)):
            out.append(Division(e, guards))
