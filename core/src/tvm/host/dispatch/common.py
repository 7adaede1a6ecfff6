"""What the host variants share: predicates, the parallel threshold, loop marking."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...ir import Buffer, BufferRegion, For, ForKind, IfThenElse, IntImm, PrimExpr, Stmt
from ...tirx.operator.tile_primitive import DispatchContext, predicate, register_dispatch
from ...tirx.operator.tile_primitive.common import fold_product, region_of
from ...tirx.transform.fuse_row_loops import FUSIBLE

__all__ = ["KINDS", "PARALLEL_MIN", "PRIORITY", "contiguous_inner", "parallel_worth",
           "register_host", "run_on_thread0", "serial_scope"]

PRIORITY = 10  # above core's fallback (-100)
# The target kinds the host backend builds (both through the host codegen and C compiler).
KINDS = ("c", "llvm")
# Elements from which an op is split over OpenMP threads: a fork/join costs microseconds, so only
# ops of about a hundred microseconds and more are split (on as many threads as
# tvm_host_threads() leaves free, kernels/threads.c).
PARALLEL_MIN = 1 << 17


def serial_scope(call: Any, sctx: DispatchContext) -> tuple[bool, str]:
    """The op runs on one thread: thread scope, a scope of one thread, or a scope whose threads
    the host runs one after another (then the scope's thread 0 does it, as in the fallback)."""
    if sctx.is_thread or sctx.is_single_thread() or sctx.is_serial():
        return True, ""
    return False, (f"scope {sctx.scope_kind} with {sctx.thread_extent()} threads that do not run "
                   "one after another on this target")


def register_host(names: Iterable[str], variant: str, impl: Any, *when: Any) -> None:
    """Register ``impl`` as ``variant`` of each op of ``names`` for every host kind, at
    :data:`PRIORITY`, when the scope runs on one thread (:func:`serial_scope`) and the
    predicates ``when`` hold."""
    checks = [predicate("serial_scope", serial_scope), *when]
    for name in names:
        for kind in KINDS:
            register_dispatch(name, kind, variant=variant, priority=PRIORITY, when=checks)(impl)


def run_on_thread0(sctx: DispatchContext, stmt: Stmt) -> Stmt:
    """``stmt`` as the scope runs it: on its thread 0 when the scope has several threads."""
    if sctx.is_thread or sctx.is_single_thread():
        return stmt
    return IfThenElse(sctx.thread_index() == 0, stmt)


def contiguous_inner(arg: Any, name: str) -> tuple[bool, str]:
    """``arg``'s innermost axis is contiguous in memory (no tile layout, unit last stride)."""
    if not isinstance(arg, (Buffer, BufferRegion)):
        return False, f"{name} is not a buffer or region"
    buf = region_of(arg).buffer
    if buf.layout is not None:
        return False, f"{name} ({buf.name}) has a tile layout"
    if buf.strides and not (isinstance(buf.strides[-1], IntImm) and buf.strides[-1].value == 1):
        return False, f"{name} ({buf.name}) has innermost stride {buf.strides[-1]}, not 1"
    return True, ""


def parallel_worth(extents: list[PrimExpr]) -> bool:
    """Worth OpenMP threads: a symbolic size, or at least PARALLEL_MIN elements."""
    total = fold_product(extents)
    return not isinstance(total, IntImm) or total.value >= PARALLEL_MIN


def mark(loop: For, *, parallel: bool) -> For:
    """``loop`` fusible with equal neighbours, run by OpenMP threads when ``parallel``."""
    kind = ForKind.PARALLEL if parallel else loop.kind
    return loop.with_fields(kind=kind, annotations={**loop.annotations, FUSIBLE: True})  # type: ignore[return-value]
