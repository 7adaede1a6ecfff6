"""The parser's shared pieces: operator tables, the errors' wording, the checks of what
builders return, :class:`ParserBase` (a parse's state, names and errors), the script
objects only the parser sees (:class:`ScalarCell`, nested helpers) and small helpers."""

from __future__ import annotations

import ast
import builtins
import enum
import inspect
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import tvm

from ...error import DiagnosticError
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.buffer import Buffer, BufferRegion, Range
from ...ir.dtype import DataType
from ...ir.node import Node
from ...ir.op import Op
from ...tirx.script import builder as _builder
from .. import ir as _I
from .. import tirx as _T
from ..diagnostics import Source
from ..source import _TOO_DEEP
from ..tirx import tile as _tile

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


class ParserBase:
    """A parse's state, its names and its errors; the expression and statement halves
    (:mod:`._expr`, :mod:`._stmt`) build on it."""

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
        # the buffers of the script's scalar cells (their values, passed into helpers' objects,
        # are stored into when assigned as attributes: `self.count = v`)
        self._cell_buffers: set[int] = set()

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


    def _bound(self, name: str) -> Any:
        """What ``name`` is bound to in the script's scopes (None if it is not)."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _cell(self, name: str) -> ScalarCell | None:
        """The scalar cell (``T.local_scalar`` & co) ``name`` is bound to in the script."""
        for scope in reversed(self.scopes):
            if name in scope:
                value = scope[name]
                return value if isinstance(value, ScalarCell) else None
        return None


    if TYPE_CHECKING:  # what the expression and statement halves call of each other
        def eval(self, node: ast.AST) -> Any: ...
        def _operand(self, node: ast.expr) -> Any: ...
        def _subscripted(self, node: ast.expr) -> Any: ...
        def _elts(self, elts: list[ast.expr]) -> list[Any]: ...
        def _region_error(self, region: BufferRegion, node: ast.AST) -> DiagnosticError: ...
        def _buffer_access(self, buf: Buffer, node: ast.Subscript) -> E.BufferLoad | BufferRegion: ...
        def _index_items(self, index: ast.expr, name: str) -> list[Any]: ...
        def _let_expr(self, node: ast.Call) -> E.Let: ...
        def _extent(self, lo_node: ast.expr | None, lo: Any, hi_node: ast.expr) -> Any: ...
        def block(self, stmts: list[ast.stmt], bindings: dict[str, Any] | None = None) -> S.Stmt: ...
        def stmts(self, stmts: list[ast.stmt], start: int) -> S.Stmt: ...
        def _rest(self, stmts: list[ast.stmt], i: int, build: Callable[[S.Stmt], S.Stmt]) -> None: ...


# -- helpers ---------------------------------------------------------------------------------
_MAX_HELPER_DEPTH = 32


def stored_value(buf: Buffer, value: Any) -> Any:
    """``value`` as ``buf[...] = value`` stores it: a value of another element type is cast to
    the buffer's (``reg[i] = tx * 8`` into a float16 buffer stores ``T.float16(tx * 8)``), as
    the script's assignment converts; lanes are kept. IR built directly is not converted: the
    verifier rejects a mismatched store there."""
    if isinstance(value, E.PrimExpr) and value.dtype.element_of() != buf.dtype.element_of():
        return E.Cast(buf.dtype.element_of().with_lanes(value.dtype.lanes), value)
    return value


class ScalarCell:
    """A script name bound to one value in memory: ``x: T.int32 [= v]`` (the seed's mutable
    scalar), ``T.local_scalar`` / ``T.shared_scalar`` / ``T.alloc_scalar`` / ``T.decl_scalar``:
    the element of a one-element buffer. Read, it is the load ``x[0]``; assigned (``x = v``,
    ``x += v``, in any nested block), a store into it; ``x[0]`` is the element too, and
    ``x.source`` / ``x.buffer`` is the buffer and ``x.data`` its pointer. Only the parser sees
    it: the IR holds the buffer, so the printer writes ``x[0]`` (and a ``local`` one's
    allocation as ``x: T.int32``)."""

    BUFFER_ATTRS = ("source", "buffer", "data")

    def __init__(self, buffer: Buffer) -> None:
        self.buffer = buffer

    def indices(self) -> list[int]:
        return [0] * len(self.buffer.shape)

    def load(self) -> E.BufferLoad:
        return E.BufferLoad(self.buffer, self.indices())

    def store(self, value: Any) -> S.Stmt:
        # through the module, so that the seed's tests can replace the builder there
        stmt: S.Stmt = _builder.buffer_store(self.buffer, stored_value(self.buffer, value),
                                            self.indices())
        return stmt

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


def _check_extent(p: ParserBase, node: ast.AST, ext: Any) -> Any:
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
    """The builders a `with` statement may call: T.attr, T.hint, T.let, T.launch_thread,
    Tx[.<scope>].compose_op, and scope builders: classes whose instances wrap the block
    (``__tvm_scope__(body) -> Stmt``, e.g. the cuda backend's ``WarpRole``)."""
    return (callee is _T.attr or callee is _T.hint or callee is _T.let
            or callee is _T.launch_thread or isinstance(callee, _tile.ComposeOpBuilder)
            or (isinstance(callee, type) and hasattr(callee, "__tvm_scope__")))


def _is_param_type_call(p: ParserBase, node: ast.Call) -> bool:
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

def _default_globals() -> dict[str, Any]:
    return {"T": _T, "I": _I, "tvm": tvm}
