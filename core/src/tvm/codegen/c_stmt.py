"""How a C-style printer prints statements: :class:`CStmtPrinter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..arith.linear import affine_range
from ..error import CodegenError, located
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer, const_numel
from ..ir.dtype import DataType
from ..ir.function import PrimFunc
from .bounds import BOUNDS_MESSAGE, Division, statement_checks
from .c_base import FunctionInfo, ParamInfo
from .c_expr import CExprPrinter
from .c_rules import (
    _MAX_ALLOC_BYTES,
    _SIZE_MUL_HELPER,
    _const_int,
    _factors,
    _script,
    _short,
    _strip,
)


class CStmtPrinter(CExprPrinter):
    """Function structure (headers, parameters, allocations, thread bindings), statements and
    run-time bounds checks."""

    # -- overridable structure ------------------------------------------------------------------
    def preamble_lines(self) -> list[str]:
        return [f"#include <{h}>" for h in self.includes]

    def function_header(self, info: FunctionInfo) -> str:
        params = ", ".join(self.param_decl(p) for p in info.params) or "void"
        if info.is_kernel:
            return f"{self.kernel_prefix}{self.kernel_return_type} {info.symbol}({params})"
        return f"{self.function_prefix}{self.function_return_type} {info.symbol}({params})"

    def param_decl(self, p: ParamInfo) -> str:
        dt = DataType(p.dtype)
        if p.kind == "buffer":
            qual = self.pointer_qualifiers.get("global", "")
            restrict = f" {self.restrict_keyword}" if self.restrict_keyword else ""
            return f"{qual}{self.storage_type(dt)}*{restrict} {p.c_name}"
        if p.kind == "handle":
            return f"void* {p.c_name}"
        return f"{self.c_type(dt)} {p.c_name}"

    def print_function_body(self, func: PrimFunc) -> None:
        self._push_scope()
        self.print_stmt(func.body)
        self._pop_scope()
        if not self._cur_info.is_kernel and self.function_return_type != "void":
            self.emit("return 0;")

    def assert_fail_lines(self, message: str) -> list[str]:
        """What a failed assert does (host: record the message and return an error code)."""
        return [f"return tvm_fail({self.c_string(message)});"]

    def print_thread_binding(self, loop: S.For) -> None:
        """A thread-bound loop: read the thread index (GPU). The host prints a loop instead."""
        tag = loop.thread_tag or ""
        builtin = self.thread_index_names.get(tag)
        if builtin is None:
            raise CodegenError(f"target {self.target_kind!r} has no thread index {tag!r} "
                           f"(loop over `{loop.loop_var.name}`)")
        if "{extent}" in builtin:
            builtin = builtin.format(extent=self.print_expr(loop.extent))
        name = self.var_name(loop.loop_var)
        self._nonneg_vars.add(id(loop.loop_var))
        self.emit(self.thread_index_line(name, self.c_type(loop.loop_var.dtype), builtin))
        self.print_stmt(loop.body)

    def thread_index_line(self, name: str, ctype: str, builtin: str) -> str:
        """The line that binds a thread-bound loop's variable ``name`` to the index ``builtin``."""
        return f"const {ctype} {name} = ({ctype}){builtin};"

    def print_parallel_for(self, loop: S.For) -> None:
        """A parallel loop (the host prints OpenMP); by default a serial loop."""
        self.print_serial_for(loop)

    def print_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        ctype = self.storage_type(buffer.dtype)
        n = const_numel(buffer)
        if n is not None and (buffer.scope in self.stack_scopes
                              or n * buffer.dtype.bytes <= self.max_stack_bytes):
            qual = self.storage_qualifiers.get(buffer.scope, "")
            align = " " + self.align_attribute.format(n=self.alloc_alignment) \
                if self.align_attribute else ""
            self.emit(f"{qual}{ctype} {name}[{max(n, 1)}]{align};")
            return
        self.print_heap_alloc(buffer, name, ctype)

    def alloc_bytes(self, buffer: Buffer, name: str) -> str:
        """The byte size of a heap allocation of ``buffer``, as C. A constant size beyond the
        address space is an error now; a symbolic one is multiplied out factor by factor with
        overflow checks into a ``size_t`` (a negative or overflowing size fails like an
        assert), so a huge shape can never become a small allocation."""
        ctype = self.storage_type(buffer.dtype)
        n = const_numel(buffer)
        if n is not None:
            if n * buffer.dtype.bytes > _MAX_ALLOC_BYTES:
                raise CodegenError(f"buffer `{buffer.name}` needs {n * buffer.dtype.bytes} bytes "
                                   f"(shape {[_const_int(d) for d in buffer.shape]}), more than "
                                   "any address space holds")
            return f"(size_t)({n}) * sizeof({ctype})"
        self.add_helper("tvm_size_mul", _SIZE_MUL_HELPER)
        var = self._fresh(f"{name}_nbytes")
        factors = [f for dim in buffer.shape for f in _factors(dim)]
        checks = " || ".join(f"tvm_size_mul(&{var}, (int64_t)({_strip(self.print_expr(f))}))"
                             for f in factors)
        self.emit(f"size_t {var} = sizeof({ctype});")
        self.emit(f"if ({checks}) {{")
        self._indent += 1
        for line in self.assert_fail_lines(f"buffer {buffer.name}: the allocation size overflows "
                                           "or is negative"):
            self.emit(line)
        self._indent -= 1
        self.emit("}")
        return var

    def print_heap_alloc(self, buffer: Buffer, name: str, ctype: str) -> None:
        raise CodegenError(f"target {self.target_kind!r} cannot allocate buffer `{buffer.name}` "
                       f"(scope {buffer.scope!r}) of dynamic or large size")
    # -- statements -------------------------------------------------------------------------------
    def print_stmt(self, stmt: S.Stmt) -> None:
        if (isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.Call)
                and stmt.value.op.name == "tirx.assume"):
            return  # a fact for the analyzer (index widths), no code
        method = getattr(self, f"stmt_{type(stmt).__name__}", None)
        if method is None:
            raise CodegenError(f"target {self.target_kind!r}: codegen cannot print a "
                           f"{type(stmt).__name__} statement")
        outer = self._span
        self._span = stmt.span or outer  # the lines printed now come from this statement
        try:
            if self.bounds_check:
                self.print_bounds_checks(stmt)
            method(stmt)
        finally:
            self._span = outer

    # -- run-time bounds checks ---------------------------------------------------------------
    def print_bounds_checks(self, stmt: S.Stmt) -> None:
        """Before ``stmt``, check every access it makes: each index against its dimension's
        extent, under the conditions the access runs under. A failed check reports through
        ``TVM_BOUNDS_FAIL(message)`` (``bounds_report``; a no-op unless the target defines it)
        and then does what a failed assert does (host: the function returns the error)."""
        seen: set[str] = set()
        for access in statement_checks(stmt):
            if isinstance(access, Division):
                self._print_division_check(access, seen)
                continue
            buf = access.buffer
            if len(access.indices) != len(buf.shape):
                continue  # a layout buffer read by its memory offset: no per-dimension extent
            lanes = max(i.dtype.lanes for i in access.indices)
            for lane in range(lanes):
                indices = [self.lane(i, lane) for i in access.indices] if lanes > 1 \
                    else access.indices
                for k, (index, extent) in enumerate(zip(indices, buf.shape)):
                    self._print_bound_check(buf, k, index, extent, access.guards, seen)

    def _print_division_check(self, div: Division, seen: set[str]) -> None:
        """Integer division by zero (and INT_MIN / -1) traps on most CPUs: fail instead."""
        a, b = div.expr.a, div.expr.b
        num, den = _strip(self.print_expr(a)), _strip(self.print_expr(b))
        bad = f"({den}) == 0"
        if div.expr.dtype.is_int:
            lo = self.expr_IntImm(E.IntImm(div.expr.dtype, E.int_range(div.expr.dtype)[0]))
            bad += f" || (({den}) == -1 && ({num}) == {lo})"
        self._print_failing_check(div.guards, bad, seen,
                                  f"{BOUNDS_MESSAGE} division by zero (or of the smallest "
                                  f"{div.expr.dtype} by -1) in `{_short(_script(div.expr))}`")

    def _print_failing_check(self, guards: list[E.PrimExpr], bad: str, seen: set[str],
                             message: str) -> None:
        cond = " && ".join([*(f"({_strip(self.print_expr(g))})" for g in guards), f"({bad})"])
        if cond in seen:
            return
        seen.add(cond)
        self.add_helper("TVM_BOUNDS_FAIL", f"#ifndef TVM_BOUNDS_FAIL\n#define "
                                           f"TVM_BOUNDS_FAIL(message) {self.bounds_report}\n#endif")
        self.emit(f"if ({cond}) {{")
        self._indent += 1
        self.emit(f"TVM_BOUNDS_FAIL({self.c_string(message)});")
        for line in self.assert_fail_lines(message):
            self.emit(line)
        self._indent -= 1
        self.emit("}")

    def _print_bound_check(self, buf: Buffer, k: int, index: E.PrimExpr, extent: E.PrimExpr,
                           guards: list[E.PrimExpr], seen: set[str]) -> None:
        if isinstance(extent, E.IntImm):
            reach = affine_range(index, self._ranges)
            if reach is not None and reach[0] >= 0 and reach[1] < extent.value:
                return  # in range for every iteration: nothing to check at run time
        idx, ext = _strip(self.print_expr(index)), _strip(self.print_expr(extent))
        bad = f"({idx}) >= ({ext})"
        if not index.dtype.is_uint:
            bad = f"({idx}) < 0 || {bad}"
        where = f" (dimension {k} of {len(buf.shape)})" if len(buf.shape) > 1 else ""
        text = _short(_script(index))
        self._print_failing_check(guards, bad, seen,
                                  f"{BOUNDS_MESSAGE} buffer {buf.name} index `{text}`{where} is "
                                  f"outside [0, {_short(_script(extent))})")

    def print_block(self, stmt: S.Stmt) -> None:
        """``stmt`` as the body of a braced block (its allocations end with the block)."""
        self._indent += 1
        self._push_scope()
        self.print_stmt(stmt)
        self._pop_scope()
        self._indent -= 1

    def stmt_SeqStmt(self, stmt: S.SeqStmt) -> None:
        for s in stmt.seq:
            self.print_stmt(s)

    def stmt_Evaluate(self, stmt: S.Evaluate) -> None:
        value = stmt.value
        if isinstance(value, (E.IntImm, E.FloatImm)):
            return
        if isinstance(value, E.Call) and value.op.name == "tirx.ret":
            with located(value.span):  # errors point at the T.ret line
                self.print_return(value.args[0])
            return
        text = self.print_expr(value)
        if text:
            self.emit(text + ";")

    def print_return(self, value: E.PrimExpr) -> None:
        """``T.ret(value)``: a C ``return`` (the host returns values through a parameter)."""
        info = self._cur_info
        if info.is_kernel or self.function_return_type == "void":
            raise CodegenError(f"function {info.name}: T.ret returns a value, which a "
                               f"{self.target_kind} {'kernel' if info.is_kernel else 'function'}"
                               " cannot; store it into a buffer (host functions of target 'c' "
                               "return values)")
        self.emit(f"return {self.print_expr(value)};")

    def stmt_BufferStore(self, stmt: S.BufferStore) -> None:
        lanes = max([stmt.value.dtype.lanes] + [i.dtype.lanes for i in stmt.indices])
        if lanes > 1:
            self.print_vector_store(stmt, lanes)
            return
        self._print_scalar_store(stmt.buffer, stmt.indices, stmt.value)

    def print_vector_store(self, stmt: S.BufferStore, lanes: int) -> None:
        """A store of ``lanes`` values; by default one scalar store per lane."""
        for lane in range(lanes):
            value = self.lane(stmt.value, lane)
            indices = [self.lane(i, lane) for i in stmt.indices]
            self._print_scalar_store(stmt.buffer, indices, value)

    def _print_scalar_store(self, buffer: Buffer, indices: list[E.PrimExpr],
                            value: E.PrimExpr) -> None:
        text = self.print_expr(value)
        if self.is_emulated(buffer.dtype):
            text = f"{self.to_storage_fn(buffer.dtype)}({text})"
        self.emit(f"{self.buffer_ptr(buffer)}[{self.flat_index(buffer, indices)}] = {text};")

    def stmt_For(self, loop: S.For) -> None:
        lo, ext = loop.min, loop.extent
        if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm) and ext.value > 0:
            # what bounds checks need not check at run time
            self._ranges[id(loop.loop_var)] = (lo.value, lo.value + ext.value - 1)
        try:
            self._print_for(loop)
        finally:
            self._ranges.pop(id(loop.loop_var), None)

    def _print_for(self, loop: S.For) -> None:
        kind = loop.kind
        if kind is S.ForKind.THREAD_BINDING:
            self.print_thread_binding(loop)
        elif kind is S.ForKind.PARALLEL:
            self.print_parallel_for(loop)
        elif kind is S.ForKind.UNROLLED:
            if self.unroll_pragma and isinstance(loop.extent, E.IntImm):
                self.emit(self.unroll_pragma.format(n=loop.extent.value))
            self.print_serial_for(loop)
        elif kind is S.ForKind.VECTORIZED:
            if self.vectorize_pragma:
                self.emit(self.vectorize_pragma)
            self.print_serial_for(loop)
        else:
            self.print_unroll_hint(loop)
            self.print_serial_for(loop)

    def print_unroll_hint(self, loop: S.For) -> None:
        """``T.serial(n, unroll=True)`` (annotation ``pragma_unroll``): the unroll pragma before
        the loop (one naming a count only when the extent is a constant)."""
        pragma = self.unroll_pragma
        if not (pragma and loop.annotations.get("pragma_unroll")):
            return
        if "{n}" in pragma and not isinstance(loop.extent, E.IntImm):
            return
        extent = loop.extent.value if isinstance(loop.extent, E.IntImm) else 0
        self.emit(pragma.format(n=extent))

    def print_serial_for(self, loop: S.For) -> None:
        v = loop.loop_var
        if isinstance(loop.min, E.IntImm) and loop.min.value >= 0:
            self._nonneg_vars.add(id(v))
        name = self.var_name(v)
        ctype = self.c_type(v.dtype)
        lo = self.print_expr(loop.min)
        if isinstance(loop.min, E.IntImm) and loop.min.value == 0:
            hi = self.print_expr(loop.extent)
        else:
            hi = f"({lo} + {self.print_expr(loop.extent)})"
        self.emit(self.loop_header(name, ctype, lo, hi))
        self.print_block(loop.body)
        self.emit("}")

    def loop_header(self, name: str, ctype: str, lo: str, hi: str) -> str:
        """The line opening a serial loop of ``name`` (type ``ctype``) from ``lo`` to ``hi``."""
        return f"for ({ctype} {name} = {lo}; {name} < {hi}; ++{name}) {{"

    def stmt_IfThenElse(self, stmt: S.IfThenElse) -> None:
        self.emit(f"if ({_strip(self.print_expr(stmt.condition))}) {{")
        self.print_block(stmt.then_case)
        if stmt.else_case is not None:
            self.emit("} else {")
            self.print_block(stmt.else_case)
        self.emit("}")

    def stmt_While(self, stmt: S.While) -> None:
        cond = _strip(self.print_expr(stmt.condition))
        check = S.Evaluate(stmt.condition)
        if not (self.bounds_check and statement_checks(check)):
            self.emit(f"while ({cond}) {{")
            self.print_block(stmt.body)
            self.emit("}")
            return
        # checked mode: the condition's accesses are checked before every evaluation of it
        self.emit("while (1) {")
        self._indent += 1
        self.print_bounds_checks(check)
        self.emit(f"if (!({cond})) break;")
        self._indent -= 1
        self.print_block(stmt.body)
        self.emit("}")

    def stmt_LetStmt(self, stmt: S.LetStmt) -> None:
        v = stmt.var
        if self._nonneg(stmt.value):
            self._nonneg_vars.add(id(v))
        name = self.var_name(v)
        value = self.print_expr(stmt.value)
        if v.dtype.is_handle:
            pointee = self.storage_type(v.ptr_dtype) if v.ptr_dtype is not None else "void"
            self.emit(f"{pointee}* {name} = ({pointee}*)({value});")
        else:
            self.emit(f"const {self.c_type(v.dtype)} {name} = {value};")
        self.print_stmt(stmt.body)

    def stmt_AttrStmt(self, stmt: S.AttrStmt) -> None:
        self.print_stmt(stmt.body)

    def stmt_AssertStmt(self, stmt: S.AssertStmt) -> None:
        msg = stmt.message.value if isinstance(stmt.message, E.StringImm) else str(stmt.message)
        self.emit(f"if (!({_strip(self.print_expr(stmt.condition))})) {{")
        self._indent += 1
        for line in self.assert_fail_lines(msg):
            self.emit(line)
        self._indent -= 1
        self.emit("}")

    def stmt_AllocBuffer(self, stmt: S.AllocBuffer) -> None:
        self.print_alloc(stmt.buffer, stmt.annotations)

    def stmt_DeclBuffer(self, stmt: S.DeclBuffer) -> None:
        buf = stmt.buffer
        data = buf.data
        if buf.scope == "tmem":
            # tensor memory is reached through its TMEM address (``allocated_addr``) by the
            # tcgen05 instructions, never through a C++ pointer: nothing to declare
            return
        if id(data) not in self._names:
            raise CodegenError(f"target {self.target_kind!r}: DeclBuffer `{buf.name}` views "
                           f"`{data.name}`, which is not defined here")
        base = self._names[id(data)]
        base_ptr = self._buffer_ptrs.get(id(data), base)
        if data.ptr_dtype is not None and data.ptr_dtype.element_of() != buf.dtype.element_of():
            # A view with another element type: a typed alias of the same memory.
            ctype = self.storage_type(buf.dtype)
            alias = self._fresh(buf.name)
            self.emit(f"{ctype}* {alias} = ({ctype}*)({base_ptr});")
            self._buffer_ptrs[id(buf)] = alias
        else:
            self._buffer_ptrs[id(buf)] = base_ptr

    def stmt_ScopeIdDef(self, stmt: S.ScopeIdDef) -> None:
        raise CodegenError(f"target {self.target_kind!r}: `{stmt.kind}` reached codegen; the "
                       "LowerKernelForm pass must turn it into thread-bound loops first")

    def stmt_TilePrimitiveCall(self, stmt: S.TilePrimitiveCall) -> None:
        raise CodegenError(f"target {self.target_kind!r}: tile primitive `{stmt.op.name}` reached "
                       "codegen; the TilePrimitiveDispatch pass must lower it first")
