"""The expression half of the parser: each Python expression evaluated to IR or a Python
value; calls (builders, ``T.inline`` functions, nested helpers) and buffer indexing."""


from __future__ import annotations

import ast
import inspect
from typing import Any

from ...error import DiagnosticError
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.buffer import Buffer, BufferRegion, Range, strided_indices
from .. import tirx as _T
from ..diagnostics import Source
from ..jit import JitFunction
from ..source import _closure_vars
from ._support import (
    _BINOPS,
    _CMPOPS,
    _IDENTITY_OPS,
    _MAX_HELPER_DEPTH,
    _UNSUPPORTED,
    ParserBase,
    ScalarCell,
    _default_globals,
    _Evaluated,
    _extent,
    _foreign_value,
    _held_values,
    _is_slice_item,
    _NestedHelper,
    _range_text,
    _spec_inside,
    _spec_misuse,
    _unsupported,
)

#: the modules of the builders ``T`` exports (``T.alloc_buffer`` is defined in ``._buffers``)
_T_MODULES = (_T.__name__, f"{_T.__name__}._buffers", f"{_T.__name__}._loops")



def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    """A function body's statements less its string-literal expressions (the docstring)."""
    return [b for b in body
            if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
                    and isinstance(b.value.value, str))]

class ExprParser(ParserBase):
    """Evaluates expressions (``_e_<node>``) for :class:`~tvm.script.parser.Parser`."""

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
        value = self._attribute(node)
        return value.load() if isinstance(value, ScalarCell) else value

    def _attribute(self, node: ast.Attribute) -> Any:
        """``obj.attr``, a scalar cell it holds left as the cell (a ``T.meta_class``
        instance's scalar); ``x.source`` / ``x.buffer`` / ``x.data`` of a cell ``x`` (a name
        or such an attribute: ``self.n.buffer``) are its buffer and pointer."""
        base = self._unloaded(node.value)
        if isinstance(base, ScalarCell):
            if node.attr in ScalarCell.BUFFER_ATTRS:
                return base.attribute(node.attr)
            base = base.load()
        return getattr(base, node.attr)

    def _unloaded(self, node: ast.expr) -> Any:
        """``node``'s value, evaluated once, a scalar cell left as the cell (not its load)."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id, node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        return self.eval(node)

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

    def _subscripted(self, node: ast.expr) -> Any:
        """What ``node[...]`` indexes: a scalar cell's buffer (``x[0]`` of ``x: T.int32``, as
        the printer writes its accesses), else ``node``'s value."""
        value = self._unloaded(node)
        return value.buffer if isinstance(value, ScalarCell) else value

    def _e_Subscript(self, node: ast.Subscript) -> Any:
        obj = self._subscripted(node.value)
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
            if getattr(func, "__module__", "") in _T_MODULES and text.startswith(f"{name}("):
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
            bound = inspect.signature(fn).bind(*macro.bound_args, *args, **kwargs)
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
        body = _without_docstring(fdef.body)
        saved = (self.src, self.outer, self.scopes, self.top_block)
        self.src = source
        self.outer = [_closure_vars(fn), fn.__globals__, _default_globals()]
        self.scopes = [dict(bound.arguments)]
        self.top_block = body
        try:
            return self._expanded(body)
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
        body = _without_docstring(helper.node.body)
        saved = (self.src, self.scopes, self.top_block, self.loop_depth)
        self.src = helper.src
        self.scopes = [*helper.scopes, dict(bound.arguments)]
        self.top_block = body
        self.loop_depth = 0  # a `break` in the helper cannot leave the caller's loop
        self._helper_depth += 1
        try:
            return self._expanded(body)
        finally:
            self.src, self.scopes, self.top_block, self.loop_depth = saved
            self._helper_depth -= 1

    def _expanded(self, body: list[ast.stmt]) -> Any:
        """An inlined body parsed here: a body of one ``return <expr>`` gives that expression,
        any other its statements."""
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            return self.eval(body[0].value)
        return self.stmts(body, 0)

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

