"""What a compiled function expects of its arguments, derived from the IR at build time.

:func:`signature_from_func` gives the serialisable :class:`~tvm.runtime.arguments.Signature`
that executables store (and ``export_library`` writes); :class:`~tvm.runtime.arguments.
ArgumentChecker` is the one check every executable runs before a launch: rank, shape, dtype,
device and strides of every array, type and range of every scalar.

>>> sig = signature_from_func(func, "cpu")            # at build time; sig.to_dict() is JSON
>>> check = ArgumentChecker(sig)
>>> values = check([a, b, n])                         # ValueError naming function and parameter

:func:`function_signature` (IR-level :class:`ParamSpec` lists), :func:`check_arguments` (the same
checker over ``ParamSpec`` lists, values keyed by IR variable) and :func:`evaluate` remain for
executables that evaluate IR expressions at call time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..error import CodegenError, TVMError
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.dtype import DataType
from ..ir.function import IRModule, PrimFunc
from ..ir.visitor import Visitor
from ..runtime.arguments import ArgumentChecker, Dim, ParamSig, Signature
from ..runtime.launch_plan import ARRAY, DERIVED, PARAM, SCALAR, LaunchPlan, LaunchStep
from ..tirx.op import HostDerived

__all__ = ["ParamSpec", "VarNames", "check_arguments", "evaluate", "expr_tree",
           "function_signature", "launch_plan", "launch_plans", "signature_from_func",
           "signature_from_specs"]


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: ``kind`` is ``"buffer"`` or ``"scalar"``; for buffers ``shape`` and
    ``strides`` are expressions (``strides`` empty means contiguous row-major) and ``scope`` the
    storage scope; ``var`` is the parameter variable and ``data`` the buffer's data handle (the
    variable kernels receive)."""

    name: str
    kind: str
    dtype: str
    shape: tuple[E.PrimExpr, ...] = ()
    strides: tuple[E.PrimExpr, ...] = ()
    scope: str = "global"
    var: E.Var | None = None
    data: E.Var | None = None
    written: bool = True  # whether the function may write to the buffer

    @property
    def ndim(self) -> int:
        return len(self.shape)


def function_signature(func: PrimFunc) -> list[ParamSpec]:
    """The :class:`ParamSpec` of every parameter of ``func``, in order."""
    specs = []
    written = written_data(func)
    for param in func.params:
        buf: Buffer | None = func.buffer_map.get(param)
        if buf is None:
            specs.append(ParamSpec(param.name, "scalar", str(param.dtype), var=param))
        else:
            specs.append(ParamSpec(buf.name, "buffer", str(buf.dtype), tuple(buf.shape),
                                   tuple(buf.strides), buf.scope, param, buf.data,
                                   id(buf.data) in written))
    return specs


def written_data(func: PrimFunc) -> set[int]:
    """The ids of the data variables ``func`` may write through: stored to, or handed to any
    call (a kernel launch, an extern function, ``address_of``, a tile primitive) or bound to
    another name. Only a buffer that is nothing but loaded from is read-only."""
    found: set[int] = set()

    class _Writes(Visitor):
        def visit_Var(self, v: E.Var) -> None:
            if v.dtype.is_handle:
                found.add(id(v))

        def visit_Buffer(self, b: Buffer) -> None:
            found.add(id(b.data))

        def visit_BufferStore(self, s: S.BufferStore) -> None:
            found.add(id(s.buffer.data))
            self.visit(s.value)
            self.visit(s.indices)

        def visit_BufferLoad(self, e: E.BufferLoad) -> None:
            self.visit(e.indices)  # a load reads its buffer

        def visit_Call(self, c: E.Call) -> None:
            if c.op.name == "tirx.address_of":
                for a in c.args:
                    if isinstance(a, E.BufferLoad):
                        found.add(id(a.buffer.data))
            self.visit(c.args)

        def visit_AllocBuffer(self, s: S.AllocBuffer) -> None:
            self.visit(s.buffer.shape)

        def visit_DeclBuffer(self, s: S.DeclBuffer) -> None:
            self.visit(s.buffer.shape)  # a view is written only by what writes through it

    _Writes().visit(func.body)
    return found


