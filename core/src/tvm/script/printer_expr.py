"""Values and expressions of the TVMScript printer: the layer of :class:`_ExprPrinter` below the
statement printer (``printer._Printer``). It prints arguments (expressions, buffers, regions,
layouts, tile calls, Python values) and expressions by precedence."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeGuard

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer, BufferRegion, Range
from ..ir.layout import Axis, Iter, TileLayout
from ..ir.node import Node
from ..ir.op import OpCategory
from ..ir.stmt import _const_arg
from ..ir.structural import structural_equal
from ..ir.visitor import handler
from ..tirx.operator.tile_primitive.ops import config_keyword_ok
from . import tirx as _tirx
from .printer_names import _identifier, _Names

_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _ATOM = 1, 2, 3, 4, 7, 8, 9, 10
_INFIX = {E.Add: ("+", _ADD), E.Sub: ("-", _ADD), E.Mul: ("*", _MUL), E.Div: ("/", _MUL),
          E.FloorDiv: ("//", _MUL), E.FloorMod: ("%", _MUL)}
_CMP_SYM = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}
_CALL_BINOPS = {E.Min: "T.min", E.Max: "T.max", E.Mod: "T.truncmod"}
_SCOPE_PREFIX = {"thread": "tile", "warp": "warp", "warpgroup": "wg", "cta": "cta",
                 "cluster": "cluster"}
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class _ExprPrinter:
    """Arguments and expressions; the statement printer derives from it."""

    def __init__(self) -> None:
        self.names = _Names()
        self.data_of: dict[int, str] = {}  # buffer data var id -> "A.data"

    @property
    def T(self) -> Any:  # noqa: N802 - the facade's own name
        return _tirx

    # -- tile calls (statements, and arguments of compose ops) -----------------------------
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
            if (len(args) == 2 and not keep and spec.defaults_to_dst == spec.params[1]
                    and args[1] == args[0]):
                args.pop()  # the in-place form: Tx.exp2(A)
            args += keep
        args += self.tile_keywords(s)
        return f"T.{_SCOPE_PREFIX[s.scope]}.{op_name}({', '.join(args)})"

    def tile_keywords(self, s: S.TilePrimitiveCall) -> list[str]:
        """``dispatch=``, ``workspace=`` and the config of a tile call, where set. A config
        entry is written as a keyword (``hint="fast"``), as the seed prints it, unless its key
        cannot be one (not an identifier, or a name the call takes itself): those go in
        ``config={...}``."""
        kws = []
        if s.dispatch is not None:
            kws.append(f"dispatch={json.dumps(s.dispatch)}")
        if s.workspace:
            kws.append(f"workspace={self.raw(s.workspace)}")
        spec = s.op.get_attr("tile_spec")
        rest = {}
        for key, value in (s.config or {}).items():
            if config_keyword_ok(key, spec):
                kws.append(f"{key}={self.raw(value)}")
            else:
                rest[key] = value
        if rest:
            kws.append(f"config={self.raw(rest)}")
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
        if isinstance(a, E.IndexLambda):
            return self.index_lambda(a)
        if isinstance(a, (list, tuple)):
            return _seq_text(a, self.arg)
        if isinstance(a, Node):
            ctor = getattr(type(a), "__script_ctor__", None)
            if ctor is None:
                raise TypeError(f"the printer cannot print a {type(a).__name__}")
            defaults = getattr(type(a), "__script_defaults__", {})
            fields = ", ".join(f"{k}={self.raw(x)}" for k, x in a.fields()
                               if k not in defaults or x != defaults[k])
            return f"T.{ctor}({fields})"
        return self.raw(a)

    def index_lambda(self, f: E.IndexLambda) -> str:
        """``lambda i, j: i < j`` (its names in a scope of their own)."""
        self.names.push()
        try:
            params = ", ".join(self.names.define(p, p.name) for p in f.params)
            return f"lambda {params}: {self.expr(f.body)}"
        finally:
            self.names.pop()

    def raw(self, v: Any) -> str:
        """A Python value stored as is (attributes, configs): int32 immediates keep their type
        (``T.int32(1)``) so that they do not read back as Python ints."""
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.raw(k)}: {self.raw(x)}" for k, x in v.items()) + "}"
        if isinstance(v, (list, tuple)):
            return _seq_text(v, self.raw)
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
        if lay.offset:
            terms = ", ".join(f"{self.axis(ax)}: {self.expr(v)}" for ax, v in lay.offset.items())
            text += f", offset={{{terms}}}"
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
        method = handler(self, "e_", e)
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

    def e_Shuffle(self, e: E.Shuffle) -> tuple[str, int]:
        vectors = ", ".join(self.expr(v) for v in e.vectors)
        indices = ", ".join(self.expr(i) for i in e.indices)
        return f"T.Shuffle([{vectors}], [{indices}])", _ATOM

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


def _seq_text(items: list[Any] | tuple[Any, ...], text: Callable[[Any], str]) -> str:
    """A list as ``[a, b]``, a tuple as ``(a, b)`` (``(a,)`` for one item)."""
    inner = ", ".join(text(x) for x in items)
    if isinstance(items, list):
        return f"[{inner}]"
    return f"({inner},)" if len(items) == 1 else f"({inner})"


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
