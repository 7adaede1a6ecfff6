"""Flat ``T.ptx`` float arithmetic: the approximations (``exp2``, ``tanh``, ``rcp``), three-way
min/max, ``max_f32``, and the DPS ``add/sub/mul/fma`` forms (f32, f32x2, f64)."""

from __future__ import annotations

from typing import Any

from tvm.error import NotModelledError
from tvm.ir.expr import Call

from ._base import Emit, Rule, asm, bool_arg, helper, lvalue, ptr
from ._base import str_arg as S
from ._spec import PURE, intrin
from .ptx_misc import _dot, _mangle


def _f32_helper(emit: Emit, name: str, body: str, n: int) -> str:
    """A float32 math instruction as a helper. Plain ``asm`` (not volatile, no memory clobber):
    the instruction is pure, so the compiler may move it and the loads around it (a GEMM
    epilogue's activation beside its bias and residual loads)."""
    decl = ", ".join(f"float x{k}" for k in range(n))
    ins = ", ".join(f'"f"(x{k})' for k in range(n))
    src = (f"__device__ __forceinline__ float {name}({decl}) {{\n  float v;\n"
           f'  asm("{body}" : "=f"(v) : {ins});\n  return v;\n}}')
    return helper(emit, name, src)


@intrin("ptx.exp2", "x", dtype="float32", effect=PURE,
        emulate=lambda call, emit: f"exp2f({emit(call.args[0])})")
def _exp2(call: Call, emit: Emit) -> str:
    fn = _f32_helper(emit, "tvm_ptx_ex2", "ex2.approx.ftz.f32 %0, %1;", 1)
    return f"{fn}({emit(call.args[0])})"


@intrin("ptx.tanh", "x", dtype="float32", effect=PURE, min_arch=75,
        emulate=lambda call, emit: f"tanhf({emit(call.args[0])})")
def _tanh(call: Call, emit: Emit) -> str:
    """``tanh.approx.f32`` (one MUFU operation; absolute error about 2^-11)."""
    fn = _f32_helper(emit, "tvm_ptx_tanh", "tanh.approx.f32 %0, %1;", 1)
    return f"{fn}({emit(call.args[0])})"


@intrin("ptx.rcp", "x", dtype="float32", effect=PURE,
        emulate=lambda call, emit: f"(1.0f / ({emit(call.args[0])}))")
def _rcp(call: Call, emit: Emit) -> str:
    fn = _f32_helper(emit, "tvm_ptx_rcp", "rcp.approx.ftz.f32 %0, %1;", 1)
    return f"{fn}({emit(call.args[0])})"


@intrin("ptx.reduce3_min_f32", "a, b, c", dtype="float32", effect=PURE)
def _min3(call: Call, emit: Emit) -> str:
    a, b, c = (emit(x) for x in call.args)
    return f"fminf(fminf({a}, {b}), {c})"


@intrin("ptx.reduce3_max_f32", "a, b, c", dtype="float32", effect=PURE)
def _max3(call: Call, emit: Emit) -> str:
    a, b, c = (emit(x) for x in call.args)
    return f"fmaxf(fmaxf({a}, {b}), {c})"


def _max_f32_operands(a: Any, b: Any, *, ftz: bool = False, nan: bool = False) -> tuple[Any, ...]:
    """``max{.ftz}{.NaN}.f32``."""
    return (a, b, int(bool(ftz)), int(bool(nan)))


def _emu_max_f32(call: Call, emit: Emit) -> str:
    a, b = emit(call.args[0]), emit(call.args[1])
    if bool_arg(call, 3):  # .NaN: a NaN operand gives NaN
        return f"tvm_cuda_emu::max_nan({a}, {b})"
    return f"fmaxf({a}, {b})"


@intrin("ptx.max_f32", _max_f32_operands, nargs=4, dtype="float32", effect=PURE,
        emulate=_emu_max_f32)
def _max_f32(call: Call, emit: Emit) -> str:
    mods = _dot("ftz" if bool_arg(call, 2) else "", "NaN" if bool_arg(call, 3) else "")
    fn = _f32_helper(emit, "tvm_ptx_max" + _mangle(mods), f"max{mods}.f32 %0, %1, %2;", 2)
    return f"{fn}({emit(call.args[0])}, {emit(call.args[1])})"


_ARITH_T = {"f32": ("float", "f"), "f32x2": ("unsigned long long", "l"), "f64": ("double", "d")}


def _arith_operands(op: str, t: str, n_src: int) -> Any:
    def operands(
        d_addr: Any, *srcs: Any, rounding: str = "rn", ftz: bool = False, sat: bool = False
    ) -> tuple[Any, ...]:
        if len(srcs) != n_src:
            raise TypeError(f"ptx_{op}_{t} takes d_addr and {n_src} sources, got {len(srcs)}")
        if t == "f64" and (ftz or sat):
            raise ValueError(f"PTX {op}.f64 takes neither .ftz nor .sat")
        if t == "f32x2" and sat:
            raise ValueError(f"PTX {op}.f32x2 takes no .sat")
        return (d_addr, *srcs, rounding, int(bool(ftz)), int(bool(sat)))

    operands.__doc__ = f"PTX ``{op}{{.rnd}}{{.ftz}}{{.sat}}.{t} [d_addr], ...`` (result to d_addr)."
    return operands