# -- evaluation --------------------------------------------------------------------------------
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.Min: min, E.Max: max,
    E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b, E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b,
    E.And: lambda a, b: bool(a) and bool(b), E.Or: lambda a, b: bool(a) or bool(b),
}


def evaluate(expr: Any, values: Mapping[E.Var, int | float]) -> int | float:
    """The value of a scalar expression with variables taken from ``values``."""
    e = E.convert(expr)
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return e.value
    if isinstance(e, E.Var):
        for k, v in values.items():
            if k is e:
                return v
        raise ValueError(f"cannot evaluate `{e.name}`: its value is not known")
    if isinstance(e, E.Cast):
        v = evaluate(e.value, values)
        return float(v) if e.dtype.is_float else int(v)
    if isinstance(e, E.Not):
        return not evaluate(e.a, values)
    if isinstance(e, E.Select):
        return evaluate(e.true_value if evaluate(e.condition, values) else e.false_value, values)
    if isinstance(e, E.BinaryOp):
        a, b = evaluate(e.a, values), evaluate(e.b, values)
        fn = _BINARY.get(type(e))
        if fn is not None:
            return fn(a, b)
        return _divide(e, a, b)
    raise ValueError(f"cannot evaluate a {type(e).__name__} on the host")


def _divide(e: E.BinaryOp, a: Any, b: Any) -> int | float:
    if b == 0:
        raise ZeroDivisionError(f"division by zero evaluating {type(e).__name__}")
    integer = e.dtype.is_integer
    if isinstance(e, E.FloorDiv):
        return a // b if integer else math.floor(a / b)
    if isinstance(e, E.FloorMod):
        return a % b
    if isinstance(e, E.Div):
        return int(a / b) if integer else a / b
    if isinstance(e, E.Mod):
        return int(math.fmod(a, b)) if integer else math.fmod(a, b)
    raise ValueError(f"cannot evaluate a {type(e).__name__} on the host")


_TREE_OPS = frozenset(["Add", "Sub", "Mul", "Min", "Max", "FloorDiv", "FloorMod", "Div", "Mod",
                       "LT", "LE", "GT", "GE", "EQ", "NE", "And", "Or"])


# -- the serialisable signature ---------------------------------------------------------------
class VarNames:
    """Unique names for variables (by identity): ``n``, then ``n_1`` for another ``n``."""

    def __init__(self) -> None:
        self.by_id: dict[int, str] = {}
        self.vars: dict[str, E.Var] = {}

    def __call__(self, var: E.Var) -> str:
        found = self.by_id.get(id(var))
        if found is not None:
            return found
        name, n = var.name, 1
        while name in self.vars:
            name, n = f"{var.name}_{n}", n + 1
        self.by_id[id(var)] = name
        self.vars[name] = var
        return name


def expr_tree(expr: Any, names: VarNames) -> Dim:
    """``expr`` as plain data for :func:`tvm.runtime.arguments.evaluate_tree`: an int or float,
    a variable name, or ``[op, *operands]``."""
    e = E.convert(expr)
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return e.value
    if isinstance(e, E.Var):
        return names(e)
    if isinstance(e, E.Cast):
        return ["Cast", str(e.dtype), expr_tree(e.value, names)]
    if isinstance(e, E.Not):
        return ["Not", expr_tree(e.a, names)]
    if isinstance(e, E.Select):
        return ["Select", expr_tree(e.condition, names), expr_tree(e.true_value, names),
                expr_tree(e.false_value, names)]
    if isinstance(e, E.BinaryOp):
        op = type(e).__name__
        if op in _TREE_OPS:
            return [op, expr_tree(e.a, names), expr_tree(e.b, names)]
    raise ValueError(f"cannot evaluate a {type(e).__name__} on the host")


