"""TVMScript printer: IR to text that :func:`tvm.script.from_source` reads back to a
structurally equal object, and that prints again to the same text.

Printed forms (the parser accepts all of them):

- functions: ``@T.prim_func`` (``@T.prim_func(private=True)`` without ``global_symbol``),
  buffer parameters ``A: T.Buffer((64,), "float32", scope=..., strides=..., layout=...)``;
  a buffer whose shape uses variables that are not parameters is printed as ``a: T.handle`` with
  ``n = T.int32()`` and ``A = T.match_buffer(a, (n,), "float32")`` at the top of the body;
  other attributes as ``T.func_attr({...})``; modules as ``@I.ir_module class Module:``.
- statements: ``for i in range(n)`` (serial), ``T.unroll``/``T.parallel``/``T.vectorized``/
  ``T.thread_binding(n, thread="threadIdx.x")``, ``T.grid`` for perfectly nested serial loops;
  ``x: T.int32 = v`` (a LetStmt over the rest of the block) and ``T.attr({...})`` when the
  statement ends its block, ``with T.let(v) as x:`` / ``with T.attr({...}):`` otherwise;
  ``A = T.alloc_buffer(...)``, ``A = T.decl_buffer(..., data=B.data)``,
  ``bx, by = T.cta_id([32, 4])``, ``assert c, "msg"``, ``T.evaluate(v)`` for a non-call.
- tile primitives: ``T.tile.<op>(...)`` at thread scope, ``T.cta.``/``T.warp.``/``T.wg.``/
  ``T.cluster.<op>(...)`` otherwise, with ``dispatch=``, ``workspace=``, ``config=`` when set;
  trailing arguments equal to the op's defaults are left out.
- expressions: int32 literals plain, other literals typed (``T.int64(3)``, ``T.float32(0.5)``,
  ``T.bool(True)``, ``T.uint64(0)``); ``+ - * / // %`` and comparisons infix (``/`` is
  ``Div``, ``%`` is ``FloorMod``), ``T.truncmod``, ``T.min``, ``T.max``, ``T.Cast("float32", x)``,
  ``T.Select(c, a, b)``, ``T.Let(x, v, body)``, ``T.Ramp(b, s, n)``, ``T.Broadcast(v, n)``,
  ``A[i, j]`` and regions ``A[0:64, k * 32:k * 32 + 32]``; layouts
  ``T.TileLayout(T.S[(8, 16):(16, 1 @ T.laneid)])`` (axes without a ``T`` name as
  ``T.axis("P")``).
- calls: builtins as ``T.<printer_name>(...)``, device intrinsics as ``T.<ns>.<path>(...)``. The
  printer checks that calling that builder on the printed arguments rebuilds the same call;
  otherwise (a result type the op would not infer, or a builder that maps its arguments) it
  prints the exact form ``T.call_intrin("dtype", "op.name", args...)``.

For backend authors: an op whose builder takes its result type as its first argument
(``T.type_annotation("float32")``) declares the op attribute ``script_dtype=True``; a tuple of
operand counts instead (``script_dtype=(5,)``) means only calls with that many operands print
their type first (an op with a second operand form typed by its builder). An op whose
builder takes keyword-only parameters stores them as its last
arguments and declares their names in the op attribute ``script_kwargs`` (a tuple of str), e.g.
``Op.register("tirx.cuda.func_call", ..., script_kwargs=("source_code",))`` prints
``T.cuda.func_call("f", 1, source_code="")``.
"""

from __future__ import annotations

import json
import keyword
import math
from typing import Any, TypeGuard

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer, BufferRegion, Range
from ..ir.depth import recursion_guard
from ..ir.function import IRModule, PrimFunc
from ..ir.layout import Axis, Iter, TileLayout
from ..ir.node import Node
from ..ir.op import OpCategory
from ..ir.stmt import _const_arg
from ..ir.structural import structural_equal
from ..ir.visitor import Visitor
from . import tirx as _tirx
from .tirx import PARAM_TYPES

__all__ = ["to_script"]

_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _ATOM = 1, 2, 3, 4, 7, 8, 9, 10
_INFIX = {E.Add: ("+", _ADD), E.Sub: ("-", _ADD), E.Mul: ("*", _MUL), E.Div: ("/", _MUL),
          E.FloorDiv: ("//", _MUL), E.FloorMod: ("%", _MUL)}
_CMP_SYM = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}
_CALL_BINOPS = {E.Min: "T.min", E.Max: "T.max", E.Mod: "T.truncmod"}
_SCOPE_PREFIX = {"thread": "tile", "warp": "warp", "warpgroup": "wg", "cta": "cta",
                 "cluster": "cluster"}
_LOOP_FUNC = {S.ForKind.PARALLEL: "T.parallel", S.ForKind.VECTORIZED: "T.vectorized",
              S.ForKind.UNROLLED: "T.unroll", S.ForKind.THREAD_BINDING: "T.thread_binding",
              S.ForKind.SERIAL: "T.serial"}
