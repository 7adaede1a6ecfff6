"""The seed's host-filled kernel values, as launch-derived arguments (``LowerKernelForm``
runs :func:`lower_host_encodes` first, as it decides what runs on the host).

The seed fills a TMA descriptor on the host and hands it to the kernel::

    A_map: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float16", 2, A.data, ...)
    T.device_entry()
    ... T.ptx.cp_async.bulk.tensor.g2c(2, smem, bar, A_map, ...)   # or T.address_of(A_map)

Here a value the host computes from an array argument is a ``tirx.host_derived`` call
(:class:`~tvm.tirx.op.HostDerived`), computed by the backend's runtime at launch. This
turns each ``T.tvm_stack_alloca`` let filled by a packed function a backend registered in
:data:`~tvm.tirx.op.HOST_ENCODERS` into that call: the encoder checks the packed call's
arguments (errors at its line) and returns the call; every use of the variable (and of its
address) becomes it. A tile TMA copy dispatched before takes the map variable
(``config={"tensor_map": m}``) and so gets the call too.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from ..._registry import run_deferred
from ...error import LoweringValueError, located
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import PrimFunc
from ...ir.visitor import Mutator, Visitor
from ..op import HOST_ENCODERS
from ._util import flatten_seq

__all__ = ["lower_host_encodes"]


def _is_call(node: Any, op: str) -> TypeGuard[E.Call]:
    return isinstance(node, E.Call) and node.op.name == op


def lower_host_encodes(func: PrimFunc) -> PrimFunc:
    """``func`` with its host-filled ``T.tvm_stack_alloca`` values as ``tirx.host_derived``
    calls (unchanged when it has none)."""
    finder = _Finder()
    finder.visit(func.body)
    if not finder.found:
        return func
    run_deferred()  # backends register their encoders with their dispatch variants
    buffers = {id(b.data): b for b in func.buffer_map.values()}
    body = _Lower(buffers).visit(func.body)
    leftover = _Finder()
    leftover.visit(body)
    if leftover.packed is not None:
        call = leftover.packed
        raise LoweringValueError(
            f"T.call_packed({call.args[0].value!r}, ...) compiles only as the encoder of a "
            "T.tvm_stack_alloca value, right after it (`m: T.handle(\"tensormap\") = "
            "T.tvm_stack_alloca(\"tensormap\", 1)`, then the call with `m` first)",
            leftover.packed_span)
    return func.with_body(body)


class _Finder(Visitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False
        self.packed: E.Call | None = None
        self.packed_span: Any = None

    def visit_Evaluate(self, node: S.Evaluate) -> None:
        value = node.value
        if _is_call(value, "tirx.call_packed") and self.packed is None:
            self.packed, self.packed_span = value, node.span
        self.generic_visit(node)

    def visit_Call(self, node: E.Call) -> None:
        if node.op.name in ("tirx.tvm_stack_alloca", "tirx.call_packed"):
            self.found = True
        self.generic_visit(node)


class _Lower(Mutator):
    def __init__(self, buffers: dict[int, Any]) -> None:
        super().__init__()
        self.buffers = buffers

    def visit_LetStmt(self, node: S.LetStmt) -> Any:
        if not _is_call(node.value, "tirx.tvm_stack_alloca"):
            return self.generic_visit(node)
        var = node.var
        items = list(node.body.seq) if isinstance(node.body, S.SeqStmt) else [node.body]
        k = next((j for j, st in enumerate(items) if isinstance(st, S.Evaluate)
                  and _fills(st.value, var)), None)
        if k is None:
            raise LoweringValueError(
                f"{var.name} = T.tvm_stack_alloca(...) is never filled: call the packed function "
                f"that encodes it next, e.g. T.call_packed(\"runtime.cuTensorMapEncodeTiled\", "
                f"{var.name}, ...)", node.span)
        packed = items[k]
        assert isinstance(packed, S.Evaluate) and isinstance(packed.value, E.Call)
        name = str(packed.value.args[0].value)
        encoder = HOST_ENCODERS.get(name)
        if encoder is None:
            known = ", ".join(sorted(k for k, _ in HOST_ENCODERS.items())) or "none"
            raise LoweringValueError(
                f"T.call_packed({name!r}, {var.name}, ...): no backend lowers that packed "
                f"function (known here: {known}; is the backend loaded?)", packed.span)
        with located(packed.span):
            value = encoder(list(packed.value.args[2:]), self.buffers)
        rest = flatten_seq(items[:k] + items[k + 1:])
        return _Replace(var, value).visit(self.visit(rest))


def _fills(value: Any, var: E.Var) -> bool:
    """``T.call_packed(name, var, ...)``."""
    return _is_call(value, "tirx.call_packed") and len(value.args) > 1 and value.args[1] is var


class _Replace(Mutator):
    """``var`` and ``T.address_of(var)`` become ``value``."""

    def __init__(self, var: E.Var, value: E.PrimExpr) -> None:
        super().__init__()
        self.var, self.value = var, value

    def visit_Var(self, node: E.Var) -> Any:
        return self.value if node is self.var else node

    def visit_Call(self, node: E.Call) -> Any:
        if node.op.name == "tirx.address_of" and node.args and node.args[0] is self.var:
            return self.value
        return self.generic_visit(node)
