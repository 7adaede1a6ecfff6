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
"""

from __future__ import annotations

import ast
import builtins
import enum
import inspect
import io
import operator
import tokenize
from collections.abc import Callable
from typing import Any

import tvm

from ..error import DiagnosticError
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer, BufferRegion, Range, strided_indices
from ..ir.depth import CHAIN_WEIGHT, MAX_DEPTH, ir_depth
from ..ir.dtype import DataType
from ..ir.function import IRModule, PrimFunc
from ..ir.node import Node
from ..ir.op import Op
from ..tirx.operator.tile_primitive.ops import make_compose_op
from . import ir as _I
from . import tirx as _T
from .diagnostics import Source
from .jit import JitFunction
from .tirx import tile as _tile

__all__ = ["from_source", "parse_function"]

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}

# Python constructs TVMScript does not have, with the words used in the error.
_UNSUPPORTED: dict[str, str] = {
    "Try": "`try` statements", "TryStar": "`try` statements", "Raise": "`raise` statements",
    "Import": "`import` inside a script", "ImportFrom": "`import` inside a script",
    "Global": "`global` declarations", "Nonlocal": "`nonlocal` declarations",
    "Delete": "`del` statements", "ClassDef": "class definitions inside a function",
    "AsyncFunctionDef": "async functions",
    "AsyncFor": "`async for`", "AsyncWith": "`async with`", "Match": "`match` statements",
    "Yield": "`yield` (generators)",
    "YieldFrom": "`yield from` (generators)", "Await": "`await`", "NamedExpr": "`:=` expressions",
    "JoinedStr": "f-strings", "TypeAlias": "`type` aliases",
}

# One loop a `for` header opens: (variable name, start, extent, kind, thread tag, annotations).
_LoopHead = tuple[str, Any, Any, S.ForKind, str | None, dict[str, Any]]

def _unsupported(what: str) -> str:
    return f"unsupported Python in TVMScript: {what}"


_SPLIT_HINT = ("Split long expressions into parts bound to variables (`s = a + b` ...), or "
               "loop over a buffer instead of unrolling")
_TOO_DEEP = f"this is nested too deeply to parse. {_SPLIT_HINT}"

# What the statement builders return: never an argument of a call.
_SPECS = (_T.VarDecl, _T.BufferSpec, _T.LoopSpec, _T.GridSpec, _T.ScopeIdSpec, _T.AttrSpec,
          _T.FuncAttrSpec, _T.LetSpec, _T.LaunchThreadSpec)


def _held_values(result: Any) -> list[Any]:
    """What a builder's result puts into the IR (the printer must be able to write it)."""
    if isinstance(result, E.Call):
        return [result.args]
    if isinstance(result, S.TilePrimitiveCall):
        return [result.args, result.workspace, result.config]
    if isinstance(result, (_T.AttrSpec, _T.FuncAttrSpec)):
        return [result.items]
    if isinstance(result, _T.LoopSpec):
        return [result.annotations]
    if isinstance(result, _T.BufferSpec):
        return [result.annotations]
    return []


def _foreign_value(value: Any, depth: int = 0) -> Any:
    """A value inside an IR call that the IR cannot hold: a class, a module, a function of tvm
    or a Python builtin (almost always a call the script forgot), any other object."""
    if value is None or isinstance(value, (str, int, float, E.PrimExpr, DataType, Node, Op,
                                           enum.Enum)):
        return None
    if isinstance(value, (list, tuple, dict)):
        if depth > 8:
            return None
        items = list(value.items()) if isinstance(value, dict) else value
        for item in items:
            found = _foreign_value(item, depth + 1)
            if found is not None:
                return found
        return None
    if type(value).__name__ == "Target" and hasattr(value, "export"):
        return None
    if callable(value) and not isinstance(value, type) and not _is_tvm_or_builtin(value):
        return None  # a function of the user's (a tile op's predicate, say): the op's business
    return value


def _is_tvm_or_builtin(value: Any) -> bool:
    module = getattr(value, "__module__", None) or ""
    return module == "builtins" or module == "tvm" or module.startswith("tvm.")


def _spec_inside(value: Any, depth: int = 0) -> Any:
    """A statement builder's result in ``value`` (or its lists, tuples and dict values)."""
    if isinstance(value, _SPECS):
        return value
    if depth > 8:
        return None
    items = value.values() if isinstance(value, dict) else \
        value if isinstance(value, (list, tuple)) else ()
    for item in items:
        found = _spec_inside(item, depth + 1)
        if found is not None:
            return found
    return None


def _spec_misuse(value: Any) -> str:
    if isinstance(value, _T.VarDecl):
        return (f"T.{value.dtype}() without a value declares a variable (`n = T.{value.dtype}()`) "
                f"and cannot be an argument; write T.{value.dtype}(0) for a literal")
    what = type(value).__name__.removesuffix("Spec")
    return (f"a {what} description (from a statement builder such as T.alloc_buffer, T.serial "
            "or T.attr) cannot be an argument; assign it to a name or use it in its statement")