_COMPOSE_OP = "tirx.tile.compose_op"
_RESERVED = frozenset(keyword.kwlist) | {"T", "I", "tvm", "range", "print"}
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def to_script(node: Any, *, verbose_expr: bool = False,
              extra_config: dict[str, Any] | None = None, **kwargs: Any) -> str:
    """TVMScript text of a PrimFunc, IRModule, statement, expression, region or layout.

    ``verbose_expr=True`` (Apache TVM's option) writes, before a statement or expression, a
    declaration of every variable and buffer it uses without defining (``n = T.int32()``,
    ``A = T.Buffer((1,), "float16")``), in order of first use. ``extra_config`` accepts the
    seed's ``{"tirx.prefix": "T"}`` (the only prefix there is).
    """
    prefix = (extra_config or {}).get("tirx.prefix", "T")
    if prefix != "T":
        raise ValueError(f"the script prefix is always 'T', got {prefix!r}")
    with recursion_guard("printing TVMScript"):
        return _to_script(node, verbose_expr)


def _to_script(node: Any, verbose_expr: bool) -> str:
    p = _Printer()
    if isinstance(node, IRModule):
        return p.module(node)
    if isinstance(node, PrimFunc):
        return "# from tvm.script import tirx as T\n\n" + "\n".join(p.func(node, None)) + "\n"
    if isinstance(node, S.Stmt):
        p.names.push()
        if verbose_expr:
            p.declare_free(node)
        else:
            p.reserve_free(node)
        p.block_body(node)
        return "\n".join(p.out) + "\n"
    if verbose_expr:
        p.names.push()
        p.declare_free(node)
        return "\n".join([*p.out, p.value(node)])
    return p.value(node)


# -- names ------------------------------------------------------------------------------------
class _Names:
    """Unique, scoped names for variables and buffers (renamed with _1, _2, ... on clashes)."""

    def __init__(self) -> None:
        self.scopes: list[set[str]] = []
        self.of: dict[int, str] = {}

    def push(self) -> None:
        self.scopes.append(set())

    def pop(self) -> None:
        self.scopes.pop()

    def taken(self, name: str) -> bool:
        return name in _RESERVED or any(name in s for s in self.scopes)

    def define(self, obj: Any, hint: str) -> str:
        base = _identifier(hint)
        name, k = base, 0
        while self.taken(name):
            k += 1
            name = f"{base}_{k}"
        self.scopes[-1].add(name)
        self.of[id(obj)] = name
        return name


def _identifier(hint: str) -> str:
    text = "".join(c if (c.isalnum() or c == "_") else "_" for c in (hint or "v"))
    if not text or text[0].isdigit():
        text = "v" + text
    return text


class _Uses(Visitor):
    """Collects used and defined variables (by id) of a subtree."""

    def __init__(self) -> None:
        self.used: dict[int, E.Var] = {}
        self.defined: set[int] = set()
        self.order: list[Any] = []  # used vars and buffers, in order of first use

    def visit_Var(self, v: E.Var) -> None:
        if id(v) not in self.used:
            self.used[id(v)] = v
            self.order.append(v)

    def _define_buffer(self, b: Buffer) -> None:
        self.defined.add(id(b.data))
        for e in b.shape + b.strides + [b.elem_offset]:
            self.visit(e)
        if b.layout is not None:
            self.visit(b.layout)

    def visit_Buffer(self, b: Buffer) -> None:
        seen = id(b.data) in self.used
        self.used.setdefault(id(b.data), b.data)
        for e in b.shape + b.strides + [b.elem_offset]:
            self.visit(e)
        if not seen:
            self.order.append(b)

    def visit_For(self, s: S.For) -> None:
        self.defined.add(id(s.loop_var))
        self.generic_visit(s)

    def visit_LetStmt(self, s: S.LetStmt) -> None:
        self.defined.add(id(s.var))
        self.generic_visit(s)

    def visit_Let(self, e: E.Let) -> None:
        self.defined.add(id(e.var))
        self.generic_visit(e)

    def visit_ScopeIdDef(self, s: S.ScopeIdDef) -> None:
        self.defined.update(id(v) for v in s.vars)
        self.generic_visit(s)

    def visit_AllocBuffer(self, s: S.AllocBuffer) -> None:
        self._define_buffer(s.buffer)
        self.visit(s.annotations)

    def visit_DeclBuffer(self, s: S.DeclBuffer) -> None:
        # A view of another buffer's memory reuses a defined pointer; a fresh one is defined here.
        self._define_buffer(s.buffer)


def _free_vars(f: PrimFunc) -> tuple[dict[int, E.Var], set[int]]:
    """The variables no statement of ``f`` defines (buffer shape variables and free variables),
    and the parameters printed as ``T.handle`` (their buffer uses other variables, or the body
    uses the handle itself)."""
    uses = _uses(f.body)
    param_ids = {id(p) for p in f.params}
    shape_vars: dict[int, E.Var] = {}
    handle_form: set[int] = set()
    for p in f.params:
        buf = f.buffer_map.get(p)
        if buf is None:
            continue
        bu = _uses(buf.shape + buf.strides + [buf.elem_offset]
                   + ([buf.layout] if buf.layout is not None else []))
        extra = {k: v for k, v in bu.used.items() if k not in param_ids}
        if extra or id(p) in uses.used:
            handle_form.add(id(p))
            shape_vars.update(extra)
    declared = {id(b.data) for b in f.buffer_map.values()} | param_ids
    free = {k: v for k, v in uses.used.items() if k not in uses.defined and k not in declared}
    free.update(shape_vars)
    return free, handle_form


