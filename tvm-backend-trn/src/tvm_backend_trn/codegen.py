"""Lowered TIR -> the instruction form (:mod:`isa`) -> NKI Python source.

The trn pipeline leaves a kernel made of loops, on-chip allocations (placed by
:class:`~tvm_backend_trn.transform.TrnNaiveAllocator`) and ``T.nki.*`` calls on buffer
regions. :func:`lower_to_kernel` turns each call into one or more :mod:`isa` instructions,
deriving every operand's access pattern from its buffer's layout (:mod:`access`);
:func:`render_source` prints the kernels as NKI source (:mod:`nki_render`). The builder
(:mod:`.executable`) keeps both: the source is what users read, the instruction form is what
the compile stage (:mod:`.compiler`) packages for the simulator.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from tvm import ir
from tvm.error import CompileError, located
from tvm.ir import expr as E

from . import isa
from .access import (
    ON_CHIP,
    AccessError,
    View,
    axis_size,
    axis_span,
    buffer_layout,
    group_aps,
    region_of,
    single_ap,
    to_affine,
    view_of,
)
from .isa import AP, Affine
from .nki_render import render_nki, render_nki_legacy
from .tags import KIND
from .transform.naive_allocator import BANK, allocated_address

__all__ = ["ACT_OPS", "ALU_OPS", "REDUCE_OPS", "generate_kernels", "lower_to_kernel",
           "render_source"]

# opcode spellings accepted in T.nki calls -> NKI names
ALU_OPS = {
    "add": "add", "sub": "subtract", "subtract": "subtract", "mul": "multiply",
    "multiply": "multiply", "fdiv": "divide", "div": "divide", "divide": "divide",
    "max": "maximum", "maximum": "maximum", "min": "minimum", "minimum": "minimum",
    "pow": "power", "power": "power",
}
ACT_OPS = {
    "copy": "copy", "identity": "copy", "exp": "exp", "log": "log", "sqrt": "sqrt",
    "rsqrt": "rsqrt", "reciprocal": "reciprocal", "tanh": "tanh", "sigmoid": "sigmoid",
    "relu": "relu", "gelu": "gelu", "silu": "silu", "square": "square", "abs": "abs",
    "sin": "sin", "sign": "sign", "softplus": "softplus",
}
REDUCE_OPS = {"sum": "add", "add": "add", "max": "maximum", "maximum": "maximum",
              "min": "minimum", "minimum": "minimum", "prod": "multiply", "mul": "multiply"}
_CMP = {E.EQ: "equal", E.NE: "not_equal", E.LT: "less", E.LE: "less_equal", E.GT: "greater",
        E.GE: "greater_equal"}


def generate_kernels(mod: ir.IRModule) -> dict[str, isa.Kernel]:
    """The instruction form of every function of lowered ``mod``, by its symbol."""
    kernels = {}
    for name, func in mod.functions.items():
        symbol = str(func.attrs.get("global_symbol", name))
        kernels[symbol] = lower_to_kernel(func, symbol)
    return kernels


def render_source(kernels: Mapping[str, isa.Kernel], dialect: str = "nki") -> str:
    """The NKI source of ``kernels``: the current dialect, or ``legacy``."""
    render = render_nki_legacy if dialect == "legacy" else render_nki
    return "\n\n".join(render(k) for k in kernels.values())


def lower_to_kernel(func: ir.PrimFunc, name: str | None = None) -> isa.Kernel:
    """The instruction form of one lowered PrimFunc (a :class:`CompileError` names what the
    instruction form cannot express)."""
    lowering = _Lowering(func)
    try:
        body = lowering.stmt(func.body)
        return lowering.kernel(name or func.name, body)
    except AccessError as err:
        raise CompileError(f"trn codegen of {func.name}: {err}") from None


class _Lowering:
    def __init__(self, func: ir.PrimFunc) -> None:
        self.func = func
        self.env: dict[ir.Var, Affine] = {}
        self.ranges: dict[str, tuple[int, int]] = {}
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.allocs: list[isa.SbufTensor | isa.PsumTensor] = []
        self.params: list[ir.Buffer] = []
        self.written: set[int] = set()
        self.counter = itertools.count()
        for p in func.params:
            buf = func.buffer_map.get(p)
            if buf is None:
                raise CompileError(f"trn kernel {func.name}: scalar parameter {p.name!r}; "
                                   f"Trainium kernels take buffers only")
            if buf.scope != "global":
                raise CompileError(f"trn kernel {func.name}: parameter {buf.name!r} must be in "
                                   f"global (HBM) memory, not {buf.scope}")
            self.params.append(buf)
            self._name(buf)

    # -- names and tensors ---------------------------------------------------------------
    def _name(self, buf: ir.Buffer) -> str:
        key = id(buf)
        if key not in self.names:
            base = "".join(c if c.isalnum() or c == "_" else "_" for c in buf.name) or "t"
            name, n = base, 1
            while name in self.used:
                name, n = f"{base}_{n}", n + 1
            self.used.add(name)
            self.names[key] = name
        return self.names[key]

    def kernel(self, name: str, body: tuple[isa.Stmt, ...]) -> isa.Kernel:
        tensors = []
        for buf in self.params:
            shape = buf.static_shape()
            if shape is None:
                raise CompileError(f"trn kernel {name}: parameter {buf.name!r} has a symbolic "
                                   f"shape")
            kind = "output" if id(buf) in self.written else "input"
            tensors.append(isa.HbmTensor(self._name(buf), shape, str(buf.dtype), kind))
        return isa.Kernel(name, tuple(tensors), tuple(self.allocs), body)

    def _alloc(self, node: ir.AllocBuffer) -> None:
        buf = node.buffer
        if buf.scope not in ON_CHIP:
            raise CompileError(f"trn kernel {self.func.name}: allocation {buf.name!r} in scope "
                               f"{buf.scope!r}; Trainium kernels allocate trn.sbuf or trn.psum")
        addr = allocated_address(node)
        if addr is None:
            raise CompileError(f"trn kernel {self.func.name}: {buf.name!r} has no address; run "
                               f"TrnNaiveAllocator (the trn pipeline does)")
        layout = buffer_layout(buf)
        partitions = axis_size(layout, "P")
        span = _free_span(layout, buf)
        name = self._name(buf)
        dtype = str(buf.dtype)
        if buf.scope == "trn.sbuf":
            self.allocs.append(isa.SbufTensor(name, partitions, (span,), dtype, offset=addr))
        else:
            self.allocs.append(isa.PsumTensor(name, partitions, (span,), dtype,
                                              bank=addr // BANK, offset=addr % BANK))

    # -- statements ----------------------------------------------------------------------
    def stmt(self, s: ir.Stmt | None) -> tuple[isa.Stmt, ...]:
        if s is None:
            return ()
        with located(s.span):  # what the instruction form cannot take: at the statement's line
            return self._stmt(s)

    def _stmt(self, s: ir.Stmt) -> tuple[isa.Stmt, ...]:
        if isinstance(s, ir.SeqStmt):
            return tuple(x for c in s.seq for x in self.stmt(c))
        if isinstance(s, ir.AllocBuffer):
            self._alloc(s)
            return ()
        if isinstance(s, ir.DeclBuffer):
            return ()
        if isinstance(s, ir.AttrStmt):
            return self.stmt(s.body)
        if isinstance(s, ir.LetStmt):
            self.env[s.var] = to_affine(s.value, self.env)
            return self.stmt(s.body)
        if isinstance(s, ir.For):
            return (self.loop(s),)
        if isinstance(s, ir.Evaluate):
            return self.evaluate(s)
        if isinstance(s, ir.AssertStmt):
            return ()
        if isinstance(s, ir.TilePrimitiveCall):
            raise CompileError(f"trn kernel {self.func.name}: tile primitive {s.op.name} was "
                               f"not lowered; the trn pipeline dispatches tile primitives")
        if isinstance(s, (ir.BufferStore, ir.IfThenElse)):
            raise CompileError(
                f"trn kernel {self.func.name}: {type(s).__name__} is scalar code, which the "
                f"NKI instruction form cannot express; use tile primitives (Tx.*) or T.nki.* "
                f"instructions")
        raise CompileError(f"trn kernel {self.func.name}: unsupported statement "
                           f"{type(s).__name__}")

    def loop(self, s: ir.For) -> isa.Loop:
        if not isinstance(s.extent, ir.IntImm) or not isinstance(s.min, ir.IntImm):
            raise CompileError(f"trn kernel {self.func.name}: loop {s.loop_var.name!r} needs "
                               f"static bounds")
        name = self._loop_name(s.loop_var.name)
        lo, n = s.min.value, s.extent.value
        self.env[s.loop_var] = isa.Var(name) + lo
        self.ranges[name] = (0, max(n - 1, 0))
        kind = s.annotations.get("nki.loop")
        if kind is None:
            kind = "sequential" if s.kind is ir.ForKind.SERIAL else "affine"
        body = self.stmt(s.body)
        return isa.Loop(name, n, body, str(kind))

    def _loop_name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "i"
        name, n = base, 1
        while name in self.used:
            name, n = f"{base}_{n}", n + 1
        self.used.add(name)
        return name

    def evaluate(self, s: ir.Evaluate) -> tuple[isa.Stmt, ...]:
        call = s.value
        if isinstance(call, (ir.IntImm, E.FloatImm)):
            return ()
        if not isinstance(call, ir.Call) or not call.op.name.startswith("tirx.nki."):
            raise CompileError(f"trn kernel {self.func.name}: cannot generate code for "
                               f"{getattr(getattr(call, 'op', None), 'name', call)!r}; Trainium "
                               f"kernels are made of T.nki.* instructions")
        name = call.op.name.removeprefix("tirx.nki.")
        emit = getattr(self, call.op.get_codegen(KIND) or f"nki_{name}")  # op.INTRINSICS
        with located(call.span):  # a T.nki call of the user's kernel (or of a Tx call's variant)
            try:
                out = emit(*call.args)
            except TypeError as err:
                raise CompileError(f"T.nki.{name}: bad arguments ({err})") from None
            except AccessError as err:
                raise CompileError(f"T.nki.{name}: {err}") from None
        return out if isinstance(out, tuple) else (out,)

    # -- operands -------------------------------------------------------------------------
    def view(self, arg: Any) -> View:
        buf = _buffer_of(arg)
        return view_of(arg, self.env, self.ranges, self._name(buf))

    def group(self, what: str, **args: Any) -> list[AP]:
        views = [self.view(a) for a in args.values()]
        return group_aps(views, list(args), what=what)

    def single(self, what: str, name: str, arg: Any) -> AP:
        return single_ap(self.view(arg), name, what=what)

    def scalar_or_column(self, what: str, arg: Any) -> float | AP:
        if isinstance(arg, (ir.Buffer, ir.BufferRegion)) or (
                isinstance(arg, ir.BufferLoad) and arg.buffer.scope in ON_CHIP):
            return self.single(what, "operand", arg)
        return _float(arg, what)

    def _mark_written(self, arg: Any) -> None:
        self.written.add(id(_buffer_of(arg)))

    # -- instructions ---------------------------------------------------------------------
    def nki_load(self, res: Any, data: Any) -> isa.Instr:
        dst, src = self.group("load", dst=res, src=data)
        return isa.DmaCopy(dst, src=src)

    def nki_store(self, res: Any, data: Any) -> isa.Instr:
        self._mark_written(res)
        src, dst = self.group("store", src=data, dst=res)
        return isa.DmaCopy(dst, src=src)

    def nki_tensor_copy(self, res: Any, data: Any) -> isa.Instr:
        dst, src = self.group("tensor_copy", dst=res, src=data)
        return isa.TensorCopy(dst, src=src)

    def nki_matmul(self, res: Any, lhs: Any, rhs: Any, accum: Any = True) -> isa.Instr:
        return isa.Matmul(self.single("matmul", "res", res),
                          stationary=self.single("matmul", "lhs", lhs),
                          moving=self.single("matmul", "rhs", rhs),
                          accumulate=self._flag(accum, "matmul accum"))

    def nki_activation(self, result: Any, data: Any, opcode: Any, bias: Any = 0.0,
                       scale: Any = 1.0) -> isa.Instr:
        dst, src = self.group("activation", result=result, data=data)
        return isa.Activation(dst, op=_opcode(opcode, ACT_OPS, "activation"), data=src,
                              bias=self._bias(bias), scale=self.scalar_or_column("scale", scale))

    def nki_activation_reduce(self, reduce_res: Any, act_res: Any, data: Any, opcode: Any,
                              reduce_opcode: Any, bias: Any = 0.0,
                              scale: Any = 1.0) -> isa.Instr:
        dst, src = self.group("activation_reduce", act_res=act_res, data=data)
        return isa.Activation(dst, op=_opcode(opcode, ACT_OPS, "activation_reduce"), data=src,
                              bias=self._bias(bias), scale=self.scalar_or_column("scale", scale),
                              reduce_op=_opcode(reduce_opcode, REDUCE_OPS, "reduce"),
                              reduce_res=self.single("activation_reduce", "reduce_res",
                                                     reduce_res))

    def _bias(self, bias: Any) -> float | AP | None:
        value = self.scalar_or_column("bias", bias)
        return None if isinstance(value, float) and value == 0.0 else value

    def nki_reciprocal(self, result: Any, data: Any) -> isa.Instr:
        dst, src = self.group("reciprocal", result=result, data=data)
        return isa.Reciprocal(dst, data=src)

    def nki_tensorreduce(self, result: Any, data: Any, opcode: Any, negate: Any,
                         *axes: Any) -> isa.Instr:
        view = self.view(data)
        dims = sorted({_int(a, "tensorreduce axis") % max(len(_region(data).region), 1)
                       for a in axes})
        if not dims:
            raise AccessError("tensorreduce needs at least one axis")
        for dg in view.digits:
            if dg.axis == "P" and dg.dim in dims:
                raise AccessError(f"tensorreduce: axis {dg.dim} of {view.name} lies on "
                                  f"partitions; only free axes reduce on Trainium")
        src = single_ap(view, "data", what="tensorreduce", keep_apart=dims)
        # which free pattern entries come from reduced dims
        free = [d for d in view.digits if d.axis != "P"]
        reduced_flags = _merged_flags(free, dims)
        axis = tuple(i + 1 for i, r in enumerate(reduced_flags) if r)
        if not axis:
            raise AccessError("tensorreduce: the reduced axes have extent 1")
        dst = self.single("tensorreduce", "result", result)
        dst = _flat(dst)
        return isa.TensorReduce(dst, op=_opcode(opcode, REDUCE_OPS, "tensorreduce"), data=src,
                                axis=axis, negate=bool(_int(negate, "negate")))

    def nki_tensortensor(self, result: Any, operand0: Any, operand1: Any,
                         opcode: Any) -> isa.Instr:
        dst, a, b = self.group("tensortensor", result=result, operand0=operand0,
                               operand1=operand1)
        return isa.TensorTensor(dst, data1=a, data2=b, op=_opcode(opcode, ALU_OPS, "tensortensor"))

    def nki_tensorscalar(self, result: Any, operand0: Any, operand1: Any, opcode: Any,
                         reverse: Any = False) -> isa.Instr:
        dst, src = self.group("tensorscalar", result=result, operand0=operand0)
        return isa.TensorScalar(dst, data=src, op0=_opcode(opcode, ALU_OPS, "tensorscalar"),
                                operand0=self.scalar_or_column("operand1", operand1),
                                reverse0=bool(_int(reverse, "reverse")))

    def nki_tensorscalar_reduce(self, reduce_res: Any, tensorscalar_res: Any, operand0: Any,
                                operand1: Any, opcode: Any, reduce_opcode: Any,
                                reverse: Any = False) -> isa.Instr:
        dst, src = self.group("tensorscalar_reduce", tensorscalar_res=tensorscalar_res,
                              operand0=operand0)
        return isa.TensorScalar(dst, data=src, op0=_opcode(opcode, ALU_OPS, "tensorscalar"),
                                operand0=self.scalar_or_column("operand1", operand1),
                                reverse0=bool(_int(reverse, "reverse")),
                                reduce_op=_opcode(reduce_opcode, REDUCE_OPS, "reduce"),
                                reduce_res=self.single("tensorscalar_reduce", "reduce_res",
                                                       reduce_res))

    def nki_scalar_tensor_tensor(self, result: Any, data: Any, operand0: Any, operand1: Any,
                                 opcode0: Any, opcode1: Any, reverse0: Any = False,
                                 reverse1: Any = False) -> isa.Instr:
        dst, src, other = self.group("scalar_tensor_tensor", result=result, data=data,
                                     operand1=operand1)
        return isa.ScalarTensorTensor(
            dst, data=src, op0=_opcode(opcode0, ALU_OPS, "scalar_tensor_tensor"),
            operand0=self.scalar_or_column("operand0", operand0),
            op1=_opcode(opcode1, ALU_OPS, "scalar_tensor_tensor"), operand1=other,
            reverse0=bool(_int(reverse0, "reverse0")), reverse1=bool(_int(reverse1, "reverse1")))

    def nki_scalar_tensor_scalar(self, result: Any, data: Any, operand0: Any, operand1: Any,
                                 opcode0: Any, opcode1: Any, reverse0: Any = False,
                                 reverse1: Any = False) -> isa.Instr:
        dst, src = self.group("scalar_tensor_scalar", result=result, data=data)
        return isa.TensorScalar(
            dst, data=src, op0=_opcode(opcode0, ALU_OPS, "scalar_tensor_scalar"),
            operand0=self.scalar_or_column("operand0", operand0),
            reverse0=bool(_int(reverse0, "reverse0")),
            op1=_opcode(opcode1, ALU_OPS, "scalar_tensor_scalar"),
            operand1=self.scalar_or_column("operand1", operand1),
            reverse1=bool(_int(reverse1, "reverse1")))

    def nki_memset(self, result: Any, value: Any) -> isa.Instr:
        dst = self.single("memset", "result", result)
        v = value.value if isinstance(value, (ir.IntImm, E.FloatImm)) else value
        if not isinstance(v, (int, float)):
            raise AccessError(f"memset value must be a constant, got {value}")
        if isinstance(value, ir.IntImm) and not _buffer_of(result).dtype.is_float:
            return isa.Memset(dst, value=int(v))
        return isa.Memset(dst, value=float(v))

    def nki_identity(self, result: Any, size: Any) -> tuple[isa.Stmt, ...]:
        n = _int(size, "identity size")
        dst = self.single("identity", "result", result)
        if dst.partitions != n or dst.free_size != n:
            raise AccessError(f"identity: result must be [{n}, {n}], got {dst.shape}")
        flat = _flat(dst)
        return (isa.Memset(flat, value=1.0),
                isa.AffineSelect(flat, pattern=((-1, n),), channel_multiplier=1,
                                 on_true_tile=flat, on_false_value=0.0, cmp_op="equal"))

    def nki_affine_select(self, result: Any, pred: Any, true_value: Any,
                          false_value: Any) -> isa.Instr:
        cmp = _CMP.get(type(pred))
        if cmp is None:
            raise AccessError(f"affine_select: pred must be a comparison, got {pred}")
        index_vars: dict[ir.Var, Affine] = {}
        for v in _free_vars(pred):
            if not v.name.startswith("nki_i"):
                raise AccessError(f"affine_select: pred may use only the index variables "
                                  f"nki_i0, nki_i1, ... of the result region, not {v.name!r}")
            index_vars[v] = isa.Var(v.name)
        diff = to_affine(pred.a, index_vars) - to_affine(pred.b, index_vars)
        coef = {int(name.removeprefix("nki_i")): c for name, c in diff.terms}
        rview, tview = self.view(result), self.view(true_value)
        dst, on_true = group_aps([rview, tview], ["result", "true_value"], what="affine_select")
        p_digits = [d for d in rview.digits if d.axis == "P"]
        f_digits = [d for d in rview.digits if d.axis != "P"]
        cm = sum(coef.get(d.dim, 0) * d.lstride for d in p_digits[-1:])
        pattern = tuple((coef.get(d.dim, 0) * d.lstride, d.count) for d in f_digits) or ((0, 1),)
        if len(pattern) > 4:
            raise AccessError("affine_select: the result has more than 4 free dims")
        return isa.AffineSelect(_flat(dst), pattern=pattern, channel_multiplier=cm,
                                on_true_tile=_flat(on_true),
                                on_false_value=_float(false_value, "false_value"),
                                cmp_op=cmp, offset=diff.const)

    def _flag(self, value: Any, what: str) -> bool | Affine:
        if isinstance(value, bool):
            return value
        if isinstance(value, ir.IntImm):
            return bool(value.value)
        if isinstance(value, E.NE):
            other = value.b if isinstance(value.b, ir.IntImm) and value.b.value == 0 else None
            if other is not None:
                return to_affine(value.a, self.env)
        if isinstance(value, E.GT) and isinstance(value.b, ir.IntImm) and value.b.value == 0:
            return to_affine(value.a, self.env)
        raise AccessError(f"{what} must be a constant bool or `x != 0`, got {value}")


def _merged_flags(free: list[Any], dims: list[int]) -> list[bool]:
    """For each free pattern entry after merging (as access.group_aps merges), whether it
    comes from a reduced dim."""
    flags: list[bool] = []
    prev = None
    for d in free:
        red = d.dim in dims
        if prev is not None and prev[1] == red and prev[0].axis == d.axis and \
                prev[0].stride == d.stride * d.count:
            prev = (d, red)
            continue
        flags.append(red)
        prev = (d, red)
    return flags


def _flat(ap: AP) -> AP:
    """The same view with its free dims collapsed to one when they are contiguous."""
    if len(ap.pattern) <= 1:
        return ap
    contiguous = all(ap.pattern[i][0] == ap.pattern[i + 1][0] * ap.pattern[i + 1][1]
                     for i in range(len(ap.pattern) - 1))
    if not contiguous:
        return ap
    return AP(ap.tensor, ap.partitions, ((ap.pattern[-1][0], ap.free_size),), offset=ap.offset,
              p_start=ap.p_start, p_stride=ap.p_stride)


def _free_span(layout: Any, buf: ir.Buffer) -> int:
    span_f = axis_span(layout, "F")
    banks = [it for it in layout.shard if it.axis.name == "Bank"]
    if not banks:
        return span_f
    per_bank = isa.PSUM_BANK_BYTES // buf.dtype.bytes
    return axis_span(layout, "Bank") * per_bank


def _buffer_of(arg: Any) -> ir.Buffer:
    if isinstance(arg, ir.Buffer):
        return arg
    if isinstance(arg, (ir.BufferRegion, ir.BufferLoad)):
        return arg.buffer
    raise AccessError(f"expected a buffer operand, got {type(arg).__name__} {arg}")


def _region(arg: Any) -> ir.BufferRegion:
    return region_of(arg)


def _opcode(value: Any, table: Mapping[str, str], what: str) -> str:
    text = value.value if isinstance(value, ir.StringImm) else value
    if not isinstance(text, str) or text not in table:
        raise AccessError(f"{what}: unknown opcode {text!r}; expected one of "
                          f"{', '.join(sorted(table))}")
    return table[text]


def _int(value: Any, what: str) -> int:
    if isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, ir.IntImm):
        return int(value.value)
    raise AccessError(f"{what} must be an integer constant, got {value}")


def _float(value: Any, what: str) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (ir.IntImm, E.FloatImm)):
        v = float(value.value)
        return v if math.isfinite(v) or True else v
    raise AccessError(f"{what} must be a constant or a [P, 1] tile, got {value}")


def _free_vars(e: Any) -> list[ir.Var]:
    found: list[ir.Var] = []

    def visit(node: Any) -> None:
        if isinstance(node, ir.Var) and node not in found:
            found.append(node)

    ir.post_order_visit(e, visit)
    return found