_EMU_OPS = {"add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "fma": "std::fma({0}, {1}, {2})"}


def _emu_arith(op: str, t: str, n_src: int) -> Rule:
    """Round to nearest (``.rn``) only; ``.f32x2`` (two packed floats) element-wise."""

    def rule(call: Call, emit: Emit) -> str:
        ct = _ARITH_T[t][0]
        if S(call, n_src + 1) != "rn" or bool_arg(call, n_src + 2) or bool_arg(call, n_src + 3):
            raise NotModelledError(f"intrinsic ptx.{op}_{t} with rounding other than .rn, .ftz "
                                   "or .sat: the CUDA emulator does not model it")
        srcs = [f"(({ct})({emit(a)}))" for a in call.args[1 : n_src + 1]]
        dst = lvalue(emit, call.args[0], ct)
        if t == "f32x2":
            return f"{dst} = tvm_cuda_emu::f32x2_{op}({', '.join(srcs)})"
        return f"{dst} = " + _EMU_OPS[op].format(*srcs)

    return rule


def _arith(op: str, t: str, n_src: int) -> Rule:
    def rule(call: Call, emit: Emit) -> str:
        ct, con = _ARITH_T[t]
        rnd = S(call, n_src + 1)
        ftz, sat = bool_arg(call, n_src + 2), bool_arg(call, n_src + 3)
        mods = _dot(rnd, "ftz" if ftz else "", "sat" if sat else "", t)
        srcs = ", ".join(f"%{k + 1}" for k in range(n_src))
        ins = [f'"{con}"(({ct})({emit(a)}))' for a in call.args[1 : n_src + 1]]
        return asm(
            f"{op}{mods} %0, {srcs};",
            [f'"={con}"({lvalue(emit, call.args[0], ct)})'],
            ins,
            memory=False,
        )

    return rule


for _op, _n in (("add", 2), ("sub", 2), ("mul", 2), ("fma", 3)):
    for _t_ in ("f32", "f32x2", "f64"):
        intrin(
            f"ptx.{_op}_{_t_}",
            _arith_operands(_op, _t_, _n),
            nargs=_n + 4,
            choices={"rounding": ("rn", "rz", "rm", "rp")},
            min_arch=100 if _t_ == "f32x2" else 0,
            emulate=_emu_arith(_op, _t_, _n),
        )(_arith(_op, _t_, _n))


# -- packed pairs of registers: the elementwise variants' f32x2 forms (sm_100+) ------------------
# ``T.ptx.<op>_packed_f32x2(d, a, b[, c])``: two adjacent float32 registers (d[0], d[1]) from the
# pairs at a, b (and c), each operand a buffer element (its address is taken) or a pointer. The
# helper's name is the seed's (tvm_builtin_ptx_add_packed_rn_f32x2; its tests read the source).

_PACKED_EXPR = {"add": "a[{k}] + b[{k}]", "sub": "a[{k}] - b[{k}]", "mul": "a[{k}] * b[{k}]",
                "fma": "fmaf(a[{k}], b[{k}], c[{k}])"}


def _packed_name(op: str) -> str:
    return f"tvm_builtin_ptx_{op}_packed_rn_f32x2"


def _packed_args(op: str) -> str:
    return ", ".join(f"const float* {n}" for n in ("a", "b", "c")[: 3 if op == "fma" else 2])


def _packed_call(op: str, fn: str, call: Call, emit: Emit) -> str:
    return f"{fn}({', '.join(ptr(emit, a, 'float') for a in call.args)})"


def _packed_rule(op: str) -> Rule:
    n = 3 if op == "fma" else 2
    u = ", ".join(f'"l"(*(const unsigned long long*){x})' for x in ("a", "b", "c")[:n])
    srcs = ", ".join(f"%{k + 1}" for k in range(n))
    body = (f"__device__ __forceinline__ void {_packed_name(op)}(float* d, {_packed_args(op)}) {{\n"
            f"  unsigned long long r;\n"
            f'  asm("{op}.rn.ftz.f32x2 %0, {srcs};" : "=l"(r) : {u});\n'
            f"  *(unsigned long long*)d = r;\n}}")

    def rule(call: Call, emit: Emit) -> str:
        return _packed_call(op, helper(emit, _packed_name(op), body), call, emit)

    return rule


def _packed_emu(op: str) -> Rule:
    """Two float32 operations (round to nearest; the emulator keeps denormals that .ftz flushes)."""
    expr = _PACKED_EXPR[op]
    body = (f"inline void {_packed_name(op)}(float* d, {_packed_args(op)}) {{\n"
            f"  d[0] = {expr.format(k=0)};\n  d[1] = {expr.format(k=1)};\n}}")

    def rule(call: Call, emit: Emit) -> str:
        return _packed_call(op, helper(emit, _packed_name(op), body), call, emit)

    return rule


for _op, _params in (("add", "dst, a, b"), ("sub", "dst, a, b"), ("mul", "dst, a, b"),
                     ("fma", "dst, a, b, c")):
    intrin(f"ptx.{_op}_packed_f32x2", _params, min_arch=100, emulate=_packed_emu(_op))(
        _packed_rule(_op))