def _uses(node: Any) -> _Uses:
    u = _Uses()
    u.visit(node)
    return u


# -- the printer ------------------------------------------------------------------------------
class _Printer:
    def __init__(self) -> None:
        self.names = _Names()
        self.out: list[str] = []
        self.indent = 0
        self.data_of: dict[int, str] = {}  # buffer data var id -> "A.data"

    @property
    def T(self) -> Any:  # noqa: N802 - the facade's own name
        return _tirx

    def line(self, text: str) -> None:
        self.out.append("    " * self.indent + text)

    # -- modules and functions ------------------------------------------------------------
    def module(self, mod: IRModule) -> str:
        lines = ["# from tvm.script import ir as I", "# from tvm.script import tirx as T", "",
                 "@I.ir_module", "class Module:"]
        if mod.attrs:
            lines.append(f"    I.module_attrs({self.raw(mod.attrs)})")
        first = True
        for name, func in mod.functions.items():
            if not first or mod.attrs:
                lines.append("")
            first = False
            sub = _Printer()
            lines.extend("    " + ln if ln else ln for ln in sub.func(func, name))
        if not mod.functions:
            lines.append("    pass")
        return "\n".join(lines) + "\n"

    def func(self, f: PrimFunc, name: str | None) -> list[str]:
        self.names.push()
        attrs = dict(f.attrs)
        gsym = attrs.get("global_symbol")
        private = gsym is None
        def_name = name or (str(gsym) if gsym is not None else "main")
        if gsym is not None and gsym == def_name:
            attrs.pop("global_symbol")
        free, handle_form = _free_vars(f)
        handle_bufs = self.name_params(f, free, handle_form)
        params_txt = [self.param_text(f, p, handle_form) for p in f.params]
        head = ["@T.prim_func(private=True)" if private else "@T.prim_func",
                f"def {_identifier(def_name)}({', '.join(params_txt)}){self.returns(f)}:"]
        self.indent = 1
        if attrs:
            self.line(f"T.func_attr({self.raw(attrs)})")
        for k, v in free.items():
            size = "is_size_var=True" if isinstance(v, E.SizeVar) else ""
            self.line(f"{self.names.of[k]} = {self.dtype_ctor(v.dtype)}({size})")
        for p, buf in handle_bufs:
            args = self.buffer_args(buf)
            self.line(f"{self.names.of[id(buf)]} = T.match_buffer({self.names.of[id(p)]}, {args})")
        self.stmt(f.body, last=True)
        if len(self.out) == 0:
            self.line("pass")
        self.names.pop()
        return head + self.out

    def returns(self, f: PrimFunc) -> str:
        return "" if f.ret_type is None else f" -> {self.dtype_ctor(f.ret_type)}"

    def name_params(self, f: PrimFunc, free: dict[int, E.Var], handle_form: set[int]
                    ) -> list[tuple[E.Var, Buffer]]:
        """Name the parameters (and their buffers) first, then the free variables; returns the
        buffers matched from a handle parameter (declared in the body)."""
        for p in f.params:
            buf = f.buffer_map.get(p)
            if buf is None:
                self.names.define(p, p.name)
            elif id(p) in handle_form:
                self.names.define(p, p.name if p.name != buf.name else f"{buf.name}_handle")
            else:
                self.names.of[id(p)] = self.define_buffer(buf)
        for k, v in free.items():
            if k not in self.names.of:
                self.names.define(v, v.name)
        handle_bufs = []
        for p in f.params:
            buf = f.buffer_map.get(p)
            if buf is not None and id(p) in handle_form:
                self.define_buffer(buf)
                handle_bufs.append((p, buf))
        return handle_bufs

    def param_text(self, f: PrimFunc, p: E.Var, handle_form: set[int]) -> str:
        buf = f.buffer_map.get(p)
        if buf is None:
            return f"{self.names.of[id(p)]}: {self.param_type(p)}"
        if id(p) in handle_form:
            return f"{self.names.of[id(p)]}: T.handle"
        return f"{self.names.of[id(buf)]}: {self.buffer_decl('T.Buffer', buf)}"

    def let_type(self, v: E.Var) -> str:
        """A let's annotation: ``T.int32``; a typed handle as ``T.handle("float16", "shared")``,
        a tensor map's as ``T.handle("tensormap")``."""
        if v.dtype.is_handle and v.ptr_scope is not None and v.ptr_scope in PARAM_TYPES:
            return 'T.handle("tensormap")'
        if v.dtype.is_handle and (v.ptr_dtype is not None or v.ptr_scope is not None):
            pointee = json.dumps(str(v.ptr_dtype) if v.ptr_dtype is not None else "void")
            scope = f", {json.dumps(v.ptr_scope)}" if v.ptr_scope is not None else ""
            return f"T.handle({pointee}{scope})"
        return self.dtype_ctor(v.dtype)

    def param_type(self, p: E.Var) -> str:
        """A scalar or handle parameter's annotation: ``T.int32``, ``T.handle``, ``T.TensorMap``."""
        if p.dtype.is_handle and p.ptr_scope is not None:
            special = PARAM_TYPES.get(p.ptr_scope)
            if special is not None:
                return repr(special)
        return self.dtype_ctor(p.dtype)

    def reserve_free(self, node: Any) -> None:
        uses = _uses(node)
        for k, v in uses.used.items():
            if k not in uses.defined:
                self.names.define(v, v.name)

    def declare_free(self, node: Any) -> None:
        """``n = T.int32()`` / ``A = T.Buffer(...)`` for what ``node`` uses but does not define."""
        uses = _uses(node)
        data_of = {id(x.data) for x in uses.order if isinstance(x, Buffer)}
        for x in uses.order:
            if isinstance(x, Buffer):
                if id(x.data) in uses.defined:
                    continue
                name = self.names.define(x, x.name)
                self.names.of[id(x.data)] = name
                self.line(f"{name} = {self.buffer_decl('T.Buffer', x)}")
            elif id(x) not in uses.defined and id(x) not in data_of:
                name = self.names.define(x, x.name)
                size = "is_size_var=True" if isinstance(x, E.SizeVar) else ""
                self.line(f"{name} = {self.dtype_ctor(x.dtype)}({size})")

    def dtype_ctor(self, dtype: Any) -> str:
        return f"T.{dtype}"

    # -- buffers --------------------------------------------------------------------------
    def define_buffer(self, buf: Buffer) -> str:
        name = self.names.define(buf, buf.name)
        self.data_of[id(buf.data)] = f"{name}.data"
        return name

    def buffer_args(self, buf: Buffer, *, alloc: bool = False) -> str:
        shape = self.tuple_text(buf.shape)
        parts = [shape, json.dumps(str(buf.dtype))]
        if buf.scope != "global":
            parts.append(f"scope={json.dumps(buf.scope)}")
        if buf.strides:
            parts.append(f"strides={self.tuple_text(buf.strides)}")
        if buf.layout is not None:
            parts.append(f"layout={self.layout(buf.layout)}")
        if not alloc and not (isinstance(buf.elem_offset, E.IntImm) and buf.elem_offset.value == 0):
            parts.append(f"elem_offset={self.expr(buf.elem_offset)}")
        if buf.align:
            parts.append(f"align={buf.align}")
        if buf.axis_separators:
            parts.append(f"axis_separators={buf.axis_separators}")
        if buf.offset_factor:
            parts.append(f"offset_factor={buf.offset_factor}")
        return ", ".join(parts)

    def buffer_decl(self, ctor: str, buf: Buffer) -> str:
        return f"{ctor}({self.buffer_args(buf)})"

    def tuple_text(self, items: list[Any]) -> str:
        inner = ", ".join(self.expr(x) for x in items)
        return f"({inner},)" if len(items) == 1 else f"({inner})"

    # -- statements -----------------------------------------------------------------------
    def block(self, s: S.Stmt) -> None:
        """Print ``s`` as an indented block (``pass`` if it prints nothing)."""
        self.indent += 1
        start = len(self.out)
        self.block_body(s)
        if len(self.out) == start:
            self.line("pass")
        self.indent -= 1

    def block_body(self, s: S.Stmt) -> None:
        self.stmt(s, last=True)

    def scoped(self, fn: Any) -> None:
        self.names.push()
        try:
            fn()
        finally:
            self.names.pop()

    def stmt(self, s: S.Stmt, last: bool) -> None:
        method = getattr(self, f"s_{type(s).__name__}", None)
        if method is None:
            raise TypeError(f"the printer cannot print a {type(s).__name__}")
        method(s, last)

    def s_SeqStmt(self, s: S.SeqStmt, last: bool) -> None:
        n = len(s.seq)
        for k, c in enumerate(s.seq):
            self.stmt(c, last and k == n - 1)

    def s_BufferStore(self, s: S.BufferStore, last: bool) -> None:
        idx = ", ".join(self.expr(i) for i in s.indices) or "()"  # a 0-d buffer: B[()]
        self.line(f"{self.buf_name(s.buffer)}[{idx}] = {self.typed_for(s.value, s.buffer.dtype)}")

    def s_Evaluate(self, s: S.Evaluate, last: bool) -> None:
        if isinstance(s.value, E.Call):
            self.line(self.expr(s.value))
        else:
            self.line(f"T.evaluate({self.expr(s.value)})")

    def s_AssertStmt(self, s: S.AssertStmt, last: bool) -> None:
        self.line(f"assert {self.cond(s.condition)}, {self.expr(s.message)}")

    def s_IfThenElse(self, s: S.IfThenElse, last: bool, keyword_: str = "if") -> None:
        self.line(f"{keyword_} {self.cond(s.condition)}:")
        self.scoped(lambda: self.block(s.then_case))
        other = s.else_case
        if other is None:
            return
        if isinstance(other, S.IfThenElse):
            self.s_IfThenElse(other, last, "elif")
            return
        self.line("else:")
        self.scoped(lambda: self.block(other))

    def s_While(self, s: S.While, last: bool) -> None:
        self.line(f"while {self.cond(s.condition)}:")
        self.scoped(lambda: self.block(s.body))

    def cond(self, c: Any) -> str:
        return self.typed(c) if _plain(c) else self.expr(c)

    def s_For(self, s: S.For, last: bool) -> None:
        grid = [s]
        while _gridable(grid[-1]) and isinstance(grid[-1].body, S.For) and _gridable(grid[-1].body) \
                and not _uses_any(grid[-1].body.extent, grid):
            grid.append(grid[-1].body)
        self.names.push()
        try:
            names = [self.names.define(f.loop_var, f.loop_var.name) for f in grid]
            if len(grid) > 1:
                exts = ", ".join(self.expr(f.extent) for f in grid)
                self.line(f"for {', '.join(names)} in T.grid({exts}):")
            else:
                self.line(f"for {names[0]} in {self.loop_iter(s)}:")
            self.block(grid[-1].body)
        finally:
            self.names.pop()

    def loop_iter(self, s: S.For) -> str:
        func = _LOOP_FUNC[s.kind]
        if s.kind is S.ForKind.SERIAL and not s.annotations:
            func = "range"
        args = self.range_args(s.min, s.extent)
        if s.kind is S.ForKind.THREAD_BINDING or s.thread_tag:
            args.append(f"thread={json.dumps(s.thread_tag or '')}")
        if s.annotations:
            args.append(f"annotations={self.raw(s.annotations)}")
        return f"{func}({', '.join(args)})"

    def range_args(self, lo: Any, ext: Any) -> list[str]:
        if isinstance(lo, E.IntImm) and lo.value == 0:
            return [self.expr(ext)]
        if _plain(lo) and _plain(ext):
            return [self.expr(lo), str(lo.value + ext.value)]
        return [self.expr(lo), f"{self.wrap(lo, _ADD)} + {self.wrap(ext, _ADD + 1)}"]

    def s_LetStmt(self, s: S.LetStmt, last: bool) -> None:
        if last:
            name = self.names.define(s.var, s.var.name)
            self.line(f"{name}: {self.let_type(s.var)} = {self.typed_for(s.value, s.var.dtype)}")
            self.stmt(s.body, last=True)
            return
        value = self.expr(s.value)
        if s.var.dtype != s.value.dtype:
            value = f"{self.typed_for(s.value, s.var.dtype)}, {json.dumps(str(s.var.dtype))}"

        def body() -> None:
            name = self.names.define(s.var, s.var.name)
            self.line(f"with T.let({value}) as {name}:")
            self.block(s.body)

        self.scoped(body)

    def s_AttrStmt(self, s: S.AttrStmt, last: bool) -> None:
        items: list[tuple[str, Any]] = [(s.attr_key, s.value)]
        body = s.body
        while isinstance(body, S.AttrStmt) and body.node is s.node \
                and body.attr_key not in {k for k, _ in items}:
            items.append((body.attr_key, body.value))
            body = body.body
        text = "{" + ", ".join(f"{json.dumps(k)}: {self.value(v)}" for k, v in items) + "}"
        if s.node is not None:
            text += f", node={self.value(s.node)}"
        if last:
            self.line(f"T.attr({text})")
            self.stmt(body, last=True)
            return
        self.line(f"with T.attr({text}):")
        self.scoped(lambda: self.block(body))

    def s_AllocBuffer(self, s: S.AllocBuffer, last: bool) -> None:
        args = self.buffer_args(s.buffer, alloc=True)
        if s.annotations:
            args += f", annotations={self.raw(s.annotations)}"
        name = self.define_buffer(s.buffer)
        self.line(f"{name} = T.alloc_buffer({args})")

    def s_DeclBuffer(self, s: S.DeclBuffer, last: bool) -> None:
        args = self.buffer_args(s.buffer)
        data = s.buffer.data
        if id(data) in self.data_of or id(data) in self.names.of:
            args += f", data={self.expr(data)}"
        name = self.define_buffer(s.buffer)
        self.line(f"{name} = T.decl_buffer({args})")

    def s_ScopeIdDef(self, s: S.ScopeIdDef, last: bool) -> None:
        exts = ", ".join(self.expr(e) for e in s.extents)
        names = [self.names.define(v, v.name) for v in s.vars]
        args = f"[{exts}]" if s.extents else ""  # T.thread_id(): deferred
        self.line(f"{', '.join(names)} = T.{s.kind}({args})")

    def s_TilePrimitiveCall(self, s: S.TilePrimitiveCall, last: bool) -> None:
        if s.op.name == _COMPOSE_OP:
            self.compose_op(s)
            return
        self.line(self.tile_call(s))

    def compose_op(self, s: S.TilePrimitiveCall) -> None:
        """``with T.tile.compose_op(...):`` over the composed calls."""
        kws = self.tile_keywords(s)
        self.line(f"with T.{_SCOPE_PREFIX[s.scope]}.compose_op({', '.join(kws)}):")
        calls: list[S.Stmt] = [c for c in s.args if isinstance(c, S.Stmt)]
        self.scoped(lambda: self.block(S.SeqStmt(calls)))

    def tile_call(self, s: S.TilePrimitiveCall) -> str:
        op_name = s.op.name.removeprefix("tirx.tile.")
        args = [self.arg(a) for a in s.args]
        spec = s.op.get_attr("tile_spec")
        if spec is not None:
            keep: list[str] = []  # defaults that must be written (explicit_with), by keyword
            while args and len(args) <= len(spec.params):
                pname = spec.params[len(args) - 1]
                if pname not in spec.defaults:
                    break
                if args[-1] != self.arg(_const_arg(spec.defaults[pname])):
                    break
                guard = spec.explicit_with.get(pname, ("",))[0]
                if guard and s.args[spec.params.index(guard)] is not None:
                    keep.insert(0, f"{pname}={args[-1]}")
                args.pop()
            args += keep
        args += self.tile_keywords(s)
        return f"T.{_SCOPE_PREFIX[s.scope]}.{op_name}({', '.join(args)})"

    def tile_keywords(self, s: S.TilePrimitiveCall) -> list[str]:
        """``dispatch=``, ``workspace=``, ``config=`` of a tile call, where set."""
        kws = []
        if s.dispatch is not None:
            kws.append(f"dispatch={json.dumps(s.dispatch)}")
        if s.workspace:
            kws.append(f"workspace={self.raw(s.workspace)}")
        if s.config:
            kws.append(f"config={self.raw(s.config)}")
        return kws

    # -- values ---------------------------------------------------------------------------
    def value(self, v: Any) -> str:
        """An argument-like value: expressions, buffers, regions, layouts, Python values."""
        if isinstance(v, E.PrimExpr):
            return self.expr(v)
        return self.arg(v)

    def arg(self, a: Any) -> str:
        if isinstance(a, E.PrimExpr):
            return self.expr(a)
        if isinstance(a, Buffer):
            return self.buf_name(a)
        if isinstance(a, BufferRegion):
            return self.region(a)
        if isinstance(a, TileLayout):
            return self.layout(a)
        if isinstance(a, S.TilePrimitiveCall):
            return self.tile_call(a)
        if isinstance(a, list):
            return "[" + ", ".join(self.arg(x) for x in a) + "]"
        if isinstance(a, tuple):
            inner = ", ".join(self.arg(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, Node):
            ctor = getattr(type(a), "__script_ctor__", None)
            if ctor is None:
                raise TypeError(f"the printer cannot print a {type(a).__name__}")
            fields = ", ".join(f"{k}={self.raw(x)}" for k, x in a.fields())
            return f"T.{ctor}({fields})"
        return self.raw(a)

    def raw(self, v: Any) -> str:
        """A Python value stored as is (attributes, configs): int32 immediates keep their type
        (``T.int32(1)``) so that they do not read back as Python ints."""
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.raw(k)}: {self.raw(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(self.raw(x) for x in v) + "]"
        if isinstance(v, tuple):
            inner = ", ".join(self.raw(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, str):
            return json.dumps(v)
        if v is None or isinstance(v, bool):
            return repr(v)
        if isinstance(v, int):
            return repr(v)
        if isinstance(v, float):
            return _float_text(v)
        if isinstance(v, E.PrimExpr):
            return self.typed(v) if _plain(v) else self.expr(v)
        if isinstance(v, (Node, Buffer)):
            return self.arg(v)
        if type(v).__name__ == "DataType":
            return json.dumps(str(v))
        if type(v).__name__ == "Target" and hasattr(v, "export"):
            return f"T.target({self.raw(v.export())})"
        raise TypeError(f"the printer cannot print a {type(v).__name__} value ({v!r})")

    def buf_name(self, b: Buffer) -> str:
        return self.names.of.get(id(b), b.name)

    def region(self, r: BufferRegion) -> str:
        parts = []
        for rng in r.region:
            parts.append(self.range_text(rng))
        return f"{self.buf_name(r.buffer)}[{', '.join(parts)}]"

    def range_text(self, rng: Range) -> str:
        lo, ext = rng.min, rng.extent
        if isinstance(lo, E.IntImm) and lo.value == 0 and _plain(lo):
            return f"0:{self.expr(ext)}"
        if _plain(lo) and _plain(ext):
            return f"{lo.value}:{lo.value + ext.value}"
        return f"{self.expr(lo)}:{self.wrap(lo, _ADD)} + {self.wrap(ext, _ADD + 1)}"

    def layout(self, lay: Any) -> str:
        if not isinstance(lay, TileLayout):  # ComposeLayout, SwizzleLayout: their constructor
            return self.arg(lay)
        text = f"T.TileLayout({self.shard(lay.shard)}"
        if lay.replica:
            text += f", replica={self.shard(lay.replica)}"
        return text + ")"

    def shard(self, iters: list[Iter]) -> str:
        exts = [self.expr(it.extent) for it in iters]
        strides = []
        for it in iters:
            if it.axis.name == "m":
                strides.append(self.expr(it.stride))
            else:
                strides.append(f"{self.wrap(it.stride, _MUL)} @ {self.axis(it.axis)}")

        def tup(xs: list[str]) -> str:
            return f"({xs[0]},)" if len(xs) == 1 else f"({', '.join(xs)})"

        return f"T.S[{tup(exts)}:{tup(strides)}]"

    def axis(self, ax: Axis) -> str:
        if getattr(self.T, ax.name, None) is ax:
            return f"T.{ax.name}"
        return f"T.axis({json.dumps(ax.name)})"

    # -- expressions ----------------------------------------------------------------------
    def expr(self, e: Any) -> str:
        return self._e(e)[0]

    def wrap(self, e: Any, min_prec: int) -> str:
        text, prec = self._e(e)
        return f"({text})" if prec < min_prec else text

    def typed(self, e: Any) -> str:
        """A literal with its type spelled out, even where plain would do."""
        if isinstance(e, E.IntImm):
            return f"T.{e.dtype}({e.value})"
        return self.expr(e)

    def typed_for(self, e: Any, dtype: Any) -> str:
        """``e`` where the parser converts a Python literal to ``dtype``."""
        if _plain(e) and dtype != e.dtype:
            return self.typed(e)
        return self.expr(e)

    def _e(self, e: Any) -> tuple[str, int]:
        if not isinstance(e, E.PrimExpr):
            return self.arg(e), _ATOM
        method = getattr(self, f"e_{type(e).__name__}", None)
        if method is None:
            for cls in type(e).__mro__[1:]:
                method = getattr(self, f"e_{cls.__name__}", None)
                if method is not None:
                    break
        if method is None:
            raise TypeError(f"the printer cannot print a {type(e).__name__}")
        return method(e)

    def e_Var(self, v: E.Var) -> tuple[str, int]:
        name = self.names.of.get(id(v))
        if name is None:
            name = self.data_of.get(id(v), _identifier(v.name))
        return name, _ATOM

    def e_IntImm(self, e: E.IntImm) -> tuple[str, int]:
        if _plain(e):
            return str(e.value), (_UNARY if e.value < 0 else _ATOM)
        if e.dtype.is_bool:
            return f"T.bool({bool(e.value)})", _ATOM
        return f"T.{e.dtype}({e.value})", _ATOM

    def e_FloatImm(self, e: E.FloatImm) -> tuple[str, int]:
        return f"T.{e.dtype}({_float_text(e.value)})", _ATOM

    def e_StringImm(self, e: E.StringImm) -> tuple[str, int]:
        return json.dumps(e.value), _ATOM

    def e_Cast(self, e: E.Cast) -> tuple[str, int]:
        return f"T.Cast({json.dumps(str(e.dtype))}, {self.expr(e.value)})", _ATOM

    def left_text(self, e: E.BinaryOp, min_prec: int, force_typed: bool = False) -> str:
        # Two Python literals would fold while parsing: spell out the type of the left one.
        if _plain(e.a) and (force_typed or _plain(e.b)):
            return self.typed(e.a)
        return self.wrap(e.a, min_prec)

    def e_BinaryOp(self, e: E.BinaryOp) -> tuple[str, int]:
        cls = type(e)
        if cls in _FOLDED and ((_imm(e.a) and _imm(e.b)) or E._fold_identity(e) is not None):
            # ... and x + 0, x * 1 (x)
            # operators would fold two immediates (T.int32(3) + 4 is 7): name the node instead
            return f"T.{cls.__name__}({self.typed(e.a)}, {self.expr(e.b)})", _ATOM
        if cls in _INFIX:
            return self._infix_chain(e, cls)
        if cls in _CALL_BINOPS:
            return f"{_CALL_BINOPS[cls]}({self.left_text(e, 0)}, {self.expr(e.b)})", _ATOM
        if cls in _CMP_SYM:
            # `1 < x` would read back reflected (x > 1): a literal on the left is typed
            left = self.left_text(e, _CMP + 1, force_typed=True)
            return f"{left} {_CMP_SYM[cls]} {self.wrap(e.b, _CMP + 1)}", _CMP
        if cls is E.And:
            return f"{self.wrap(e.a, _AND)} and {self.wrap(e.b, _AND + 1)}", _AND
        if cls is E.Or:
            return f"{self.wrap(e.a, _OR)} or {self.wrap(e.b, _OR + 1)}", _OR
        raise TypeError(f"the printer cannot print a {cls.__name__}")

    def _infix_chain(self, e: E.BinaryOp, cls: type[E.BinaryOp]) -> tuple[str, int]:
        """``a + b + c + ...``: a left chain of one operator printed in a loop, not one
        recursion per term (flat sums of hundreds of terms)."""
        sym, prec = _INFIX[cls]
        chain = [e]
        while True:
            left = chain[-1].a
            if not (isinstance(left, E.BinaryOp) and type(left) is cls):
                break
            if cls in _FOLDED and _imm(left.a) and _imm(left.b):
                break  # printed as T.Add(...) by e_BinaryOp
            chain.append(left)
        parts = [self.left_text(chain[-1], prec)]
        parts += [f" {sym} {self.wrap(node.b, prec + 1)}" for node in reversed(chain)]
        return "".join(parts), prec

    def e_Not(self, e: E.Not) -> tuple[str, int]:
        return f"not {self.wrap(e.a, _NOT)}", _NOT

    def e_Select(self, e: E.Select) -> tuple[str, int]:
        return (f"T.Select({self.expr(e.condition)}, {self.expr(e.true_value)}, "
                f"{self.expr(e.false_value)})"), _ATOM

    def e_Ramp(self, e: E.Ramp) -> tuple[str, int]:
        return f"T.Ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})", _ATOM

    def e_Broadcast(self, e: E.Broadcast) -> tuple[str, int]:
        return f"T.Broadcast({self.expr(e.value)}, {e.lanes})", _ATOM

    def e_Let(self, e: E.Let) -> tuple[str, int]:
        value = self.expr(e.value)
        self.names.push()
        try:
            name = self.names.define(e.var, e.var.name)
            body = self.expr(e.body)
        finally:
            self.names.pop()
        return f"T.Let({name}, {value}, {body})", _ATOM

    def e_BufferLoad(self, e: E.BufferLoad) -> tuple[str, int]:
        idx = ", ".join(self.expr(i) for i in e.indices)
        name = self.buf_name(e.buffer)
        natural = E.BufferLoad(e.buffer, e.indices)
        if natural.dtype != e.dtype:
            return f"{name}.vload([{idx}], {json.dumps(str(e.dtype))})", _ATOM
        return f"{name}[{idx or '()'}]", _ATOM

    def e_Call(self, c: E.Call) -> tuple[str, int]:
        op = c.op
        kw_names = tuple(op.get_attr("script_kwargs") or ())
        npos = len(c.args) - len(kw_names) if len(c.args) >= len(kw_names) else len(c.args)
        if op.category is not OpCategory.TILE_PRIMITIVE:
            fn = _resolve(self.T, op.printer_name)
            lead = [str(c.dtype)] if _dtype_leads(op.get_attr("script_dtype"), c) else []
            if fn is not None and self._rebuilds(fn, c, npos, kw_names, lead):
                parts = [json.dumps(x) for x in lead] + [self.arg(a) for a in c.args[:npos]]
                parts += [f"{k}={self.arg(a)}" for k, a in zip(kw_names, c.args[npos:])]
                return f"T.{op.printer_name}({', '.join(parts)})", _ATOM
        parts = [json.dumps(str(c.dtype)), json.dumps(op.name)] + [self.arg(a) for a in c.args]
        return f"T.call_intrin({', '.join(parts)})", _ATOM

    def _rebuilds(self, fn: Any, c: E.Call, npos: int, kw_names: tuple[str, ...],
                  lead: list[str]) -> bool:
        pos = [*lead, *(_as_parsed(a) for a in c.args[:npos])]
        kws = {k: _as_parsed(a) for k, a in zip(kw_names, c.args[npos:])}
        try:
            rebuilt = fn(*pos, **kws)
        except Exception:  # the builder cannot take these arguments: print the exact form
            return False
        return isinstance(rebuilt, E.Call) and structural_equal(rebuilt, c)


# -- helpers ---------------------------------------------------------------------------------
_FOLDED = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)


def _imm(e: Any) -> bool:
    return isinstance(e, (E.IntImm, E.FloatImm))


def _plain(e: Any) -> TypeGuard[E.IntImm]:
    """An immediate printed as a bare Python literal (and so read back as a Python int)."""
    return (isinstance(e, E.IntImm) and e.dtype == "int32"
            and _INT32_MIN <= e.value <= _INT32_MAX)


def _dtype_leads(script_dtype: Any, c: E.Call) -> bool:
    """Whether ``c`` prints its result type as first argument (the op attribute ``script_dtype``:
    True for every call, or the operand counts of the calls that do)."""
    if isinstance(script_dtype, tuple):
        return len(c.args) in script_dtype
    return bool(script_dtype)


def _as_parsed(a: Any) -> Any:
    """What the parser passes to a builder for the printed form of ``a``."""
    if isinstance(a, E.StringImm):
        return a.value
    if _plain(a):
        return a.value
    if isinstance(a, list):
        return [_as_parsed(x) for x in a]
    return a


def _float_text(v: float) -> str:
    if math.isinf(v) or math.isnan(v):
        return json.dumps(repr(v))
    return repr(float(v))


def _resolve(root: Any, path: str) -> Any:
    obj = root
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # not reachable from T: fall back to T.call_intrin
            return None
    return obj if callable(obj) else None


def _gridable(f: S.For) -> bool:
    return (f.kind is S.ForKind.SERIAL and not f.annotations and not f.thread_tag
            and isinstance(f.min, E.IntImm) and f.min.value == 0)


def _uses_any(e: Any, loops: list[S.For]) -> bool:
    ids = {id(f.loop_var) for f in loops}
    found = []

    class _V(Visitor):
        def visit_Var(self, v: E.Var) -> None:
            if id(v) in ids:
                found.append(v)

    _V().visit(e)
    return bool(found)
