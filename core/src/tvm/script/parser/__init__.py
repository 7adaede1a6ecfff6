"""TVMScript parser: Python source of a ``@T.prim_func`` (or printed text) to IR.

The decorated function is never run. Its source is read with :mod:`inspect`, parsed with
:mod:`ast`, and walked here: each expression is evaluated by a small evaluator of our own (names
resolve to script variables first, then to the function's closure, the defining frame's locals
and its globals), and each statement becomes IR. Python operators on IR values build IR through
the :class:`~tvm.ir.PrimExpr` overloads; ``and``/``or``/``not`` build ``And``/``Or``/``Not``.

Script helpers (objects whose class defines ``__tvm_script_bind__(self, name) -> Stmt | None``,
such as the CUDA backend's ``Pipeline`` and ``SMEMPool``) are bound by ``x = Helper(...)``: the
parser binds ``x`` to the object and places the statements the hook returns (allocations,
initialisation) at that point of the block; their methods return statements or expressions.
What they emit is ordinary IR, so the function prints and parses back without them.

Builders in ``T`` that describe statements (``T.alloc_buffer``, ``T.cta_id``, ``T.attr``,
``T.serial``, ...) return spec objects; the parser turns them into statements using the
assignment target and the rest of the block (``x = expr`` is a ``LetStmt`` over the statements
that follow it, as is ``T.attr({...})``).

Every error is a :class:`tvm.error.DiagnosticError` at the offending node: file, line, column,
the source line and a caret. Exceptions raised by builders are wrapped the same way (``raise
... from None``), so no traceback from inside the parser reaches the user.

The package: :mod:`._support` (tables, :class:`ParserBase`, script-only objects),
:mod:`._expr` (expressions), :mod:`._stmt` (statements); here the :class:`Parser` that joins
them, the function itself, and the entry points.
"""

from __future__ import annotations

import ast
from typing import Any

from ...error import DiagnosticError
from ...ir import expr as E
from ...ir.depth import MAX_DEPTH, ir_depth
from ...ir.dtype import DataType
from ...ir.function import IRModule, PrimFunc
from .. import ir as _I
from .. import tirx as _T
from ..diagnostics import Source
from ..source import _SPLIT_HINT, _parse_ast, parse_function, set_parser
from ._expr import ExprParser
from ._stmt import StmtParser
from ._support import (
    ScalarCell,
    _default_globals,
    _is_param_type_call,
    _unsupported,
)

__all__ = ["Parser", "ScalarCell", "from_source", "parse_function"]


class Parser(ExprParser, StmtParser):
    """Parses one function (or one module class) of one source: expressions
    (:class:`ExprParser`), statements (:class:`StmtParser`) and the function itself."""

    # -- functions --------------------------------------------------------------------------
    def function(self, fdef: ast.FunctionDef, *, private: bool, name: str | None = None) -> PrimFunc:
        args = fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.err(fdef, _unsupported("*args, **kwargs and keyword-only parameters")
                           + " (keyword-only T.constexpr parameters belong to @T.jit)")
        if args.defaults:
            raise self.err(args.defaults[0], _unsupported("parameter defaults"))
        self.scopes.append({})
        # Scalar and handle parameters first, so buffer shapes may use any of them.
        annotations: dict[str, Any] = {}
        buffer_params: list[tuple[str, ast.expr]] = []
        seen: set[str] = set()
        for a in args.args:
            if a.arg in seen:
                raise self.err(a, f"duplicate parameter name {a.arg!r}; every parameter needs "
                                  "its own name")
            seen.add(a.arg)
        for a in args.args:
            if a.annotation is None:
                raise self.err(a, f"parameter {a.arg} needs a type annotation, e.g. "
                                  f"`{a.arg}: T.int32` or `{a.arg}: T.Buffer((n,), \"float32\")`")
            if isinstance(a.annotation, ast.Call) and not _is_param_type_call(self, a.annotation):
                buffer_params.append((a.arg, a.annotation))
                continue
            ann = self.eval(a.annotation)
            if ann is _T.constexpr or isinstance(ann, _T.Optional):
                raise self.err(a.annotation, f"parameter {a.arg}: T.constexpr and T.Optional "
                                             f"parameters belong to @T.jit functions (then "
                                             f"f.specialize({a.arg}=...) gives the PrimFunc)")
            if not isinstance(ann, _T.ScalarType):
                raise self.err(a.annotation, f"parameter {a.arg}: expected T.Buffer(...), "
                                             f"T.handle or a scalar type such as T.int32")
            # T.TensorMap and the like: a handle whose ptr_scope says what it is
            annotations[a.arg] = E.Var(a.arg, DataType(str(ann)),
                                       ptr_scope=getattr(ann, "ptr_scope", None))
            self.bind(a.arg, annotations[a.arg])
        for arg_name, annotation in buffer_params:
            spec = self.eval(annotation)
            if isinstance(spec, _T.Optional):
                raise self.err(annotation, f"parameter {arg_name}: T.Optional parameters belong "
                                           f"to @T.jit functions (f.specialize({arg_name}=None) "
                                           f"leaves it out)")
            if not isinstance(spec, _T.BufferSpec) or spec.kind != "param":
                raise self.err(annotation, f"parameter {arg_name}: expected T.Buffer(...), "
                                           f"T.handle or a scalar type such as T.int32")
            annotations[arg_name] = spec
        for a in args.args:
            got = annotations[a.arg]
            if isinstance(got, _T.BufferSpec):
                try:
                    buf = got.make(a.arg)
                except Exception as exc:
                    raise self._wrap(a, exc) from None
                buf.span = self.src.span(a)
                var = E.Var(a.arg, "handle")
                self.buffer_map[var] = buf
                self.bind(a.arg, buf)
                self.params.append(var)
            else:
                self.params.append(got)
        ret_type = self._return_type(fdef)
        self.top_block = fdef.body
        body = self.stmts(fdef.body, 0)
        self.scopes.pop()
        attrs: dict[str, Any] = {}
        if not private:
            attrs["global_symbol"] = name or fdef.name
        attrs.update(self.func_attrs)
        func = PrimFunc(self.params, body, self.buffer_map, attrs, ret_type=ret_type)
        depth, span = ir_depth(func)
        if depth > MAX_DEPTH:
            where = self.src.span(fdef) if span is None else span
            raise DiagnosticError(f"function {fdef.name} nests {depth} levels deep (statements "
                                  f"and expressions); scripts may nest at most {MAX_DEPTH}. "
                                  + _SPLIT_HINT, where.filename, where.line, where.column,
                                  where.text)
        return func

    def _return_type(self, fdef: ast.FunctionDef) -> DataType | None:
        """``def f(...) -> T.int32``: the type of what ``T.ret(x)`` returns (None: nothing)."""
        if fdef.returns is None or (isinstance(fdef.returns, ast.Constant)
                                    and fdef.returns.value is None):
            return None
        ann = self.eval(fdef.returns)
        if not isinstance(ann, _T.ScalarType) or DataType(str(ann)).is_handle:
            raise self.err(fdef.returns, "a function's return annotation must be a scalar type "
                                         "such as T.int32 (the type of what T.ret(x) returns)")
        return DataType(str(ann))