def signature_from_specs(specs: Sequence[ParamSpec], name: str, device: str = "cpu",
                         names: VarNames | None = None) -> Signature:
    """The serialisable :class:`~tvm.runtime.arguments.Signature` of ``specs``; ``names``
    (filled in here) maps its variable names back to the IR variables."""
    names = names if names is not None else VarNames()
    params = []
    for s in specs:
        if s.kind == "buffer":
            params.append(ParamSig(s.name, "buffer", s.dtype,
                                   tuple(expr_tree(d, names) for d in s.shape),
                                   tuple(expr_tree(d, names) for d in s.strides), s.scope,
                                   written=s.written))
        elif DataType(s.dtype).is_handle:
            params.append(ParamSig(s.name, "handle", s.dtype))
        else:
            params.append(ParamSig(s.name, "scalar", s.dtype,
                                   var=names(s.var) if s.var is not None else s.name))
    variables = {n: str(v.dtype) for n, v in names.vars.items()}
    return Signature(name, tuple(params), device, variables)


def signature_from_func(func: PrimFunc, device: str = "cpu", *, name: str | None = None,
                        names: VarNames | None = None) -> Signature:
    """What ``func`` expects of its arguments, as plain data (derived once, at build time)."""
    symbol = name or str(func.attrs.get("global_symbol", func.name))
    return signature_from_specs(function_signature(func), symbol, device, names)


# -- checking ----------------------------------------------------------------------------------
_CHECKERS: dict[tuple[Any, ...], tuple[Sequence[ParamSpec], ArgumentChecker, VarNames]] = {}


def check_arguments(specs: Sequence[ParamSpec], args: Sequence[Any], device_type: str = "cpu",
                    *, func_name: str = "the function") -> dict[E.Var, int | float]:
    """Check ``args`` against ``specs`` with :class:`tvm.runtime.arguments.ArgumentChecker`
    (the one checker every executable uses) and return the value of every scalar parameter and
    symbolic shape or stride variable, keyed by the IR variable, for :func:`evaluate`.

    Prefer building the checker once: ``ArgumentChecker(signature_from_func(f, device))``; this
    wrapper caches one per ``specs`` object for callers that still hold ``ParamSpec`` lists.
    """
    key = (id(specs), device_type, func_name)
    hit = _CHECKERS.get(key)
    if hit is None or hit[0] is not specs:
        names = VarNames()
        checker = ArgumentChecker(signature_from_specs(specs, func_name, device_type, names))
        if len(_CHECKERS) > 256:
            _CHECKERS.clear()
        hit = _CHECKERS[key] = (specs, checker, names)
    _, checker, names = hit
    values = checker(args)
    return {names.vars[n]: v for n, v in values.items() if n in names.vars}


# -- launch plans ------------------------------------------------------------------------------
LAUNCH_KERNEL = "tirx.launch_kernel"


def launch_plans(mod: IRModule, device: str, *, target_name: str = "", handles: bool = True
                 ) -> list[LaunchPlan]:
    """The :class:`~tvm.runtime.launch_plan.LaunchPlan` of every host function of ``mod`` (after
    ``SplitHostDevice``: functions with ``tirx.is_host``), for device kind ``device``.
    ``handles=False`` (Metal, OpenCL: kernels bind buffers and scalars only) makes an opaque
    handle passed to a kernel a :class:`~tvm.error.CodegenError`."""
    plans = [launch_plan(name, func, mod, device, target_name=target_name)
             for name, func in mod.functions.items() if func.attrs.get("tirx.is_host")]
    if not handles:
        for plan in plans:
            _refuse_handles(plan, target_name)
    return plans


