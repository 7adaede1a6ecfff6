"""How a C-style printer prints expressions: :class:`CExprPrinter`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ..error import CodegenError, located
from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.dtype import DataType
from ..ir.intrin import check_requirements
from ..ir.visitor import handler, substitute
from .c_base import CBase
from .c_rules import (
    OpRule,
    OpTemplate,
    _floordiv_helpers,
    _operands,
    _pick,
    _positive_const,
    _saturate,
    _script,
    _strip,
)

if TYPE_CHECKING:
    from .c_style import CodegenCStyle

#: the logical operators, whose IR symbols are words
_C_LOGIC = {"and": "&&", "or": "||"}


class CExprPrinter(CBase):
    """Expressions, op templates, flat indices and vector lanes."""

    # -- expressions ------------------------------------------------------------------------------
    def print_expr(self, e: Any) -> str:
        if isinstance(e, Buffer):
            return self.buffer_ptr(e)
        if isinstance(e, E.PrimExpr) and e.dtype.lanes > 1 and not isinstance(e, E.StringImm):
            raise CodegenError(f"target {self.target_kind!r}: a {e.dtype} expression "
                           f"({type(e).__name__}) outside a buffer store cannot be printed")
        method = handler(self, "expr_", e)
        if method is None:
            raise CodegenError(f"target {self.target_kind!r}: codegen cannot print "
                           f"{type(e).__name__} {e!r}")
        span = getattr(e, "span", None)
        if span is not None:  # an op call of the user's script: errors point at its line
            with located(span):
                return method(e)
        return method(e)

    def expr_Var(self, v: E.Var) -> str:
        return self.var_name(v)

    def expr_IntImm(self, e: E.IntImm) -> str:
        dt, v = e.dtype, e.value
        if dt.is_bool:
            return "true" if v else "false"
        suffix = self.int64_suffix
        if dt.bits == 64 and suffix is not None:
            if dt.is_uint:
                return f"{v}U{suffix}"
            return f"(-9223372036854775807{suffix} - 1)" if v == -(2**63) else (
                f"({v}{suffix})" if v < 0 else f"{v}{suffix}")
        if dt.is_uint:
            return f"UINT64_C({v})" if dt.bits == 64 else (f"{v}U" if dt.bits == 32
                                                            else f"(({self.c_type(dt)}){v})")
        if dt.bits == 64:
            return "INT64_MIN" if v == -(2**63) else f"INT64_C({v})"
        if dt.bits == 32:
            return "(-2147483647 - 1)" if v == -(2**31) else (f"({v})" if v < 0 else str(v))
        return f"(({self.c_type(dt)}){v})"

    def expr_FloatImm(self, e: E.FloatImm) -> str:
        dt, v = e.dtype, e.value
        if math.isnan(v):
            text = "NAN"
        elif math.isinf(v):
            text = "INFINITY" if v > 0 else "(-INFINITY)"
        else:
            text = repr(v)
            if "e" not in text and "." not in text:
                text += ".0"
            if dt.bits != 64:
                text += "f"
            if v < 0:
                text = f"({text})"
        if dt.bits == 64:
            return text
        if self.is_emulated(dt):
            return f"{self.round_fn(dt)}({text})"
        if dt.bits == 16:
            return f"(({self.c_type(dt)}){text})"
        return text

    def expr_StringImm(self, e: E.StringImm) -> str:
        return self.c_string(e.value)

    def expr_Cast(self, e: E.Cast) -> str:
        dst, src = e.dtype, e.value.dtype
        value = self.print_expr(e.value)
        if dst == src:
            return value
        if dst.is_bool:
            return f"(({value}) != 0)"
        if self.is_emulated(dst):
            return f"{self.round_fn(dst)}((float)({value}))"
        if dst.is_integer and src.is_float:
            if isinstance(e.value, E.FloatImm):  # C leaves inf, nan and overflow undefined
                return self.expr_IntImm(E.IntImm(dst.element_of(), _saturate(e.value.value, dst)))
            if self.bounds_check:  # checked mode: every conversion is defined (saturating)
                return f"{self._saturating_cast(dst, src)}({value})"
        return f"(({self.c_type(dst)})({value}))"

    def _saturating_cast(self, dst: DataType, src: DataType) -> str:
        lo, hi = E.int_range(dst.element_of())
        ctype, stype = self.c_type(dst), self.c_type(src)
        name = f"tvm_sat_{dst.element_of()}_{src.element_of()}"
        lo_text, hi_text = self.expr_IntImm(E.IntImm(dst, lo)), self.expr_IntImm(E.IntImm(dst, hi))
        self.add_helper(name, f"static inline {ctype} {name}({stype} x) {{\n"
                              f"  if (x != x) return 0;\n"
                              f"  if (x <= {float(lo)!r}) return {lo_text};\n"
                              f"  if (x >= {float(hi)!r}) return {hi_text};\n"
                              f"  return ({ctype})x;\n}}")
        return name

    def _arith(self, e: E.BinaryOp, op: str) -> str:
        text = f"({self.print_expr(e.a)} {op} {self.print_expr(e.b)})"
        return f"{self.round_fn(e.dtype)}{text}" if self.is_emulated(e.dtype) else text

    def _infix(self, e: E.BinaryOp) -> str:
        """``+ - * /``: C spells them as the node's symbol."""
        return self._arith(e, e.symbol)

    expr_Add = expr_Sub = expr_Mul = expr_Div = _infix

    def expr_Mod(self, e: E.Mod) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float32": "fmodf({0}, {1})", "float64": "fmod({0}, {1})"})
        return self._arith(e, "%")

    def expr_FloorDiv(self, e: E.FloorDiv) -> str:
        dt = e.dtype
        if dt.is_float:
            return self._float_call(e, {"float32": "floorf({0} / {1})", "float64": "floor({0} / {1})"})
        if dt.is_uint or dt.is_bool or (self._nonneg(e.a) and _positive_const(e.b)):
            return self._arith(e, "/")
        return self._int_helper(e, "floordiv")

    def expr_FloorMod(self, e: E.FloorMod) -> str:
        dt = e.dtype
        if dt.is_float:
            return self._float_call(e, {"float32": "({0} - floorf({0} / {1}) * {1})",
                                        "float64": "({0} - floor({0} / {1}) * {1})"})
        if dt.is_uint or dt.is_bool or (self._nonneg(e.a) and _positive_const(e.b)):
            return self._arith(e, "%")
        return self._int_helper(e, "floormod")

    def _int_helper(self, e: E.BinaryOp, what: str) -> str:
        ctype = self.c_type(e.dtype)
        suffix = f"i{e.dtype.bits}"
        for name, code in _floordiv_helpers(ctype, suffix):
            self.add_helper(name, code)
        return f"tvm_{what}_{suffix}({self.print_expr(e.a)}, {self.print_expr(e.b)})"

    def _float_call(self, e: E.BinaryOp, table: Mapping[str, OpRule]) -> str:
        args = [self.print_expr(e.a), self.print_expr(e.b)]
        return self.render_template(table, e.dtype, args, e)

    def expr_Min(self, e: E.Min) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float32": "fminf({0}, {1})", "float64": "fmin({0}, {1})"})
        a, b = self.print_expr(e.a), self.print_expr(e.b)
        return f"((({a}) < ({b})) ? ({a}) : ({b}))"

    def expr_Max(self, e: E.Max) -> str:
        if e.dtype.is_float:
            return self._float_call(e, {"float32": "fmaxf({0}, {1})", "float64": "fmax({0}, {1})"})
        a, b = self.print_expr(e.a), self.print_expr(e.b)
        return f"((({a}) > ({b})) ? ({a}) : ({b}))"

    def _cmp(self, e: E.BinaryOp, op: str) -> str:
        return f"({self.print_expr(e.a)} {op} {self.print_expr(e.b)})"

    def expr_CmpOp(self, e: E.CmpOp) -> str:
        """Comparisons (C spells them as the node's symbol) and ``&&``/``||``."""
        return self._cmp(e, _C_LOGIC.get(e.symbol, e.symbol))

    def expr_Not(self, e: E.Not) -> str:
        return f"(!{self.print_expr(e.a)})"

    def expr_Select(self, e: E.Select) -> str:
        c, t, f = (self.print_expr(x) for x in (e.condition, e.true_value, e.false_value))
        return f"({c} ? {t} : {f})"

    def expr_BufferLoad(self, e: E.BufferLoad) -> str:
        text = f"{self.buffer_ptr(e.buffer)}[{self.flat_index(e.buffer, e.indices)}]"
        if self.is_emulated(e.buffer.dtype):
            return f"{self.from_storage_fn(e.buffer.dtype)}({text})"
        return text

    def expr_Let(self, e: E.Let) -> str:
        # C has no let-expression; the value is pure, so substitute it.
        return self.print_expr(substitute(e.body, {e.var: e.value}))

    def expr_Ramp(self, e: E.Ramp) -> str:
        raise CodegenError(f"target {self.target_kind!r}: a ramp outside a buffer store")

    def expr_Call(self, call: E.Call) -> str:
        op = call.op
        rule = op.get_codegen(self.target_kind)
        check_requirements(op, self.target_kind, self.target)
        if rule is None:
            rule = self.op_templates.get(op.name)
        if rule is None:
            raise CodegenError(
                f"op `{op.name}` has no codegen rule for target {self.target_kind!r}: register one "
                f"with Op.get({op.name!r}).set_codegen({self.target_kind!r}, rule) in the "
                "backend's tvm_register_ops hook")
        args = [self.print_expr(a) if isinstance(a, (E.PrimExpr, Buffer)) else str(a)
                for a in call.args]
        key = next((a.dtype for a in call.args
                    if isinstance(a, E.PrimExpr) and not isinstance(a, E.StringImm)), call.dtype)
        return self.render_template(rule, key, args, call)

    # -- templates --------------------------------------------------------------------------------
    def render_math(self, call: E.Call, table: Mapping[str, OpRule], args: list[str]) -> str:
        return self.render_template(table, call.dtype, args, call)

    def render_template(self, rule: OpTemplate, dtype: DataType, args: list[str], node: Any) -> str:
        """Apply ``rule`` to printed ``args``; ``dtype`` selects an entry of a dict rule."""
        dtype = dtype.element_of()
        if isinstance(rule, Mapping):
            chosen = _pick(rule, dtype)
            if chosen is None and dtype.is_float and dtype.bits < 32 and "float32" in rule:
                return self._promoted(rule["float32"], node, args)
            if chosen is None:
                name = node.op.name if isinstance(node, E.Call) else type(node).__name__
                raise CodegenError(f"op `{name}` has no codegen rule for data type {dtype} on "
                               f"target {self.target_kind!r} (rules exist for {sorted(rule)})")
            rule = chosen
        return self._apply(rule, node, args)

    def _apply(self, rule: OpRule, node: Any, args: list[str]) -> str:
        if callable(rule):
            return rule(cast("CodegenCStyle", self), node, args)  # every printer is one
        result_t = self.c_type(node.dtype) if not node.dtype.is_void else "void"
        return rule.format(*args, dtype=result_t)

    def _promoted(self, rule: OpRule, node: Any, args: list[str]) -> str:
        """Compute a 16-bit float op through its float32 rule."""
        fargs = [f"(float)({a})" if isinstance(x, E.PrimExpr) and x.dtype.is_float else a
                 for a, x in zip(args, _operands(node))]
        text = self._apply(rule, node, fargs)
        dt = node.dtype
        if not dt.is_float:
            return text
        if self.is_emulated(dt):
            return f"{self.round_fn(dt)}({text})"
        return f"(({self.c_type(dt)})({text}))"

    # -- indices and lanes ------------------------------------------------------------------------
    def flat_index(self, buffer: Buffer, indices: list[E.PrimExpr]) -> str:
        """The element offset of ``indices`` in ``buffer`` (flat, or row-major / strided)."""
        index: E.PrimExpr | None
        if len(indices) == 1:
            index = indices[0]
        else:
            index = None
            strides = buffer.strides or None
            for k, i in enumerate(indices):
                if strides is not None:
                    term = i * strides[k]
                    index = term if index is None else index + term
                else:
                    index = i if index is None else index * buffer.shape[k] + i
        assert index is not None
        if not (isinstance(buffer.elem_offset, E.IntImm) and buffer.elem_offset.value == 0):
            index = buffer.elem_offset + index
        try:
            return _strip(self.print_expr(index))
        except CodegenError as exc:
            if index.dtype.bits != 64 or "int64" not in str(exc):
                raise
            raise CodegenError(
                f"{exc}. The offsets into buffer `{buffer.name}` (extent "
                f"{', '.join(_script(d) for d in buffer.shape)}) are 64-bit because it may hold "
                "2**31 elements or more: bound each symbolic extent with a T.assume at the top "
                "of the function (T.assume(n <= 65536)) so that the analyzer can prove 32 bits "
                "enough") from None

    def lane(self, e: Any, lane: int) -> Any:
        """The scalar expression computing lane ``lane`` of vector expression ``e``."""
        if not isinstance(e, E.PrimExpr) or e.dtype.lanes == 1:
            return e
        if isinstance(e, E.Ramp):
            base = self.lane(e.base, lane)
            stride = self.lane(e.stride, lane)
            if lane == 0:
                return base
            if isinstance(stride, E.IntImm):
                return base + E.IntImm(stride.dtype, stride.value * lane)
            return base + stride * lane
        if isinstance(e, E.Broadcast):
            return e.value
        if isinstance(e, E.BinaryOp):
            return type(e)(self.lane(e.a, lane), self.lane(e.b, lane))
        if isinstance(e, E.Not):
            return E.Not(self.lane(e.a, lane))
        if isinstance(e, E.Select):
            return E.Select(self.lane(e.condition, lane), self.lane(e.true_value, lane),
                            self.lane(e.false_value, lane))
        if isinstance(e, E.Cast):
            return E.Cast(e.dtype.element_of(), self.lane(e.value, lane))
        if isinstance(e, E.BufferLoad):
            return E.BufferLoad(e.buffer, [self.lane(i, lane) for i in e.indices])
        if isinstance(e, E.Call):
            return E.Call(e.dtype.element_of(), e.op, [self.lane(a, lane) for a in e.args])
        if isinstance(e, E.Let):
            return self.lane(substitute(e.body, {e.var: e.value}), lane)
        raise CodegenError(f"target {self.target_kind!r}: cannot split a {e.dtype} "
                       f"{type(e).__name__} into lanes")

    def _nonneg(self, e: Any) -> bool:
        """A cheap proof that integer ``e`` is >= 0 (for plain '/' and '%' on floordiv)."""
        if isinstance(e, E.IntImm):
            return e.value >= 0
        if isinstance(e, E.Var):
            return id(e) in self._nonneg_vars
        if isinstance(e, E.FloorMod):
            return _positive_const(e.b) or (self._nonneg(e.a) and self._nonneg(e.b))
        if isinstance(e, (E.Add, E.Mul, E.FloorDiv, E.Div, E.Mod, E.Min, E.Max)):
            return self._nonneg(e.a) and self._nonneg(e.b)
        if isinstance(e, E.Cast):
            return e.dtype.is_integer and e.value.dtype.is_integer and self._nonneg(e.value)
        return bool(isinstance(e, E.PrimExpr) and e.dtype.is_uint)