class _Stop(Exception):
    """Internal: a statement consumed the rest of its block."""


class Parser:
    """Parses one function (or one module class) of one source."""

    def __init__(self, source: Source, lookup_dicts: list[dict[str, Any]]) -> None:
        self.src = source
        self.outer = lookup_dicts
        self.scopes: list[dict[str, Any]] = []
        self.func_attrs: dict[str, Any] = {}
        self.buffer_map: dict[E.Var, Buffer] = {}
        self.params: list[E.Var] = []
        self.top_block: list[ast.stmt] | None = None
        self.loop_depth = 0  # `for` loops around the statement being parsed (for break/continue)
        self._helper_depth = 0  # nested helpers being expanded (each inside the one before)
        # regions written with fewer indices than the rank (`A[i]` of a 2-d A): how many
        self._short_regions: dict[int, int] = {}
        self._keep: list[BufferRegion] = []

    # -- errors ---------------------------------------------------------------------------
    def err(self, node: ast.AST | None, message: str) -> DiagnosticError:
        return self.src.error(node, message)

    def _wrap(self, node: ast.AST, exc: Exception) -> DiagnosticError:
        if isinstance(exc, DiagnosticError):
            return exc
        if isinstance(exc, RecursionError):
            return self.err(node, _TOO_DEEP)
        if isinstance(exc, KeyError) and exc.args:
            msg = str(exc.args[0])
        else:
            msg = str(exc) or type(exc).__name__
        return self.err(node, msg)

    # -- names ------------------------------------------------------------------------------
    def bind(self, name: str, value: Any) -> None:
        self.scopes[-1][name] = value

    def lookup(self, name: str, node: ast.AST) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        for d in self.outer:
            if name in d:
                value = d[name]
                return value.value if isinstance(value, _T.MetaVar) else value
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.err(node, f"name '{name}' is not defined")

    # -- expressions ------------------------------------------------------------------------
    def eval(self, node: ast.AST) -> Any:
        method = getattr(self, f"_e_{type(node).__name__}", None)
        if method is None:
            what = _UNSUPPORTED.get(type(node).__name__, f"`{type(node).__name__}` expressions")
            raise self.err(node, _unsupported(what))
        try:
            return method(node)
        except DiagnosticError:
            raise
        except Exception as exc:  # a builder's error becomes a diagnostic at this node
            raise self._wrap(node, exc) from None

    def _python(self, node: ast.expr) -> Any:
        """Evaluate ``node`` in Python, as the seed does for comprehensions and ``lambda``
        (meta-programming: ``T.meta_var([i * 2 for i in range(4)])``). Names resolve as in
        the script: script variables first, then the closure and module."""
        names: dict[str, Any] = {}
        for d in reversed(self.outer):
            names.update({k: (v.value if isinstance(v, _T.MetaVar) else v) for k, v in d.items()})
        for scope in self.scopes:
            names.update({k: (v.load() if isinstance(v, ScalarCell) else v)
                          for k, v in scope.items()})
        code = compile(ast.fix_missing_locations(ast.Expression(node)), self.src.filename, "eval")
        return eval(code, names)  # noqa: S307 - the user's own script text, as Python runs it

    _e_ListComp = _e_SetComp = _e_DictComp = _e_GeneratorExp = _e_Lambda = _python

    def _e_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _e_Name(self, node: ast.Name) -> Any:
        value = self.lookup(node.id, node)
        return value.load() if isinstance(value, ScalarCell) else value

    def _e_Attribute(self, node: ast.Attribute) -> Any:
        if isinstance(node.value, ast.Name):  # x.source / x.buffer / x.data of a scalar cell
            cell = self._cell(node.value.id)
            if cell is not None and node.attr in ScalarCell.BUFFER_ATTRS:
                return cell.attribute(node.attr)
        return getattr(self.eval(node.value), node.attr)

    def _cell(self, name: str) -> ScalarCell | None:
        """The scalar cell (``T.local_scalar`` & co) ``name`` is bound to in the script."""
        for scope in reversed(self.scopes):
            if name in scope:
                value = scope[name]
                return value if isinstance(value, ScalarCell) else None
        return None

    def _e_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self._elts(node.elts))

    def _e_List(self, node: ast.List) -> Any:
        return list(self._elts(node.elts))

    def _elts(self, elts: list[ast.expr]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self.eval(e.value))
            else:
                out.append(self.eval(e))
        return out

    def _e_Set(self, node: ast.Set) -> Any:
        return set(self._elts(node.elts))

    def _e_Dict(self, node: ast.Dict) -> Any:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.eval(v))
            else:
                out[self.eval(k)] = self.eval(v)
        return out

    def _e_BinOp(self, node: ast.BinOp) -> Any:
        fn = _BINOPS.get(type(node.op))
        if fn is None:
            raise self.err(node, _unsupported(f"the operator {type(node.op).__name__}"))
        return fn(self._operand(node.left), self._operand(node.right))

    def _operand(self, node: ast.expr) -> Any:
        """``node``'s value where a value is required (an operand, a stored value, a
        condition): a region there is a located error that says what the region is."""
        value = self.eval(node)
        if isinstance(value, BufferRegion):
            raise self._region_error(value, node)
        return value

    def _region_error(self, region: BufferRegion, node: ast.AST) -> DiagnosticError:
        buf = region.buffer
        written = ast.unparse(node)
        covered = f"{buf.name}[{', '.join(_range_text(r) for r in region.region)}]"
        what = written if written == covered else f"{written} (the region {covered})"
        short = self._short_regions.get(id(region))
        if short is not None:
            return self.err(node, (
                f"{what} is a region, not a value: buffer {buf.name} has {len(buf.shape)} "
                f"dimension(s) and {short} index(es) were given, and a shorter index list names "
                f"the region over the dimensions it leaves out (an argument of a tile primitive "
                f"such as Tx.copy). Give one index per dimension for an element"))
        return self.err(node, (
            f"{what} is a region, not a value: a region is an argument of a tile primitive "
            f"(Tx.copy, Tx.fill, ...). Give one index per dimension (no slices) for an element"))

    def _e_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self._operand(node.operand)
        if isinstance(node.op, ast.Not):
            return E.Not(v) if isinstance(v, E.PrimExpr) else not v
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return +v if not isinstance(v, E.PrimExpr) else v
        return ~v

    def _e_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self._operand(v) for v in node.values]
        is_and = isinstance(node.op, ast.And)
        if not any(isinstance(v, E.PrimExpr) for v in values):
            result = values[0]
            for v in values[1:]:
                result = (result and v) if is_and else (result or v)
            return result
        cls = E.And if is_and else E.Or
        acc = E.convert(values[0])
        for v in values[1:]:
            acc = cls(acc, E.convert(v))
        return acc

    def _e_Compare(self, node: ast.Compare) -> Any:
        value = self.eval if any(isinstance(op, _IDENTITY_OPS) for op in node.ops) \
            else self._operand
        left = value(node.left)
        results = []
        for op, comp in zip(node.ops, node.comparators):
            right = value(comp)
            results.append(_CMPOPS[type(op)](left, right))
            left = right
        if len(results) == 1:
            return results[0]
        if not any(isinstance(r, E.PrimExpr) for r in results):
            return all(results)
        acc = E.convert(results[0])
        for r in results[1:]:
            acc = E.And(acc, E.convert(r))
        return acc

    def _e_IfExp(self, node: ast.IfExp) -> Any:
        cond = self._operand(node.test)
        if isinstance(cond, E.PrimExpr):
            return E.Select(cond, self.eval(node.body), self.eval(node.orelse))
        return self.eval(node.body) if cond else self.eval(node.orelse)

    def _e_Slice(self, node: ast.Slice) -> Any:
        def part(x: ast.expr | None) -> Any:
            return None if x is None else self.eval(x)

        return slice(part(node.lower), part(node.upper), part(node.step))

    def _e_Subscript(self, node: ast.Subscript) -> Any:
        obj = self.eval(node.value)
        if isinstance(obj, Buffer):
            return self._buffer_access(obj, node)
        return obj[self.eval(node.slice)]

    def _e_Call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        if func is _T.Let:
            return self._let_expr(node)
        args = self._elts(node.args)
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        for k, value in enumerate([*args, *kwargs.values()]):
            spec = _spec_inside(value)
            if spec is not None:
                arg_node = node.args[k] if k < len(node.args) else node
                raise self.err(arg_node, _spec_misuse(spec))
        if isinstance(func, _T.InlineFunction):
            return self._inline(func, node, args, kwargs)
        if isinstance(func, _NestedHelper):
            return self._expand_helper(func, node, args, kwargs)
        if isinstance(func, JitFunction):
            raise self.err(node, f"the @T.jit function {func.__name__} cannot be called inside "
                                 f"a script: a script does not call other functions here; "
                                 f"write the shared code as a T.inline helper, or call "
                                 f"{func.__name__}(...) from Python")
        try:
            result = func(*args, **kwargs)
        except TypeError as exc:
            # "alloc_buffer() got ..." -> "T.alloc_buffer() got ...": name it as written
            name = getattr(func, "__name__", "")
            text = str(exc)
            if getattr(func, "__module__", "") == _T.__name__ and text.startswith(f"{name}("):
                raise self.err(node, f"T.{text}") from None
            raise self._refused_region(node, args, kwargs, exc) or exc from None
        except (ValueError, IndexError) as exc:
            raise self._refused_region(node, args, kwargs, exc) or exc from None
        foreign = _foreign_value(_held_values(result))
        if foreign is not None:
            raise self.err(node, f"a {type(foreign).__name__} ({foreign!r}) cannot be held by "
                                 "the IR; pass an expression, a buffer, a region or a plain "
                                 "value (did you forget to call it?)")
        if isinstance(result, (S.TilePrimitiveCall, E.Call)) and result.span is None:
            result.span = self.src.span(node)  # errors while lowering it point here
        return result

    def _refused_region(self, node: ast.Call, args: list[Any], kwargs: dict[str, Any],
                        exc: Exception) -> DiagnosticError | None:
        """A builder that wanted a value and got a region (``T.exp(A[i])`` on a 2-d ``A``):
        the error at that argument, saying what the region is; None for other failures."""
        if "BufferRegion" not in str(exc):
            return None
        if any(isinstance(a, ast.Starred) for a in node.args):
            pairs: list[tuple[Any, ast.AST]] = [(a, node) for a in args]
        else:
            pairs = list(zip(args, node.args))
        pairs += [(kwargs.get(kw.arg), kw.value) for kw in node.keywords if kw.arg is not None]
        for value, arg_node in pairs:
            if isinstance(value, BufferRegion):
                return self._region_error(value, arg_node)
        return None

    def _inline(self, macro: Any, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Parse the body of a ``@T.inline`` function here, its parameters bound to the call's
        arguments; a body of one ``return <expr>`` gives that expression."""
        fn = macro.fn
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.err(node, f"{fn.__name__}(): {exc}") from None
        bound.apply_defaults()
        try:
            raw = inspect.getsource(fn)
            filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
        except (OSError, TypeError) as exc:
            raise self.err(node, f"T.inline function {fn.__name__} needs its source text "
                                 f"({exc})") from None
        source = Source.from_snippet(raw, filename, fn.__code__.co_firstlineno)
        fdef = next(n for n in ast.parse(source.text).body if isinstance(n, ast.FunctionDef))
        body = [b for b in fdef.body
                if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
                        and isinstance(b.value.value, str))]
        saved = (self.src, self.outer, self.scopes, self.top_block)
        self.src = source
        self.outer = [_closure_vars(fn), fn.__globals__, _default_globals()]
        self.scopes = [dict(bound.arguments)]
        self.top_block = body
        try:
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                return self.eval(body[0].value)
            return self.stmts(body, 0)
        finally:
            self.src, self.outer, self.scopes, self.top_block = saved

    # -- nested helpers ---------------------------------------------------------------------
    def _s_FunctionDef(self, node: ast.FunctionDef, stmts: list[ast.stmt], i: int) -> None:
        """A ``def`` (plain or ``@T.inline``) inside a script: a helper expanded where it is
        called, like ``T.inline``; it sees the names of the scopes around its definition."""
        for dec in node.decorator_list:
            target = self.eval(dec.func if isinstance(dec, ast.Call) else dec)
            if target is not _T.inline and target is not _T.InlineFunction:
                raise self.err(dec, "a function defined inside a script is a helper expanded "
                                    "where it is called: write it without a decorator, or "
                                    "with @T.inline")
        args = node.args
        if args.vararg or args.kwarg:
            raise self.err(node, _unsupported("*args and **kwargs of a nested helper"))
        params = [inspect.Parameter(a.arg, inspect.Parameter.POSITIONAL_ONLY)
                  for a in args.posonlyargs]
        params += [inspect.Parameter(a.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                   for a in args.args]
        first_default = len(params) - len(args.defaults)
        for k, default in enumerate(args.defaults):
            params[first_default + k] = params[first_default + k].replace(
                default=self.eval(default))
        for a, kw_default in zip(args.kwonlyargs, args.kw_defaults):
            value = inspect.Parameter.empty if kw_default is None else self.eval(kw_default)
            params.append(inspect.Parameter(a.arg, inspect.Parameter.KEYWORD_ONLY,
                                            default=value))
        helper = _NestedHelper(node, inspect.Signature(params), self.src, list(self.scopes))
        self.bind(node.name, helper)
        return None

    def _expand_helper(self, helper: _NestedHelper, node: ast.Call, args: list[Any],
                       kwargs: dict[str, Any]) -> Any:
        """The body of ``helper`` parsed here with its parameters bound to the arguments; a body
        of one ``return <expr>`` gives that expression."""
        name = helper.node.name
        if self._helper_depth >= _MAX_HELPER_DEPTH:
            raise self.err(node, f"helper {name} expands more than {_MAX_HELPER_DEPTH} levels "
                                 "deep (does it call itself?); helpers are expanded where they "
                                 "are called, so recursion never ends")
        try:
            bound = helper.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise self.err(node, f"{name}(): {exc}") from None
        bound.apply_defaults()
        body = [b for b in helper.node.body
                if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
                        and isinstance(b.value.value, str))]
        saved = (self.src, self.scopes, self.top_block, self.loop_depth)
        self.src = helper.src
        self.scopes = [*helper.scopes, dict(bound.arguments)]
        self.top_block = body
        self.loop_depth = 0  # a `break` in the helper cannot leave the caller's loop
        self._helper_depth += 1
        try:
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                return self.eval(body[0].value)
            return self.stmts(body, 0)
        finally:
            self.src, self.scopes, self.top_block, self.loop_depth = saved
            self._helper_depth -= 1

    def _let_expr(self, node: ast.Call) -> E.Let:
        if len(node.args) != 3 or node.keywords or not isinstance(node.args[0], ast.Name):
            raise self.err(node, "T.Let takes (name, value, body), e.g. T.Let(x, 1, x + 1)")
        value = E.convert(self.eval(node.args[1]))
        var = E.Var(node.args[0].id, value.dtype)
        self.scopes.append({node.args[0].id: var})
        try:
            body = self.eval(node.args[2])
        finally:
            self.scopes.pop()
        return E.Let(var, value, body)

    # -- buffer indexing --------------------------------------------------------------------
    def _buffer_access(self, buf: Buffer, node: ast.Subscript) -> E.BufferLoad | BufferRegion:
        """``A[i, j]`` (a load), ``A[0:4, j]`` (a region). As in the seed, an index list shorter
        than the rank is a region over the dimensions it leaves out (``A[tx]`` is row ``tx``),
        and a Python tuple (``A[idx]``, ``A[*idx, j]``, ``A[tuple(slices)]``) is an index list."""
        items = self._index_items(node.slice, buf.name)
        if len(items) > len(buf.shape):
            raise self.err(node, f"buffer {buf.name} has {len(buf.shape)} dimension(s) but "
                                 f"{len(items)} index(es) were given")
        short = len(items) < len(buf.shape)
        if not short and not any(_is_slice_item(i) for i in items):
            return E.BufferLoad(buf, [self._index_value(i) for i in items])
        if not short and any(self._has_step(i) for i in items):
            try:
                return self._strided_access(buf, items)
            except ValueError as exc:
                raise self.err(node, str(exc)) from None
        ranges = [self._range(item, dim) for item, dim in zip(items, buf.shape)]
        ranges += [Range(0, dim) for dim in buf.shape[len(items):]]
        region = BufferRegion(buf, ranges)
        if short:  # kept alive by the parser, so the id stays this region's
            self._short_regions[id(region)] = len(items)
            self._keep.append(region)
        return region

    def _index_items(self, index: ast.expr, name: str) -> list[Any]:
        """The items of a subscript: AST nodes, or values where a tuple was spread."""
        elts = index.elts if isinstance(index, ast.Tuple) else [index]
        items: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                items.extend(self._spread(e.value))
            elif not isinstance(e, ast.Slice) and not isinstance(index, ast.Tuple):
                value = self.eval(e)
                if isinstance(value, list):
                    raise self._list_index(e, name)
                items.extend(value if isinstance(value, tuple) else [_Evaluated(value)])
            else:
                items.append(e)
        return [i if isinstance(i, (ast.AST, _Evaluated)) else _Evaluated(i) for i in items]

    def _list_index(self, node: ast.expr, name: str) -> DiagnosticError:
        """A list as the index (``A[[i, j]]``, ``A[idx]`` with a list ``idx``): not an index
        list here (the seed's would be), since a list index reads as numpy's fancy indexing."""
        text = ast.unparse(node)
        spread = f"{name}[{text[1:-1]}]" if text.startswith("[") else f"{name}[*{text}]"
        return self.err(node, f"a list ({text}) is not an index list: write {spread} or "
                              f"{name}[tuple({text})] (a list index would be numpy's fancy "
                              f"indexing, one element per entry)")

    def _spread(self, node: ast.expr) -> list[Any]:
        value = self.eval(node)
        if not isinstance(value, (tuple, list)):
            raise self.err(node, f"`*` in a buffer index spreads a tuple or list of indices, "
                                 f"not a {type(value).__name__}")
        return list(value)

    def _slice_of(self, item: Any) -> slice | None:
        """The slice an index item is (its bounds and step evaluated), or None."""
        if isinstance(item, ast.Slice):
            return self.eval(item)  # type: ignore[no-any-return]
        if isinstance(item, _Evaluated) and isinstance(item.value, slice):
            return item.value
        return None

    def _has_step(self, item: Any) -> bool:
        if isinstance(item, ast.Slice):
            return item.step is not None
        sl = self._slice_of(item)
        return sl is not None and sl.step is not None

    def _strided_access(self, buf: Buffer, items: list[Any]) -> E.BufferLoad:
        """``A[0:8:2]``: as in the seed, a slice with a step (and one index per dimension) is
        a vector access, ``A[T.Ramp(0, 2, 4)]``; a slice of one lane is its start."""
        values = [self._slice_of(i) or self._index_value(i) for i in items]
        return E.BufferLoad(buf, strided_indices(buf, values))

    def _index_value(self, item: Any) -> Any:
        return item.value if isinstance(item, _Evaluated) else self.eval(item)

    def _range(self, item: Any, dim: Any) -> Range:
        if isinstance(item, ast.Slice):
            if item.step is not None:
                raise self.err(item, "buffer regions take no step")
            lo = 0 if item.lower is None else self.eval(item.lower)
            if item.upper is None:
                return Range(lo, _extent(lo, dim))
            return Range(lo, self._extent(item.lower, lo, item.upper))
        value = self._index_value(item)
        if not isinstance(value, slice):
            return Range(value, 1)
        if value.step not in (None, 1):
            raise ValueError("buffer regions take no step")
        lo = 0 if value.start is None else value.start
        return Range(lo, _extent(lo, dim if value.stop is None else value.stop))

    def _extent(self, lo_node: ast.expr | None, lo: Any, hi_node: ast.expr) -> Any:
        """The extent of ``lo:hi``. ``lo:lo + n`` gives ``n`` itself (so printed regions and
        loops read back exactly); constants fold; otherwise ``hi - lo``."""
        if (lo_node is not None and isinstance(hi_node, ast.BinOp)
                and isinstance(hi_node.op, ast.Add)
                and ast.dump(hi_node.left) == ast.dump(lo_node)):
            return self.eval(hi_node.right)
        return _extent(lo, self.eval(hi_node))

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
            raise self.err(node, f"T.launch_thread defines a thread index: assign it to a name "
                                 f"(`tx = T.launch_thread({value.thread!r}, n)`) or use `with "
                                 f"T.launch_thread(...) as tx:`")
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
                "`with T.launch_thread(axis, n) as x:` and `with Tx.compose_op(...):`")
        if len(node.items) != 1:
            raise self.err(node, _unsupported(what))
        item = node.items[0]
        expr = item.context_expr
        # Decide from the callee alone: a foreign context manager is never entered or called.
        if not (isinstance(expr, ast.Call) and _is_with_builder(self.eval(expr.func))):
            raise self.err(expr, _unsupported(what))
        ctx = self.eval(expr)
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
        if isinstance(spec, _T.GridSpec):
            if len(names) != len(spec.extents):
                raise self.err(node.target, f"T.grid has {len(spec.extents)} extents but "
                                            f"{len(names)} loop variables")
            loops: list[_LoopHead] = [
                (n, 0, _check_extent(self, it, e), S.ForKind.SERIAL, None, {})
                for n, e in zip(names, spec.extents)]
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
        self.loop_depth += 1
        try:
            body = self.block(node.body, {v.name: v for v in loop_vars})
        finally:
            self.loop_depth -= 1
        for var, (_n, start, ext, kind, thread, ann) in reversed(list(zip(loop_vars, loops))):
            body = S.For(var, start, ext, kind, body, thread_tag=thread, annotations=ann)
        return body

    def _target_names(self, target: ast.expr) -> list[str]:
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            return [e.id for e in target.elts]  # type: ignore[attr-defined]
        raise self.err(target, "expected a name or a tuple of names here")

    def _s_AugAssign(self, node: ast.AugAssign, stmts: list[ast.stmt], i: int) -> S.Stmt:
        target = node.target
        cell = self._cell(target.id) if isinstance(target, ast.Name) else None
        if cell is not None:  # x += v of a T.local_scalar: a store into it
            return cell.store(_BINOPS[type(node.op)](cell.load(), self._operand(node.value)))
        if not (isinstance(target, ast.Subscript) and isinstance(self.eval(target.value), Buffer)):
            raise self.err(node, "only buffer elements can be updated in place (A[i] += v); "
                                 "script variables are immutable")
        load = self.eval(target)
        if not isinstance(load, E.BufferLoad):
            raise self._region_error(load, target)
        value = _BINOPS[type(node.op)](load, self.eval(node.value))
        return S.BufferStore(load.buffer, value, load.indices)

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
        if node.value is None:
            self.bind(node.target.id, E.Var(node.target.id, dtype))
            return None
        value = self._operand(node.value)
        return self._let(node.target.id, value, dtype, stmts, i)

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
            return self._let(name, value, None, stmts, i)
        self.bind(name, value)  # a Python value (layout, region, tuple...): bound as is
        bind_hook = getattr(type(value), "__tvm_script_bind__", None)
        if bind_hook is not None:
            # a script helper (a pipeline, a shared-memory pool): it learns its name and gives
            # the statements that set it up (allocations, initialisation), or None
            return bind_hook(value, name)
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
        buf = self.eval(target.value)
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
        return S.BufferStore(buf, value, load.indices)

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

    def _scalar_def(self, node: ast.Assign, buf: Buffer, spec: _T.BufferSpec) -> S.Stmt:
        """``x = T.local_scalar(...)`` / ``T.shared_scalar`` / ``T.decl_scalar``: the 0-d
        buffer, with ``x`` bound to its element (a :class:`ScalarCell`)."""
        span = self.src.span(node)
        buf.span = span
        define: S.Stmt = S.AllocBuffer(buf, spec.annotations) if spec.kind == "alloc" \
            else S.DeclBuffer(buf)
        define.span = span
        cell = ScalarCell(buf)
        self.bind(buf.name, cell)
        if spec.init is None:
            return define
        init = cell.store(spec.init)
        init.span = span
        return S.SeqStmt([define, init])

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


# -- helpers ---------------------------------------------------------------------------------
_MAX_HELPER_DEPTH = 32


class ScalarCell:
    """A script name bound by ``T.local_scalar`` / ``T.shared_scalar`` / ``T.alloc_scalar`` /
    ``T.decl_scalar``: the one element of a 0-d buffer. Read, it is the load ``x[()]``;
    assigned (``x = v``, ``x += v``, in any nested block), a store into it; ``x.source`` /
    ``x.buffer`` is the buffer and ``x.data`` its pointer. Only the parser sees it: the IR
    holds the buffer, so the printer writes the 0-d buffer and ``x[()]``."""

    BUFFER_ATTRS = ("source", "buffer", "data")

    def __init__(self, buffer: Buffer) -> None:
        self.buffer = buffer

    def load(self) -> E.BufferLoad:
        return E.BufferLoad(self.buffer, [])

    def store(self, value: Any) -> S.BufferStore:
        return S.BufferStore(self.buffer, value, [])

    def attribute(self, name: str) -> Any:
        return self.buffer.data if name == "data" else self.buffer

    def __repr__(self) -> str:
        return f"ScalarCell({self.buffer.name})"


class _NestedHelper:
    """A ``def`` inside a script: its AST, signature (defaults evaluated at the ``def``), the
    source it is in and the scopes around it (the dicts themselves: names bound after the
    ``def`` are seen, as in a Python closure)."""

    __slots__ = ("node", "scopes", "signature", "src")

    def __init__(self, node: ast.FunctionDef, signature: inspect.Signature, src: Source,
                 scopes: list[dict[str, Any]]) -> None:
        self.node = node
        self.signature = signature
        self.src = src
        self.scopes = scopes

    def __repr__(self) -> str:
        return f"<script helper {self.node.name}{self.signature}>"


class _Evaluated:
    """An index already evaluated (spread from a tuple), as opposed to an AST node."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


#: comparisons that look at the object itself (`r is None`), not at a value
_IDENTITY_OPS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


def _range_text(r: Range) -> str:
    """One range of a region as an index list writes it: ``i`` or ``lo:hi``."""
    if isinstance(r.extent, E.IntImm) and r.extent.value == 1:
        return str(r.min)
    if isinstance(r.min, E.IntImm) and isinstance(r.extent, E.IntImm):
        return f"{r.min.value}:{r.min.value + r.extent.value}"
    return f"{r.min}:{r.min} + {r.extent}"


def _is_slice_item(item: Any) -> bool:
    return isinstance(item, ast.Slice) or (isinstance(item, _Evaluated)
                                           and isinstance(item.value, slice))


def _extent(lo: Any, hi: Any) -> Any:
    if isinstance(lo, E.IntImm):
        lo_v: Any = lo.value
    else:
        lo_v = lo
    if isinstance(lo_v, int) and not isinstance(lo_v, bool) and lo_v == 0:
        return hi
    if isinstance(lo_v, int) and isinstance(hi, int):
        return hi - lo_v
    if isinstance(lo, E.IntImm) and isinstance(hi, E.IntImm):
        return E.IntImm(hi.dtype, hi.value - lo.value)
    return hi - lo


def _check_extent(p: Parser, node: ast.AST, ext: Any) -> Any:
    bad = isinstance(ext, float) or (isinstance(ext, E.PrimExpr) and not ext.dtype.is_integer)
    if bad:
        dt = "float" if isinstance(ext, float) else str(ext.dtype)
        raise p.err(node, f"loop extent must be an integer, got a {dt} value")
    return ext


def _loop_dtype(start: Any, ext: Any) -> DataType:
    for v in (ext, start):
        if isinstance(v, E.PrimExpr) and v.dtype.is_integer:
            return v.dtype
    return DataType("int32")


def _is_with_builder(callee: Any) -> bool:
    """The builders a `with` statement may call: T.attr, T.hint, T.let, Tx[.<scope>].compose_op."""
    return (callee is _T.attr or callee is _T.hint or callee is _T.let
            or callee is _T.launch_thread or isinstance(callee, _tile.ComposeOpBuilder))


def _is_param_type_call(p: Parser, node: ast.Call) -> bool:
    """``tm: T.TensorMap()``: a by-value parameter type written as a call (the seed's form)."""
    return isinstance(p.eval(node.func), _T.ParamType)


def _thread_loop(var: E.Var, spec: _T.LaunchThreadSpec, body: S.Stmt) -> S.Stmt:
    """What ``T.launch_thread`` builds: a loop bound to the thread axis."""
    return S.For(var, E.IntImm(var.dtype, 0), spec.extent, S.ForKind.THREAD_BINDING, body,
                 thread_tag=spec.thread)


def _attr_chain(items: dict[str, Any], node: Any, body: S.Stmt) -> S.Stmt:
    for key, value in reversed(list(items.items())):
        body = S.AttrStmt(node, key, value, body)
    return body


def _decorator_private(p: Parser, fdef: ast.FunctionDef) -> bool | None:
    """``True``/``False`` for ``@T.prim_func(private=...)``/``@T.prim_func``; None if absent."""
    for dec in fdef.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if p.eval(target) is not _T.prim_func:
            continue
        if isinstance(dec, ast.Call):
            for kw in dec.keywords:
                if kw.arg == "private":
                    return bool(p.eval(kw.value))
        return False
    return None


def _closure_vars(fn: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is None:
        return out
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            continue
    return out


def parse_function(fn: Any, *, private: bool = False,
                   extra_vars: dict[str, Any] | None = None) -> PrimFunc:
    """Parse a Python function object's source into a PrimFunc (``@T.prim_func``)."""
    try:
        raw = inspect.getsource(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError) as exc:
        raise TypeError(f"@T.prim_func needs the function's source text ({exc}); use "
                        f"tvm.script.from_source(text) for code without a file") from None
    first = fn.__code__.co_firstlineno
    source = Source.from_snippet(raw, filename, first)
    tree = _parse_ast(source)
    fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fdef is None:
        raise source.error(tree.body[0] if tree.body else None, "@T.prim_func expects a `def`")
    lookups = [_closure_vars(fn), dict(extra_vars or {}), fn.__globals__]
    try:
        return Parser(source, lookups).function(fdef, private=private)
    except DiagnosticError as exc:
        # The parser's own frames say nothing to the user: the diagnostic points at the script.
        raise exc.with_traceback(None) from None


def _parse_ast(source: Source) -> ast.Module:
    """``ast.parse`` with every failure located: syntax errors where Python says, and
    expressions too deep for Python's parser (or ours) at their line."""
    nul = source.text.find("\0")
    if nul >= 0:  # Python < 3.12 raises a bare ValueError for it
        line = source.text.count("\n", 0, nul) + 1
        col = nul - (source.text.rfind("\n", 0, nul) + 1)
        raise source.error(_node_at(line, col),
                           "the source contains a null character (\\0); remove it") from None
    try:
        tree = ast.parse(source.text, source.filename)
    except SyntaxError as exc:
        raise source.error(_syntax_node(exc), exc.msg) from None
    except (RecursionError, MemoryError):
        raise source.error(_busiest_line(source.text), _TOO_DEEP) from None
    too_deep = _too_deep_expr(tree)
    if too_deep is not None:
        raise source.error(too_deep, f"this expression nests more than {MAX_DEPTH} levels "
                                     f"deep; scripts may nest at most {MAX_DEPTH}. {_SPLIT_HINT}")
    return tree


# Python's operators of tvm.ir.depth.CHAIN_OPS
_CHAIN_AST = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)


def _too_deep_expr(tree: ast.AST) -> ast.AST | None:
    """The first expression nested deeper than MAX_DEPTH (counted iteratively; a link of a
    flat chain ``a + b + c`` counts CHAIN_WEIGHT, as in ir_depth)."""
    stack: list[tuple[ast.AST, float, type | None]] = [(tree, 0, None)]
    while stack:
        node, depth, chain = stack.pop()
        if isinstance(node, ast.expr):
            same = isinstance(node, ast.BinOp) and type(node.op) is chain
            depth += CHAIN_WEIGHT if same else 1
            if depth > MAX_DEPTH:
                return node
        link = (type(node.op) if isinstance(node, ast.BinOp) and isinstance(node.op, _CHAIN_AST)
                else None)
        stack.extend((child, depth, link if isinstance(node, ast.BinOp) and child is node.left
                      else None) for child in ast.iter_child_nodes(node))
    return None


def _busiest_line(text: str) -> ast.AST:
    """A node at the line with the most tokens: where an expression too deep for Python's own
    parser is."""
    counts: dict[int, int] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            counts[tok.start[0]] = counts.get(tok.start[0], 0) + 1
    except (tokenize.TokenError, SyntaxError):
        pass
    node = ast.Pass()
    node.lineno = max(counts, key=lambda k: counts[k]) if counts else 1
    node.col_offset = 0
    return node


def _syntax_node(exc: SyntaxError) -> ast.AST:
    return _node_at(exc.lineno or 1, max((exc.offset or 1) - 1, 0))


def _node_at(line: int, col: int) -> ast.AST:
    """A placeholder node at ``line`` (1-based) and ``col`` (0-based), for a located error."""
    node = ast.Pass()
    node.lineno = line
    node.col_offset = col
    return node


def _default_globals() -> dict[str, Any]:
    return {"T": _T, "I": _I, "tvm": tvm}


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
    private = _decorator_private(probe, node)
    if private is None:
        raise source.error(node, f"function {node.name} is not decorated with @T.prim_func")
    return Parser(source, lookups).function(node, private=private, name=name)


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