def _refuse_handles(plan: LaunchPlan, target_name: str) -> None:
    for step in plan.steps:
        for ref in step.args:
            if ref[0] == PARAM and ref[2] == "handle":
                param = plan.signature.params[ref[1]].name
                raise CodegenError(f"target {target_name!r}: `{plan.name}` passes the handle "
                                   f"{param!r} to kernel `{step.kernel}`: only buffer arguments "
                                   "and scalars can cross to a kernel of this target")


def launch_plan(name: str, host: PrimFunc, mod: IRModule, device: str, *,
                target_name: str = "") -> LaunchPlan:
    """The launch plan of host function ``host``: its signature and its kernel launches. Its
    body may only launch kernels; anything else is an error naming the function."""
    where = f"target {target_name!r}: " if target_name else ""
    names = VarNames()
    symbol = str(host.attrs.get("global_symbol", name))
    specs = function_signature(host)
    signature = signature_from_specs(specs, symbol, device, names)
    passed: dict[int, int] = {}
    for i, s in enumerate(specs):
        passed[id(s.data if s.kind == "buffer" else s.var)] = i
    steps = []
    for stmt in _flat(host.body):
        if isinstance(stmt, S.Evaluate) and isinstance(stmt.value, (E.IntImm, E.FloatImm)):
            continue
        call = stmt.value if isinstance(stmt, S.Evaluate) else None
        if not (isinstance(call, E.Call) and call.op.name == LAUNCH_KERNEL):
            raise TVMError(f"{where}the host part of `{name}` must only launch kernels, found a "
                           f"{type(stmt).__name__}; move the computation into the kernel")
        steps.append(_launch_step(name, call, mod, specs, passed, names, where))
    return LaunchPlan(signature, tuple(steps))


def _launch_step(name: str, call: E.Call, mod: IRModule, specs: Sequence[ParamSpec],
                 passed: Mapping[int, int], names: VarNames, where: str) -> LaunchStep:
    kernel_name = str(call.args[0].value)
    kernel = mod.functions.get(kernel_name)
    if kernel is None:
        raise TVMError(f"{where}`{name}` launches `{kernel_name}`, which is not in the module")
    launch = kernel.attrs["tirx.launch"]
    args: list[tuple[Any, ...]] = []
    for j, arg in enumerate(call.args[1:]):
        dtype = str(kernel.params[j].dtype) if j < len(kernel.params) else str(arg.dtype)
        index = passed.get(id(arg)) if isinstance(arg, E.Var) else None
        derived = HostDerived.of(arg)
        if derived is not None:
            source = passed.get(id(derived.data))
            if source is None or specs[source].kind != "buffer":
                raise TVMError(f"{where}`{name}` derives a {derived.kind} for kernel "
                               f"`{kernel_name}` from {derived.data.name}, which is not a buffer "
                               "parameter")
            args.append((DERIVED, source, derived.kind, list(derived.params)))
        elif index is not None and specs[index].kind == "buffer":
            args.append((ARRAY, index))
        elif index is not None:
            args.append((PARAM, index, dtype))
        elif isinstance(arg, E.PrimExpr) and not arg.dtype.is_handle:
            args.append((SCALAR, expr_tree(arg, names), dtype))
        else:
            raise TVMError(f"{where}`{name}` passes {arg} to kernel `{kernel_name}`: only "
                           "buffers, parameters and scalar expressions can cross to a kernel")
    grid = [expr_tree(g, names) for g in launch.grid]
    block = [expr_tree(b, names) for b in launch.block]
    dyn_smem = getattr(launch, "dyn_smem_bytes", None)
    smem = expr_tree(0 if dyn_smem is None else dyn_smem, names)
    return LaunchStep(kernel_name, tuple(args), (grid[0], grid[1], grid[2]),
                      (block[0], block[1], block[2]), smem)


def _flat(stmt: Any) -> list[Any]:
    if isinstance(stmt, S.SeqStmt):
        return [x for s in stmt.seq for x in _flat(s)]
    return [stmt]