def _decorator_flag(p: Parser, fdef: ast.FunctionDef, flag: str = "private") -> bool | None:
    """The value of ``@T.prim_func(<flag>=...)`` (False when not given); None without
    ``@T.prim_func``."""
    for dec in fdef.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if p.eval(target) is not _T.prim_func:
            continue
        if isinstance(dec, ast.Call):
            for kw in dec.keywords:
                if kw.arg == flag:
                    return bool(p.eval(kw.value))
        return False
    return None




def from_source(text: str, *, filename: str = "<string>",
                extra_vars: dict[str, Any] | None = None) -> PrimFunc | IRModule:
    """Parse TVMScript text (as ``func.script()`` prints it): one ``@T.prim_func`` function or
    one ``@I.ir_module`` class."""
    source = Source(text, filename)
    tree = _parse_ast(source)
    lookups = [dict(extra_vars or {}), _default_globals()]
    try:
        return _parse_top(source, tree, lookups)
    except DiagnosticError as exc:
        raise exc.with_traceback(None) from None


def _parse_top(source: Source, tree: ast.Module, lookups: list[dict[str, Any]]) -> Any:
    results: list[Any] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.FunctionDef):
            results.append(_parse_def(source, lookups, node, None))
        elif isinstance(node, ast.ClassDef):
            results.append(_parse_module(source, lookups, node))
        else:
            raise source.error(node, "expected a @T.prim_func function or an @I.ir_module class")
    if len(results) != 1:
        raise source.error(tree.body[0] if tree.body else None,
                           f"expected one function or module, found {len(results)}")
    return results[0]


def _parse_def(source: Source, lookups: list[dict[str, Any]], node: ast.FunctionDef,
               name: str | None) -> PrimFunc:
    probe = Parser(source, lookups)
    probe.scopes.append({})
    private = _decorator_flag(probe, node)
    if private is None:
        raise source.error(node, f"function {node.name} is not decorated with @T.prim_func")
    func = Parser(source, lookups).function(node, private=private, name=name)
    return _T.mark_persistent(func) if _decorator_flag(probe, node, "persistent") else func


def _parse_module(source: Source, lookups: list[dict[str, Any]], node: ast.ClassDef) -> IRModule:
    probe = Parser(source, lookups)
    probe.scopes.append({})
    if not any(probe.eval(d.func if isinstance(d, ast.Call) else d) is _I.ir_module
               for d in node.decorator_list):
        raise source.error(node, f"class {node.name} is not decorated with @I.ir_module")
    funcs: dict[str, PrimFunc] = {}
    attrs: dict[str, Any] = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            funcs[item.name] = _parse_def(source, lookups, item, None)
        elif isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant):
            continue
        elif isinstance(item, ast.Expr) and isinstance(item.value, ast.Call) \
                and probe.eval(item.value.func) is _I.module_attrs:
            attrs.update(probe.eval(item.value.args[0]))
        else:
            raise source.error(item, "an @I.ir_module class holds @T.prim_func functions and "
                                     "I.module_attrs({...})")
    return IRModule(funcs, attrs)


set_parser(Parser)  # what @T.prim_func and @T.jit parse with (tvm.script.source)
