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
  ``A = T.alloc_buffer(...)``, ``A = T.decl_buffer(..., data=B.data)``; a ``local``
  one-element buffer used only by element as ``x: T.int32`` (``x: T.int32 = v`` with its first
  store), the seed's mutable scalar, its accesses ``x[0]``;
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

This module prints modules, functions, buffers and statements; ``printer_expr`` holds the
layer below (arguments, values and expressions) and ``printer_names`` the scoped names and the
used/defined variables of a subtree.
"""

from __future__ import annotations

import json
from typing import Any

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.depth import recursion_guard
from ..ir.function import IRModule, PrimFunc
from ..ir.visitor import Visitor
from .printer_expr import _ADD, _SCOPE_PREFIX, _ExprPrinter, _plain
from .printer_names import _free_vars, _identifier, _uses
from .tirx import HINT as _HINT
from .tirx import PARAM_TYPES, PERSISTENT_KERNEL

__all__ = ["to_script"]

_LOOP_FUNC = {S.ForKind.PARALLEL: "T.parallel", S.ForKind.VECTORIZED: "T.vectorized",
              S.ForKind.UNROLLED: "T.unroll", S.ForKind.THREAD_BINDING: "T.thread_binding",
              S.ForKind.SERIAL: "T.serial"}
_COMPOSE_OP = "tirx.tile.compose_op"
#: an SBlock iteration axis's T.axis kind, by the seed's IterVar type number
_AXIS_KINDS = {0: "spatial", 2: "reduce", 3: "scan", 4: "opaque"}


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


# -- the printer ------------------------------------------------------------------------------
class _Printer(_ExprPrinter):
    """Modules, functions, buffers and statements, over the expression layer."""

    def __init__(self) -> None:
        super().__init__()
        self.out: list[str] = []
        self.indent = 0

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
        flags = ["private=True"] if private else []
        if attrs.get(PERSISTENT_KERNEL) is True:
            del attrs[PERSISTENT_KERNEL]
            flags.append("persistent=True")
        head = [f"@T.prim_func({', '.join(flags)})" if flags else "@T.prim_func",
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
        """A scalar or handle parameter's annotation: ``T.int32``, ``T.handle``,
        ``T.TensorMap()`` (the seed's printed spelling; ``T.TensorMap`` parses the same)."""
        if p.dtype.is_handle and p.ptr_scope is not None:
            special = PARAM_TYPES.get(p.ptr_scope)
            if special is not None:
                return f"{special!r}()"
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

    def buffer_args(self, buf: Buffer, *, alloc: bool = False, default_scope: str = "global") -> str:
        shape = self.tuple_text(buf.shape)
        parts = [shape, json.dumps(str(buf.dtype))]
        if buf.scope != default_scope:
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
        k = 0
        while k < n:
            c = s.seq[k]
            if isinstance(c, S.AllocBuffer) and _scalar_alloc(c):
                k += self.scalar_decl(c, s.seq[k + 1:])
                continue
            self.stmt(c, last and k == n - 1)
            k += 1

    def scalar_decl(self, alloc: S.AllocBuffer, rest: list[S.Stmt]) -> int:
        """A local one-element buffer whose later uses are all element accesses, as the seed
        writes it: ``x: T.int32``, or ``x: T.int32 = v`` with the store right after it (the
        parser reads both back as the buffer; a value form is a let unless later statements
        index ``x``, so the store is merged only where they do). Returns the statements
        printed (1 or 2); an allocation used otherwise prints as ``T.alloc_local``."""
        buf = alloc.buffer
        uses = _ElementUses(buf)
        uses.visit(rest)
        if uses.other:
            self.s_AllocBuffer(alloc, last=False)
            return 1
        first = rest[0] if rest else None
        init = (isinstance(first, S.BufferStore) and first.buffer is buf
                and all(isinstance(i, E.IntImm) and i.value == 0 for i in first.indices))
        if init:
            assert isinstance(first, S.BufferStore)
            after = _ElementUses(buf)
            after.visit(rest[1:])
            value_uses = _ElementUses(buf)
            value_uses.visit(first.value)
            init = after.element and not value_uses.element
        name = self.define_buffer(buf)
        if init:
            assert isinstance(first, S.BufferStore)
            self.line(f"{name}: {self.dtype_ctor(buf.dtype)} = "
                      f"{self.typed_for(first.value, buf.dtype)}")
            return 2
        self.line(f"{name}: {self.dtype_ctor(buf.dtype)}")
        return 1

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
        annotations = dict(s.annotations)
        if s.kind is S.ForKind.SERIAL:  # T.serial(n, unroll=...): the seed's spelling
            on, off = annotations.get("pragma_unroll") is True, annotations.get("disable_unroll") is True
            if on != off:
                del annotations["pragma_unroll" if on else "disable_unroll"]
                args.append(f"unroll={on}")
        if annotations:
            args.append(f"annotations={self.raw(annotations)}")
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

    def s_Bind(self, s: S.Bind, last: bool) -> None:
        """A Bind outside a function (a PrimFunc folds its Binds into lets): the let line."""
        name = self.names.define(s.var, s.var.name)
        self.line(f"{name}: {self.let_type(s.var)} = {self.typed_for(s.value, s.var.dtype)}")

    def s_AttrStmt(self, s: S.AttrStmt, last: bool) -> None:
        if s.attr_key == _HINT and isinstance(s.node, dict):
            message = [json.dumps(str(s.node["message"]))] if "message" in s.node else []
            args = ", ".join([*message, *(f"{k}={self.value(v)}" for k, v in s.node.items()
                                          if k != "message")])
            if last:
                self.line(f"T.hint({args})")
                self.stmt(s.body, last=True)
            else:
                self.line(f"with T.hint({args}):")
                self.scoped(lambda: self.block(s.body))
            return
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
        ann = dict(s.annotations)
        addr = ann.pop(S.ALLOCATED_ADDR, None)
        # a register buffer is written T.alloc_local(...), as the seed prints it
        local = (s.buffer.scope == "local" and addr is None
                 and not (s.buffer.axis_separators or s.buffer.offset_factor))
        args = self.buffer_args(s.buffer, alloc=True, default_scope="local" if local else "global")
        if ann:
            args += f", annotations={self.raw(ann)}"
        if addr is not None:
            args += f", allocated_addr={self.raw(list(addr))}"
        name = self.define_buffer(s.buffer)
        self.line(f"{name} = T.{'alloc_local' if local else 'alloc_buffer'}({args})")

    def s_DeclBuffer(self, s: S.DeclBuffer, last: bool) -> None:
        args = self.buffer_args(s.buffer)
        data = s.buffer.data
        if id(data) in self.data_of or id(data) in self.names.of:
            args += f", data={self.expr(data)}"
        name = self.define_buffer(s.buffer)
        self.line(f"{name} = T.decl_buffer({args})")
        if s.body is not None:  # the seed's nested form: the declaration over its body
            self.stmt(s.body, last)

    def s_SBlockRealize(self, s: S.SBlockRealize, last: bool) -> None:
        self.sblock(s.block, s.iter_values, s.predicate)

    def s_SBlock(self, s: S.SBlock, last: bool) -> None:
        self.sblock(s, None, None)

    def sblock(self, b: S.SBlock, values: list[Any] | None, predicate: Any) -> None:
        """The seed's ``with T.sblock(name):`` form (it does not parse back: blocks are built in
        Python only here)."""
        self.line(f"with T.sblock({json.dumps(b.name_hint)}):")

        def body() -> None:
            self.indent += 1
            for k, iv in enumerate(b.iter_vars):
                name = self.names.define(iv.var, iv.var.name)
                assert iv.dom is not None  # SBlock() requires every axis's domain
                dom = ", ".join(self.range_args(iv.dom.min, iv.dom.extent))
                bound = "" if values is None else f", {self.expr(values[k])}"
                self.line(f"{name} = T.axis.{_AXIS_KINDS.get(iv.iter_type, 'opaque')}"
                          f"({dom}{bound})")
            if predicate is not None and not (isinstance(predicate, E.IntImm) and predicate.value):
                self.line(f"T.where({self.expr(predicate)})")
            self.line(f"T.reads({', '.join(self.region(r) for r in b.reads)})")
            self.line(f"T.writes({', '.join(self.region(r) for r in b.writes)})")
            for buf in b.alloc_buffers:
                self.line(f"{self.define_buffer(buf)} = T.alloc_buffer({self.buffer_args(buf)})")
            if b.init is not None:
                self.line("with T.init():")
                self.scoped(lambda: self.block(b.init))
            self.stmt(b.body, last=True)
            self.indent -= 1

        self.scoped(body)

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


# -- helpers ---------------------------------------------------------------------------------
def _scalar_alloc(s: S.AllocBuffer) -> bool:
    """An allocation the printer may write as ``x: T.int32``: one value in ``local`` memory,
    with nothing else to say about it (no layout, strides, annotations, alignment)."""
    b = s.buffer
    return (b.scope == "local" and len(b.shape) == 1 and isinstance(b.shape[0], E.IntImm)
            and b.shape[0].value == 1 and b.layout is None and not b.strides
            and not s.annotations and not b.align and not b.axis_separators
            and not b.offset_factor and b.dtype.lanes == 1 and not b.dtype.is_handle)


class _ElementUses(Visitor):
    """How statements use ``buf``: ``element`` if they load or store its elements, ``other``
    if they use it otherwise (a region, a tile operand, its data pointer)."""

    def __init__(self, buf: Buffer) -> None:
        self.buf = buf
        self.element = False
        self.other = False

    def visit_BufferLoad(self, e: E.BufferLoad) -> None:
        if e.buffer is self.buf:
            self.element = True
            self.visit(e.indices)
        else:
            self.generic_visit(e)

    def visit_BufferStore(self, st: S.BufferStore) -> None:
        if st.buffer is self.buf:
            self.element = True
            self.visit(st.value)
            self.visit(st.indices)
        else:
            self.generic_visit(st)

    def visit_Buffer(self, b: Buffer) -> None:
        if b is self.buf:
            self.other = True
        else:
            self.generic_visit(b)

    def visit_Var(self, v: E.Var) -> None:
        if v is self.buf.data:
            self.other = True


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
