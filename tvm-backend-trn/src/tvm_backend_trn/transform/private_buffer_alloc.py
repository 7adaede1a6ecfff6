"""``TrnPrivateBufferAlloc``: allocate the workspaces of trn dispatch variants up front.

Each tile-primitive call is dispatched once in *alloc-only* mode: the chosen variant asks for
the workspace buffers it needs (:func:`tvm_backend_trn.dispatch.common.workspace`) instead of
failing. The pass allocates them at the start of the function, shares identical ones between
calls (the engines run calls one after another), and records them in each call's
``workspace``, where the real dispatch finds them. Doing this before
:class:`TrnNaiveAllocator` lets the allocator place workspaces with everything else.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.backend.sdk import DispatchContext, dispatch
from tvm.ir import AllocBuffer, Buffer, Mutator, PrimFunc, TilePrimitiveCall, seq

from ._trn_pass import TrnFunctionPass

__all__ = ["TrnPrivateBufferAlloc", "WORKSPACE_KEY"]

WORKSPACE_KEY = "trn.workspace"


@dataclasses.dataclass(frozen=True)
class TrnPrivateBufferAlloc(TrnFunctionPass):
    """Allocate dispatch workspaces (identity, acc_psum, const_bias, partial) for trn calls."""

    name = "TrnPrivateBufferAlloc"

    def transform_trn(self, func: PrimFunc, target: Any) -> PrimFunc:
        alloc = _Alloc(target)
        body = alloc.visit(func.body)
        if not alloc.buffers:
            return func
        return func.with_body(seq([*(AllocBuffer(b) for b in alloc.buffers), body]))


class _Alloc(Mutator):
    def __init__(self, target: Any) -> None:
        self.target = target
        self.buffers: list[Buffer] = []
        self.shared: dict[tuple[Any, ...], Buffer] = {}

    def visit_TilePrimitiveCall(self, node: TilePrimitiveCall) -> Any:
        state: dict[str, Any] = {}
        sctx = DispatchContext(self.target, node.scope, op_call=node, shared_state=state)
        sctx.alloc_only = True
        try:
            dispatch(node, sctx)
        except RuntimeError:
            return node  # the real dispatch reports it, with the table of variants
        wanted: dict[str, Buffer] = state.get(WORKSPACE_KEY, {})
        if not wanted:
            return node
        workspace = dict(node.workspace)
        for name, buf in wanted.items():
            shape: tuple[object, ...] = buf.static_shape() or tuple(str(e) for e in buf.shape)
            key = (name, shape, str(buf.dtype), buf.scope)
            shared = self.shared.get(key)
            if shared is None:
                shared = self.shared[key] = buf
                self.buffers.append(buf)
            workspace[name] = shared
        return node.with_workspace(workspace)
