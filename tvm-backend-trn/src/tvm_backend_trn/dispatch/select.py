"""``select`` on trn (variant ``default``, p10): ``affine_select``.

``Tx.select(dst, true_value, false_value, pred)`` with ``true_value`` an SBUF tile of dst's
shape, ``false_value`` a constant and ``pred`` a Python callable of dst's element indices
returning an affine comparison (``lambda i, j: i >= j`` for a causal mask). The predicate is
recorded over the index variables ``nki_i0, nki_i1, ...`` of the result region.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import DispatchContext, fail, register_dispatch
from tvm.ir import Var
from tvm.ir import expr as E

from .common import TRN_ONLY, classify, emit, func, nki, region

__all__ = ["register", "select_trn"]


def select_trn(op: Any, sctx: DispatchContext) -> Any:
    dst = region(op.args[0])
    if dst.buffer.scope != "trn.sbuf":
        fail("dst must be in trn.sbuf (affine_select runs on GpSimd)")
    true_value = classify(op.args[1], dst, "true_value")
    if true_value.kind != "tile" or true_value.value.buffer.scope != "trn.sbuf":
        fail("true_value must be an SBUF tile of the destination's shape")
    false_value = classify(op.args[2], dst, "false_value")
    if false_value.kind != "scalar":
        fail("false_value must be a constant on Trainium")
    pred = op.args[3]
    if not callable(pred) or isinstance(pred, E.PrimExpr):
        fail("pred must be a callable of the element indices (an affine comparison)")
    index = [Var(f"nki_i{d}", "int32") for d in range(len(dst.region))]
    cond = pred(*index)
    if type(cond) not in (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE):
        fail(f"pred must return an affine comparison of the indices, got {cond}")
    return func([emit(nki.nki_affine_select(dst, cond, true_value.value, false_value.value))])


def register() -> None:
    register_dispatch("select", "trn", variant="default", priority=10,
                      when=[TRN_ONLY])(select_trn)
