"""The statement half of the parser: each Python statement to IR (``_s_<node>``), with
assignments that define buffers, lets, kernel ids and scalar cells."""


from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import Any

from ...error import DiagnosticError
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.buffer import Buffer, BufferRegion
from ...ir.dtype import DataType
from ...tirx.operator.tile_primitive.ops import make_compose_op
from .. import tirx as _T
from ..tirx import tile as _tile
from ..tirx._buffers import META_CLASS, owned_buffers
from ._support import (
    _BINOPS,
    _UNSUPPORTED,
    ParserBase,
    ScalarCell,
    _attr_chain,
    _check_extent,
    _extent,
    _is_with_builder,
    _loop_dtype,
    _LoopHead,
    _Stop,
    _thread_loop,
    _unsupported,
    stored_value,
)


def _used_as_cell(name: str, stmts: list[ast.stmt]) -> bool:
    """Whether ``stmts`` (at any depth) use ``name`` as memory: assign it (``name = ...``,
    ``name += ...``), index it (``name[0]``), take its buffer (``name.buffer``, ``.data``,
    ``.source``) or its address (``T.address_of(name)``)."""
    for stmt in stmts:
        for n in ast.walk(stmt):
            targets = (n.targets if isinstance(n, ast.Assign)
                       else [n.target] if isinstance(n, ast.AugAssign) else [])
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) \
                    and n.value.id == name:
                return True
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                    and n.value.id == name and n.attr in ScalarCell.BUFFER_ATTRS:
                return True
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr == "address_of" and n.args
                    and isinstance(n.args[0], ast.Name) and n.args[0].id == name):
                return True
    return False


