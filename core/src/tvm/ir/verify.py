"""The IR verifier. Construction does not check; this does, and each error names the node and
the rule it breaks."""

from __future__ import annotations

from typing import Any

from ..error import IRVerifyError
from . import expr as E
from . import stmt as S
from .buffer import Buffer, BufferRegion
from .function import IRModule, PrimFunc
from .op import OpCategory
from .visitor import Visitor

__all__ = ["verify", "verify_errors"]


class _Verifier(Visitor):
    def __init__(self) -> None:
        self.errors: list[str] = []
        self.defined: set[int] = set()
        self.func: PrimFunc | None = None

    def err(self, msg: str) -> None:
        self.errors.append(msg)

    def define(self, v: E.Var) -> None:
        self.defined.add(id(v))

    def define_buffer(self, b: Buffer) -> None:
        self.defined.add(id(b))
        self.define(b.data)

    # -- functions -------------------------------------------------------------------------
    def visit_PrimFunc(self, f: PrimFunc) -> None:
        self.func = f
        for p in f.params:
            self.define(p)
        for p, b in f.buffer_map.items():
            if not any(p is q for q in f.params):
                self.err(f"function {f.name}: buffer_map key {p.name} is not a parameter")
            self.define_buffer(b)
            for dim in b.shape + b.strides + [b.elem_offset]:
                self._define_free_shape_vars(dim)
        for b in f.buffer_map.values():
            for dim in b.shape + b.strides:
                self.visit(dim)
        self.visit(f.body)

    def _define_free_shape_vars(self, e: Any) -> None:
        # symbolic extents of parameter buffers (T.match_buffer(a, (n,))) define n
        if isinstance(e, E.Var):
            self.define(e)

    def visit_IRModule(self, m: IRModule) -> None:
        for f in m.functions.values():
            self.defined = set()
            self.visit(f)

    # -- statements ------------------------------------------------------------------------
    def visit_For(self, s: S.For) -> None:
        self.visit(s.min)
        self.visit(s.extent)
        for part, e in (("extent", s.extent), ("min", s.min)):
            if not e.dtype.is_integer:
                self.err(f"loop `{s.loop_var.name}` has a {e.dtype} {part}; loop bounds must be integers")
        if s.kind is S.ForKind.THREAD_BINDING and not s.thread_tag:
            self.err(f"loop `{s.loop_var.name}` is thread-bound but names no thread (e.g. threadIdx.x)")
        if s.kind is S.ForKind.VECTORIZED and not isinstance(s.extent, E.IntImm):
            self.err(f"vectorized loop `{s.loop_var.name}` needs a constant extent")
        self.define(s.loop_var)
        self.visit(s.body)

    def visit_LetStmt(self, s: S.LetStmt) -> None:
        self.visit(s.value)
        if s.value.dtype != s.var.dtype:
            self.err(f"let `{s.var.name}`: value is {s.value.dtype} but the variable is {s.var.dtype}")
        self.define(s.var)
        self.visit(s.body)

    def visit_Let(self, e: E.Let) -> None:
        self.visit(e.value)
        self.define(e.var)
        self.visit(e.body)

    def visit_ScopeIdDef(self, s: S.ScopeIdDef) -> None:
        for e in s.extents:
            self.visit(e)
        for v in s.vars:
            self.define(v)

    def visit_AllocBuffer(self, s: S.AllocBuffer) -> None:
        for dim in s.buffer.shape:
            self.visit(dim)
        self.define_buffer(s.buffer)

    def visit_DeclBuffer(self, s: S.DeclBuffer) -> None:
        for dim in s.buffer.shape:
            self.visit(dim)
        if id(s.buffer.data) not in self.defined:
            self.err(f"DeclBuffer `{s.buffer.name}` views data `{s.buffer.data.name}` that is not defined")
        self.define_buffer(s.buffer)

    def visit_IfThenElse(self, s: S.IfThenElse) -> None:
        self.visit(s.condition)
        if not s.condition.dtype.is_bool:
            self.err(f"if condition is {s.condition.dtype}; it must be bool")
        self.visit(s.then_case)
        if s.else_case is not None:
            self.visit(s.else_case)

    def visit_AssertStmt(self, s: S.AssertStmt) -> None:
        self.visit(s.condition)
        if not s.condition.dtype.is_bool:
            self.err(f"assert condition is {s.condition.dtype}; it must be bool")

    def visit_BufferStore(self, s: S.BufferStore) -> None:
        self._check_access("BufferStore to", s.buffer, s.indices)
        self.visit(s.value)
        for i in s.indices:
            self.visit(i)
        if s.value.dtype.element_of() != s.buffer.dtype.element_of():
            self.err(f"BufferStore to `{s.buffer.name}` stores a {s.value.dtype} value into a "
                     f"{s.buffer.dtype} buffer; cast it first")

    def visit_TilePrimitiveCall(self, s: S.TilePrimitiveCall) -> None:
        if s.op.category is not OpCategory.TILE_PRIMITIVE:
            self.err(f"TilePrimitiveCall of `{s.op.name}`: the op is a {s.op.category.value}, not a tile primitive")
        for a in s.args:
            self.visit(a)

    # -- expressions -----------------------------------------------------------------------
    def visit_Var(self, v: E.Var) -> None:
        if self.func is not None and id(v) not in self.defined:
            self.err(f"variable `{v.name}` is used before it is defined")

    def visit_BufferLoad(self, e: E.BufferLoad) -> None:
        self._check_access("BufferLoad from", e.buffer, e.indices)
        for i in e.indices:
            self.visit(i)

    def visit_BufferRegion(self, r: BufferRegion) -> None:
        self._check_buffer_defined(r.buffer)
        for rg in r.region:
            self.visit(rg.min)
            self.visit(rg.extent)

    def visit_Buffer(self, b: Buffer) -> None:
        self._check_buffer_defined(b)

    def visit_BinaryOp(self, e: E.BinaryOp) -> None:
        self.visit(e.a)
        self.visit(e.b)
        if e.a.dtype != e.b.dtype:
            self.err(f"{type(e).__name__} mixes {e.a.dtype} and {e.b.dtype}; operands must have one type")

    def visit_Call(self, e: E.Call) -> None:
        if e.op.category is OpCategory.TILE_PRIMITIVE:
            self.err(f"tile primitive `{e.op.name}` is used as an expression; call it as a statement (Tx.{e.op.printer_name})")
        for a in e.args:
            self.visit(a)

    def _check_buffer_defined(self, b: Buffer) -> None:
        if self.func is not None and id(b) not in self.defined:
            self.err(f"buffer `{b.name}` is used before it is defined (declare it with T.alloc_buffer, "
                     f"T.decl_buffer or as a parameter)")

    def _check_access(self, what: str, b: Buffer, indices: list[E.PrimExpr]) -> None:
        self._check_buffer_defined(b)
        if len(indices) != len(b.shape) and not (b.layout is not None and len(indices) == 1):
            n = len(indices)
            self.err(f"{what} `{b.name}` has {n} index{'es' if n != 1 else ''} but the buffer has "
                     f"{len(b.shape)} dimension{'s' if len(b.shape) != 1 else ''}")
        for i in indices:
            if not (i.dtype.element_of().is_integer):
                self.err(f"{what} `{b.name}` uses a {i.dtype} index; indices must be integers")


def verify_errors(node: Any) -> list[str]:
    """Every rule that ``node`` breaks, as messages."""
    v = _Verifier()
    v.visit(node)
    return v.errors


def verify(node: Any) -> None:
    """Raise :class:`~tvm.error.IRVerifyError` listing the broken rules, if any."""
    errors = verify_errors(node)
    if errors:
        raise IRVerifyError("IR verification failed:\n  " + "\n  ".join(errors))