class StmtParser(ParserBase):
    """Parses statements (``_s_<node>``) for :class:`~tvm.script.parser.Parser`."""

    # -- statements -------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], bindings: dict[str, Any] | None = None) -> S.Stmt:
        self.scopes.append(dict(bindings or {}))
        try:
            return self.stmts(stmts, 0)
        finally:
            self.scopes.pop()

    def stmts(self, stmts: list[ast.stmt], start: int) -> S.Stmt:
        out: list[S.Stmt] = []
        for i in range(start, len(stmts)):
            node = stmts[i]
            method = getattr(self, f"_s_{type(node).__name__}", None)
            if method is None:
                what = _UNSUPPORTED.get(type(node).__name__, f"`{type(node).__name__}` statements")
                raise self.err(node, _unsupported(what))
            try:
                got = method(node, stmts, i)
            except _Stop as stop:
                out.append(self._mark(stop.args[0], node))
                break
            except DiagnosticError:
                raise
            except Exception as exc:
                raise self._wrap(node, exc) from None
            if got is not None:
                out.append(self._mark(got, node))
        return S.seq(out) if out else S.SeqStmt([])

    def _mark(self, stmt: S.Stmt, node: ast.AST) -> S.Stmt:
        """Record where ``stmt`` was written (inner statements keep their own place)."""
        if stmt.span is None and not isinstance(stmt, S.SeqStmt):
            stmt.span = self.src.span(node)
            if isinstance(stmt, (S.AllocBuffer, S.DeclBuffer)) and stmt.buffer.span is None:
                stmt.buffer.span = stmt.span
        return stmt

    def _rest(self, stmts: list[ast.stmt], i: int, build: Callable[[S.Stmt], S.Stmt]) -> None:
        """Parse the statements after ``i`` as the body of ``build``; ends the block."""
        raise _Stop(build(self.stmts(stmts, i + 1)))

    def _s_Pass(self, node: ast.Pass, stmts: list[ast.stmt], i: int) -> None:
        return None

    def _s_Break(self, node: ast.Break, stmts: list[ast.stmt], i: int) -> S.Stmt:
        if not self.loop_depth:
            raise self.err(node, "`break` outside a loop")
        return S.Evaluate(_T.break_loop())

    def _s_Continue(self, node: ast.Continue, stmts: list[ast.stmt], i: int) -> S.Stmt:
        if not self.loop_depth:
            raise self.err(node, "`continue` outside a loop")
        return S.Evaluate(_T.continue_loop())

    def _s_Expr(self, node: ast.Expr, stmts: list[ast.stmt], i: int) -> S.Stmt | None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # docstrings and string comments
        if isinstance(node.value, ast.Constant) and node.value.value is Ellipsis:
            return None
        value = self.eval(node.value)
        if isinstance(value, S.Stmt):
            return value
        if isinstance(value, _T.AttrSpec):
            items, spec_node = value.items, value.node
            self._rest(stmts, i, lambda body: _attr_chain(items, spec_node, body))
        if isinstance(value, _T.FuncAttrSpec):
            if stmts is not self.top_block:
                raise self.err(node, "T.func_attr belongs in the function's top-level block")
            self.func_attrs.update(value.items)
            return None
        if isinstance(value, (E.PrimExpr, int, float)) and not isinstance(value, bool):
            return S.Evaluate(value)
        if isinstance(value, _T.ScopeIdSpec):
            # the seed's bare `T.cta_id([1])`: the ids exist (they shape the launch), unnamed
            names = [value.kind] if len(value.extents or [0]) == 1 else \
                [f"{value.kind}_{axis}" for axis in "xyz"[: len(value.extents or [])]]
            return self._scope_ids(value, names, bind=False)
        if isinstance(value, _T.LaunchThreadSpec):
            # the seed's bare `T.launch_thread("threadIdx.x", n)`: the axis over the rest of the
            # block, its index unnamed in the script (the IR names it after the axis)
            var = self._thread_var(_axis_name(value), value, node)
            self._rest(stmts, i, lambda body: _thread_loop(var, value, body))
        if isinstance(value, _T.BufferSpec) and value.kind == "match" and \
                isinstance(getattr(value, "handle", None), E.Var):
            # the seed's bare `T.match_buffer(A_ptr, ...)`: the parameter's buffer, unnamed in
            # the script (named after the parameter)
            name = ast.Name(id=f"{value.handle.name}_buffer", ctx=ast.Store())
            return self._buffer_def(node, name, value)  # type: ignore[arg-type]
        if isinstance(value, (_T.BufferSpec, _T.VarDecl)):
            raise self.err(node, "assign this to a name, e.g. `x = ...`")
        raise self.err(node, f"this expression statement builds no IR (it evaluates to "
                             f"{type(value).__name__}); expected a call such as T.evaluate(...)")

    def _s_Assert(self, node: ast.Assert, stmts: list[ast.stmt], i: int) -> S.Stmt:
        cond = self._operand(node.test)
        msg = self.eval(node.msg) if node.msg is not None else ""
        return S.AssertStmt(cond, msg)

    def _s_Return(self, node: ast.Return, stmts: list[ast.stmt], i: int) -> None:
        if node.value is None and stmts is self.top_block and i == len(stmts) - 1:
            return None
        what = "`return` with a value" if node.value is not None else "`return` before the end"
        raise self.err(node, _unsupported(what))

    def _s_While(self, node: ast.While, stmts: list[ast.stmt], i: int) -> S.Stmt:
        if node.orelse:
            raise self.err(node, _unsupported("`while ... else`"))
        cond = self._operand(node.test)
        if not isinstance(cond, E.PrimExpr) or not cond.dtype.is_bool:
            what = cond.dtype if isinstance(cond, E.PrimExpr) else type(cond).__name__
            raise self.err(node.test, f"a while loop's condition must be a bool expression, got "
                                      f"{what}; compare it, e.g. `while n[0] != 0:`")
        self.loop_depth += 1
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
        return S.While(cond, body)

    def _s_With(self, node: ast.With, stmts: list[ast.stmt], i: int) -> S.Stmt:
        what = ("`with` statements other than `with T.attr({...}):`, `with T.let(v) as x:`, "
                "`with T.launch_thread(axis, n) [as x]:`, `with Tx.compose_op(...):` and "
                "scope builders (classes with __tvm_scope__, e.g. WarpRole)")
        if len(node.items) != 1:
            raise self.err(node, _unsupported(what))
        item = node.items[0]
        expr = item.context_expr
        # Decide from the callee alone: a foreign context manager is never entered or called.
        if not (isinstance(expr, ast.Call) and _is_with_builder(self.eval(expr.func))):
            raise self.err(expr, _unsupported(what))
        ctx = self.eval(expr)
        if hasattr(type(ctx), "__tvm_scope__") and item.optional_vars is None:
            return ctx.__tvm_scope__(self.block(node.body))  # type: ignore[no-any-return]
        if isinstance(ctx, _T.LaunchThreadSpec) and item.optional_vars is None:
            var = self._thread_var(_axis_name(ctx), ctx, expr)
            return _thread_loop(var, ctx, self.block(node.body))
        if isinstance(ctx, _tile.ComposeOpSpec) and item.optional_vars is None:
            return self._compose_op(ctx, node)
        if isinstance(ctx, _T.AttrSpec) and item.optional_vars is None:
            return _attr_chain(ctx.items, ctx.node, self.block(node.body))
        if isinstance(ctx, _T.LaunchThreadSpec) and isinstance(item.optional_vars, ast.Name):
            var = self._thread_var(item.optional_vars.id, ctx, expr)
            return _thread_loop(var, ctx, self.block(node.body, {var.name: var}))
        if isinstance(ctx, _T.LetSpec) and isinstance(item.optional_vars, ast.Name):
            value = E.convert(ctx.value, ctx.dtype)
            var = E.Var(item.optional_vars.id, ctx.dtype or value.dtype)
            return S.LetStmt(var, value, self.block(node.body, {var.name: var}))
        raise self.err(item.context_expr, _unsupported(what))

    def _compose_op(self, ctx: Any, node: ast.With) -> S.Stmt:
        body = self.block(node.body)
        calls = list(body.seq) if isinstance(body, S.SeqStmt) else [body]
        calls = [c for c in calls if not (isinstance(c, S.Evaluate) and isinstance(c.value, E.IntImm))]
        for c, stmt_node in zip(calls, node.body):
            if not isinstance(c, S.TilePrimitiveCall):
                raise self.err(stmt_node, "the block of `with Tx.compose_op(...)` may hold only "
                                          f"tile primitive calls (Tx.<op>(...)), not a "
                                          f"{type(c).__name__}")
        return make_compose_op(calls, scope=ctx.scope, dispatch=ctx.dispatch,
                               workspace=ctx.workspace, config=ctx.config)

    def _s_If(self, node: ast.If, stmts: list[ast.stmt], i: int) -> S.Stmt | None:
        cond = self._operand(node.test)
        if not isinstance(cond, E.PrimExpr):  # a Python value: choose the branch now
            chosen = node.body if cond else node.orelse
            return self.block(chosen) if chosen else None
        if cond.dtype.lanes == 1 and cond.dtype.is_integer:
            # `if T.ptx.elect_sync():` (a uint32): an integer is true when non-zero, as in Python
            # and C. (A while loop's condition must still be a comparison: docs/decisions.md.)
            cond = E.NE(cond, E.const(0, cond.dtype))
        then = self.block(node.body)
        other = self.block(node.orelse) if node.orelse else None
        return S.IfThenElse(cond, then, other)

    def _s_For(self, node: ast.For, stmts: list[ast.stmt], i: int) -> S.Stmt:
        if node.orelse:
            raise self.err(node, _unsupported("`for ... else`"))
        it = node.iter
        func = self.eval(it.func) if isinstance(it, ast.Call) else None
        if func is builtins.range:
            args = [self.eval(a) for a in it.args]  # type: ignore[attr-defined]
            if not 1 <= len(args) <= 2 or it.keywords:  # type: ignore[attr-defined]
                raise self.err(it, "range() in a script takes (extent) or (start, stop)")
            spec: Any = _T.serial(*args)
        else:
            spec = self.eval(it)
        names = self._target_names(node.target)
        packed: str | None = None  # `for ij in T.grid(4, 8)`: ij is the tuple of the loop vars
        if isinstance(spec, _T.GridSpec):
            if len(names) == 1 and len(spec.extents) > 1:
                packed = names[0]
                names = [f"{packed}_{k}" for k in range(len(spec.extents))]
            if len(names) != len(spec.extents):
                raise self.err(node.target, f"T.grid has {len(spec.extents)} extents but "
                                            f"{len(names)} loop variables")
            loops: list[_LoopHead] = [self._grid_head(it, n, e) for n, e in zip(names, spec.extents)]
        elif isinstance(spec, _T.LoopSpec):
            if len(names) != 1:
                raise self.err(node.target, "this loop defines one variable")
            if isinstance(it, ast.Call) and len(it.args) == 2:
                ext = self._extent(it.args[0], spec.start, it.args[1])
            else:
                ext = _extent(spec.start, spec.stop)
            loops = [(names[0], spec.start, _check_extent(self, it, ext), spec.kind, spec.thread,
                      spec.annotations)]
        else:
            raise self.err(it, "a script `for` loops over T.serial, T.parallel, T.vectorized, "
                               "T.unroll, T.grid, T.thread_binding or range")
        loop_vars = []
        for name, start, ext, _kind, _thread, _ann in loops:
            dt = _loop_dtype(start, ext)
            loop_vars.append(E.Var(name, dt))
        scope: dict[str, Any] = {v.name: v for v in loop_vars}
        if packed is not None:
            scope = {packed: tuple(loop_vars)}
        self.loop_depth += 1
        try:
            body = self.block(node.body, scope)
        finally:
            self.loop_depth -= 1
        for var, (_n, start, ext, kind, thread, ann) in reversed(list(zip(loop_vars, loops))):
            body = S.For(var, start, ext, kind, body, thread_tag=thread, annotations=ann)
        return body

    def _grid_head(self, it: ast.expr, name: str, extent: Any) -> _LoopHead:
        """One loop of ``T.grid``: an extent ``n`` runs from 0, a pair ``(start, stop)`` from
        start (as in the seed)."""
        if isinstance(extent, (tuple, list)):
            if len(extent) != 2:
                raise self.err(it, f"a T.grid range is (start, stop), got {len(extent)} values")
            start, stop = extent
            return (name, start, _check_extent(self, it, _extent(start, stop)), S.ForKind.SERIAL,
                    None, {})
        return (name, 0, _check_extent(self, it, extent), S.ForKind.SERIAL, None, {})

    def _target_names(self, target: ast.expr) -> list[str]:
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            return [e.id for e in target.elts]  # type: ignore[attr-defined]
        raise self.err(target, "expected a name or a tuple of names here")

    def _s_AugAssign(self, node: ast.AugAssign, stmts: list[ast.stmt], i: int) -> S.Stmt | None:
        target = node.target
        cell = self._cell(target.id) if isinstance(target, ast.Name) else None
        if isinstance(target, ast.Attribute):
            obj, cell = self._attribute_cell(target)
            if cell is None:  # a Python attribute: updated as Python does
                value = _BINOPS[type(node.op)](getattr(obj, target.attr), self.eval(node.value))
                return self._attribute_assign(target, value, node.value)
        if cell is not None:  # x += v of a T.local_scalar: a store into it
            return cell.store(_BINOPS[type(node.op)](cell.load(), self._operand(node.value)))
        if not (isinstance(target, ast.Subscript)
                and isinstance(self._subscripted(target.value), Buffer)):
            raise self.err(node, "only buffer elements can be updated in place (A[i] += v); "
                                 "script variables are immutable")
        load = self.eval(target)
        if not isinstance(load, E.BufferLoad):
            raise self._region_error(load, target)
        value = _BINOPS[type(node.op)](load, self.eval(node.value))
        return S.BufferStore(load.buffer, stored_value(load.buffer, value), load.indices)

    def _s_AnnAssign(self, node: ast.AnnAssign, stmts: list[ast.stmt], i: int) -> S.Stmt | None:
        if not isinstance(node.target, ast.Name):
            raise self.err(node.target, "an annotated assignment defines one name")
        local = self._local_annotation(node)
        if local is not None:  # v: T.float32[8]
            buf = local.make(node.target.id)
            self.bind(node.target.id, buf)
            return S.AllocBuffer(buf, local.annotations)
        ann = self.eval(node.annotation)
        if ann is _T.let or isinstance(ann, _T.LetType):  # x: T.let = v, x: T.let[T.int32] = v
            if node.value is None:
                raise self.err(node, "`x: T.let = value` needs a value")
            if isinstance(ann, _T.LetType) and ann.handle is not None:
                ann = ann.handle
            else:
                dt = DataType(ann.dtype) if isinstance(ann, _T.LetType) else None
                return self._let(node.target.id, self._operand(node.value), dt, stmts, i)
        if isinstance(ann, _T.HandleVar):  # m: T.handle("tensormap") = v: a typed handle let
            if node.value is None:
                raise self.err(node, f"`{node.target.id}: T.handle(...)` needs a value")
            var = E.Var(node.target.id, "handle", ptr_dtype=ann.ptr_dtype,
                        ptr_scope=ann.ptr_scope)
            return self._let(node.target.id, self.eval(node.value), None, stmts, i, var=var)
        if not isinstance(ann, _T.ScalarType):
            raise self.err(node.annotation, "annotate a script variable with a scalar type, "
                                            "e.g. `x: T.int32 = ...`")
        dtype = DataType(str(ann))
        name = node.target.id
        if node.value is None:
            if dtype.is_handle:  # `p: T.handle`: a handle variable
                self.bind(name, E.Var(name, dtype))
                return None
            # `x: T.int32`: the seed's mutable scalar, a local value in memory (assigned with
            # `x = v`, filled through T.address_of(x), ...)
            spec = _T.alloc_local((1,), str(dtype))
            return self._scalar_def(node, spec.make(name), spec)
        value = self._operand(node.value)
        if dtype.is_handle and not (isinstance(value, E.PrimExpr) and value.dtype.is_handle):
            got = value.dtype if isinstance(value, E.PrimExpr) else type(value).__name__
            raise self.err(node.value, f"`{name}: T.handle = ...` binds a pointer, but "
                                       f"the value has type {got}; give a handle (a buffer's "
                                       f".data or .ptr_to([...])), or write "
                                       f"T.reinterpret(\"handle\", v) to reinterpret an integer")
        if not dtype.is_handle and _used_as_cell(name, stmts[i + 1:]):
            # `x: T.int32 = 0` later assigned (`x = x + 1`, in a loop too) or indexed: the
            # seed's mutable scalar, the value stored in a local one-element buffer
            spec = _T.alloc_local((1,), str(dtype))
            spec.init = value
            return self._scalar_def(node, spec.make(name), spec)
        return self._let(name, value, dtype, stmts, i)

    def _local_annotation(self, node: ast.AnnAssign) -> _T.BufferSpec | None:
        """``v: T.float32[8]`` / ``m: T.f16[4, 8]``: the seed's annotation spelling of
        ``T.alloc_local``; None for any other annotation."""
        ann = node.annotation
        if not isinstance(ann, ast.Subscript):
            return None
        dtype = self.eval(ann.value)
        if not isinstance(dtype, _T.ScalarType):
            return None
        if node.value is not None:
            raise self.err(node.value, "`v: T.float32[n]` allocates a local buffer and takes "
                                       "no value; fill it with statements")
        return _T.alloc_local(self.eval(ann.slice), str(dtype))

    def _let(self, name: str, value: Any, dtype: DataType | None, stmts: list[ast.stmt],
             i: int, var: E.Var | None = None) -> S.Stmt:
        value = E.convert(value, dtype)
        if var is None:
            var = E.Var(name, dtype or value.dtype)
        self.bind(name, var)
        self._rest(stmts, i, lambda body: S.LetStmt(var, value, body))
        raise AssertionError("unreachable")

    def _s_Assign(self, node: ast.Assign, stmts: list[ast.stmt], i: int) -> S.Stmt | None:
        if len(node.targets) != 1:
            raise self.err(node, _unsupported("chained assignment (a = b = ...)"))
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return self._store(target, node.value)
        value = self.eval(node.value)
        if isinstance(value, _T.ScopeIdSpec):
            names = self._target_names(target)
            if value.extents is None and len(names) != 1:
                raise self.err(target, f"T.{value.kind}() without extents defines one index, "
                                       f"but {len(names)} names are assigned; give the extents "
                                       f"(T.{value.kind}([...]))")
            if value.extents is not None and len(names) != len(value.extents):
                raise self.err(target, f"T.{value.kind} has {len(value.extents)} extent(s) but "
                                       f"{len(names)} name(s) are assigned")
            return self._scope_ids(value, names)
        if isinstance(value, _T.BufferSpec):
            return self._buffer_def(node, target, value)
        if isinstance(value, Buffer) and getattr(value, "declare_in_script", False):
            return self._view_def(target, value)  # B = A.view(...) / A.local() / A.permute(...)
        if isinstance(value, _T.LaunchThreadSpec):  # bx = T.launch_thread("blockIdx.x", n)
            if not isinstance(target, ast.Name):
                raise self.err(target, "T.launch_thread defines one thread index")
            var = self._thread_var(target.id, value, node.value)
            self.bind(target.id, var)
            self._rest(stmts, i, lambda body: _thread_loop(var, value, body))
        if isinstance(target, ast.Attribute):
            return self._attribute_assign(target, value, node.value)
        if not isinstance(target, ast.Name):
            if isinstance(value, _T.MetaVar):
                value = value.value
            self._bind_tuple(target, value)
            return None
        name = target.id
        if isinstance(value, BufferRegion) and self._cell(name) is not None:
            raise self._region_error(value, node.value)  # x = A[i] of a 2-d A, x a scalar
        if isinstance(value, _T.VarDecl):
            cls = E.SizeVar if value.is_size_var else E.Var
            self.bind(name, cls(value.name or name, value.dtype))
            return None
        if isinstance(value, _T.MetaVar):
            self.bind(name, value.value)
            return None
        if isinstance(value, _T.HandleVar):  # p = T.handle("float16", "shared")
            self.bind(name, E.Var(name, value.dtype, ptr_dtype=value.ptr_dtype,
                                  ptr_scope=value.ptr_scope))
            return None
        if isinstance(value, (E.PrimExpr, bool, int, float)):
            cell = self._cell(name)
            if cell is not None:  # x = v of a T.local_scalar: a store into it
                return cell.store(value)
            current = self._bound(name)
            if isinstance(current, Buffer) and len(current.shape) == 1 \
                    and isinstance(current.shape[0], E.IntImm) and current.shape[0].value == 1:
                # F = v of a one-element buffer: a store into F[0], as in the seed
                return ScalarCell(current).store(value)
            return self._let(name, value, None, stmts, i)
        if getattr(type(value), META_CLASS, False):  # first = Holder(x): its buffers, here
            self.bind(name, value)
            return self._meta_instance(node, name, value)
        self.bind(name, value)  # a Python value (layout, region, tuple...): bound as is
        bind_hook = getattr(type(value), "__tvm_script_bind__", None)
        if bind_hook is not None:
            # a script helper (a pipeline, a shared-memory pool): it learns its name and gives
            # the statements that set it up (allocations, initialisation), or None
            return bind_hook(value, name)
        return None

    def _attribute_cell(self, target: ast.Attribute) -> tuple[Any, ScalarCell | None]:
        """The object ``obj`` of ``obj.attr`` and, when ``obj.attr`` holds a scalar (a cell, or
        the value of one passed into a helper's object: ``State(counter)``), that cell."""
        obj = self.eval(target.value)
        current = getattr(obj, target.attr, None)
        if isinstance(current, ScalarCell):
            return obj, current
        if isinstance(current, E.BufferLoad) and id(current.buffer) in self._cell_buffers:
            return obj, ScalarCell(current.buffer)
        return obj, None

    def _attribute_assign(self, target: ast.Attribute, value: Any,
                          value_node: ast.expr) -> S.Stmt | None:
        """``obj.attr = v`` (in a ``T.inline`` method: ``self.count = self.count + 1``): a store
        when ``obj.attr`` is a scalar, as in the seed; otherwise the Python attribute is set
        (a meta-level value, such as a tile scheduler's current index)."""
        obj, cell = self._attribute_cell(target)
        if cell is not None:
            if isinstance(value, BufferRegion):
                raise self._region_error(value, value_node)
            return cell.store(value)
        if isinstance(value, _T.MetaVar):
            value = value.value
        try:
            setattr(obj, target.attr, value)
        except (AttributeError, TypeError) as exc:
            raise self.err(target, f"cannot set {ast.unparse(target)}: {exc}") from None
        return None

    def _thread_var(self, name: str, spec: _T.LaunchThreadSpec, node: ast.AST) -> E.Var:
        ext = _check_extent(self, node, spec.extent)
        return E.Var(name, _loop_dtype(0, E.convert(ext)))

    def _scope_ids(self, spec: _T.ScopeIdSpec, names: list[str], *,
                   bind: bool = True) -> S.ScopeIdDef:
        # the extents as the IR holds them: a literal past int32 is an int64 immediate
        dt = _loop_dtype(0, E.convert(spec.extents[0])) if spec.extents else DataType("int32")
        vs = [E.Var(n, dt) for n in names]
        for v in vs if bind else ():
            self.bind(v.name, v)
        return S.ScopeIdDef(spec.kind, vs, spec.extents)  # None: deferred (T.thread_id())

    def _bind_tuple(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
            return
        if not isinstance(target, (ast.Tuple, ast.List)):
            raise self.err(target, _unsupported("this assignment target"))
        try:
            values = list(value)
        except TypeError:
            raise self.err(target, f"cannot unpack a {type(value).__name__}") from None
        if len(values) != len(target.elts):
            raise self.err(target, f"{len(target.elts)} names for {len(values)} values")
        for t, v in zip(target.elts, values):
            self._bind_tuple(t, v)

    def _store(self, target: ast.Subscript, value_node: ast.expr) -> S.Stmt:
        buf = self._subscripted(target.value)
        if not isinstance(buf, Buffer):
            raise self.err(target, "only buffer elements can be assigned (A[i] = v)")
        load = self._buffer_access(buf, target)
        if not isinstance(load, E.BufferLoad):
            given = len(self._index_items(target.slice, buf.name))
            if given < len(buf.shape):
                raise self.err(target, f"buffer {buf.name} has {len(buf.shape)} dimension(s) but "
                                       f"{given} index(es) were given: fewer indices name a "
                                       f"region, which cannot be assigned; give one index per "
                                       f"dimension, or use Tx.copy / Tx.fill for a region")
            raise self.err(target, "cannot assign to a buffer region; use Tx.copy or Tx.fill")
        value = self._operand(value_node)
        lanes = max((i.dtype.lanes for i in load.indices if isinstance(i, E.PrimExpr)), default=1)
        if lanes > 1:  # B[0:8:2] = v: a vector store of as many lanes
            got = value.dtype.lanes if isinstance(value, E.PrimExpr) else 1
            if got != lanes:
                hint = (f"; write T.Broadcast(v, {lanes}) to store one value in every lane"
                        if got == 1 else "")
                raise self.err(value_node, f"{ast.unparse(target)} stores {lanes} lanes but the "
                                           f"value has {got}{hint}")
        return S.BufferStore(buf, stored_value(buf, value), load.indices)

    def _view_def(self, target: ast.expr, view: Buffer) -> S.Stmt:
        if not isinstance(target, ast.Name):
            raise self.err(target, "assign a buffer view to one name")
        view.declare_in_script = False
        view.name = target.id
        self.bind(target.id, view)
        return S.DeclBuffer(view)

    def _buffer_def(self, node: ast.Assign, target: ast.expr, spec: _T.BufferSpec) -> S.Stmt | None:
        if not isinstance(target, ast.Name):
            raise self.err(target, "assign a buffer to one name")
        name = target.id
        if spec.kind == "param" and "data" in spec.kwargs:
            # the seed's `alias = T.Buffer(shape, dtype, data=buf.data)` in a body: a view of
            # that memory, as T.decl_buffer declares it (and the printer writes it)
            spec.kind = "decl"
        if spec.kind == "param":
            raise self.err(node.value, "T.Buffer(...) annotates a parameter; inside a body use "
                                       "T.alloc_buffer, T.decl_buffer or T.match_buffer")
        buf = spec.make(name)
        if spec.scalar:
            return self._scalar_def(node, buf, spec)
        self.bind(name, buf)
        if spec.kind == "alloc":
            return S.AllocBuffer(buf, spec.annotations)
        if spec.kind == "decl":
            return S.DeclBuffer(buf)
        # match_buffer
        handle = spec.handle
        if self.top_block is None or not any(handle is p for p in self.params):
            raise self.err(node.value, "T.match_buffer's first argument must be a T.handle "
                                       "parameter of this function")
        if handle in self.buffer_map:
            raise self.err(node.value, f"parameter {handle.name} is already matched to a buffer")
        if buf.span is None:
            buf.span = self.src.span(node)  # errors about the buffer point at its match_buffer
        self.buffer_map[handle] = buf
        return None

    def _meta_instance(self, node: ast.stmt, name: str, obj: Any) -> S.Stmt | None:
        """Allocate what a ``T.meta_class`` instance owns, named ``<name>_<attribute>``; its
        attributes become the buffers (a scalar's, a cell reading its value)."""
        out: list[S.Stmt] = []
        for attr, spec in owned_buffers(obj).items():
            if spec.kind not in ("alloc", "decl"):
                raise self.err(node, f"{type(obj).__name__}.{attr} is a T.{spec.kind}_buffer "
                                     "description; a T.meta_class instance can own allocations "
                                     "and views (T.alloc_buffer, T.decl_buffer, the scalars)")
            buf = spec.make(f"{name}_{attr}")
            if spec.scalar:
                out.append(self._scalar_def(node, buf, spec, bind=False))
                setattr(obj, attr, ScalarCell(buf))
                continue
            define: S.Stmt = S.AllocBuffer(buf, spec.annotations) if spec.kind == "alloc" \
                else S.DeclBuffer(buf)
            out.append(self._mark(define, node))
            setattr(obj, attr, buf)
        return S.seq(out) if out else None

    def _scalar_def(self, node: ast.stmt, buf: Buffer, spec: _T.BufferSpec, *,
                    bind: bool = True) -> S.Stmt:
        """``x = T.local_scalar(...)`` / ``T.shared_scalar`` / ``T.decl_scalar``: the 0-d
        buffer, with ``x`` bound to its element (a :class:`ScalarCell`)."""
        span = self.src.span(node)
        buf.span = span
        define: S.Stmt = S.AllocBuffer(buf, spec.annotations) if spec.kind == "alloc" \
            else S.DeclBuffer(buf)
        define.span = span
        cell = ScalarCell(buf)
        self._cell_buffers.add(id(buf))
        if bind:
            self.bind(buf.name, cell)
        if spec.init is None:
            return define
        init = cell.store(spec.init)
        init.span = span
        return S.SeqStmt([define, init])


def _axis_name(spec: _T.LaunchThreadSpec) -> str:
    """The IR name of a thread index the script leaves unnamed: its axis (``threadIdx_x``)."""
    return spec.thread.replace(".", "_")
