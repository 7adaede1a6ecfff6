"""Flat ``T.ptx`` ops: elect_sync, setmaxnreg, registers, scalar ld/st/red/atom, mapa,
prefetch_tensormap, fns, any_sync. The float arithmetic forms are :mod:`.ptx_math`."""

from __future__ import annotations

import re
from typing import Any

from tvm.ir import expr as E
from tvm.ir.expr import Call
from tvm.ir.op import ELECTS_ONE_LANE

from ._base import (
    Emit,
    arg_dtype,
    arg_str,
    asm,
    bool_arg,
    ctype,
    fail,
    gaddr,
    helper,
    int_arg,
    lvalue,
    ptr,
    smem_addr,
    table_arg,
)
from ._base import str_arg as S
from ._spec import PURE, build, element, intrin, resolve_cache_policy, sugar

# PTX scalar type -> (C type, asm constraint, tvm dtype)
_PTX_T = {
    "b32": ("unsigned", "r", "uint32"),
    "u32": ("unsigned", "r", "uint32"),
    "s32": ("int", "r", "int32"),
    "b64": ("unsigned long long", "l", "uint64"),
    "u64": ("unsigned long long", "l", "uint64"),
    "s64": ("long long", "l", "int64"),
    "f32": ("float", "f", "float32"),
    "f64": ("double", "d", "float64"),
}
_ATOM_RET = {k: v[2] for k, v in _PTX_T.items()}
LD_TYPES = ("b32", "u32", "u64", "s32", "f32", "b64", "s64", "f64")


def _t(call: Call, i: int) -> tuple[str, str, str]:
    return table_arg(call, i, _PTX_T, "unsupported PTX type")


def _addr(emit: Emit, a: Any, space: str) -> tuple[str, str, str]:
    """(constraint, C type, operand) of an address in PTX state space ``space``."""
    if space.startswith("shared"):
        return "r", "unsigned", smem_addr(emit, a)
    return "l", "unsigned long long", gaddr(emit, a)


def _mangle(*parts: Any) -> str:
    return "_".join(re.sub(r"[^0-9A-Za-z]+", "_", str(p)).strip("_") or "x" for p in parts)


def _dot(*mods: str) -> str:
    return "".join(f".{m}" for m in mods if m)


_LDG32 = """\
// Guarded 32-bit global load: reg = guard ? *addr : local_value; returns the new register value.
__device__ __forceinline__ unsigned tvm_ldg32(unsigned* reg, int guard, const void* addr,
                                              unsigned local_value) {
  unsigned v;
  asm volatile("{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %2, 0;\\n\\tmov.b32 %0, %3;\\n\\t"
               "@p ld.global.b32 %0, [%1];\\n\\t}"
               : "=r"(v) : "l"(addr), "r"(guard), "r"(local_value) : "memory");
  *reg = v;
  return v;
}"""


def _ldg32_operands(reg: Any, guard: Any, addr: Any, local_addr: Any) -> tuple[Any, ...]:
    """Guarded 32-bit global load into ``reg`` (a Buffer ``addr`` stands for its first
    element)."""
    return (reg, guard, element(addr), local_addr)


@intrin("ptx.ldg32", _ldg32_operands, nargs=4, dtype=arg_dtype(0))
def _ldg32(call: Call, emit: Emit) -> str:
    reg, guard, addr, local = call.args
    helper(emit, "tvm_ldg32", _LDG32)
    value = f"tvm_ldg32({ptr(emit, reg, 'unsigned')}, (int)({emit(guard)}), (const void*)({gaddr(emit, addr)}), (unsigned)({emit(local)}))"
    return value if call.dtype.bits == 32 else f"(({ctype(emit, call.dtype)}){value})"


# elect.sync over the full warp: 1 in the elected lane, else 0 (the seed's register names, %%rx
# and %%px, which its tests read)
_ELECT = """\
__device__ __forceinline__ unsigned tvm_elect_sync() {
  unsigned pred = 0;
  unsigned lane = 0;
  asm volatile("{\\n\\t.reg .b32 %%rx;\\n\\t.reg .pred %%px;\\n\\t"
               "elect.sync %%rx|%%px, %2;\\n\\t@%%px mov.s32 %1, 1;\\n\\tmov.s32 %0, %%rx;\\n\\t}"
               : "+r"(lane), "+r"(pred)
               : "r"(0xffffffffu));
  return pred;
}"""


@intrin("ptx.elect_sync", dtype="uint32", min_arch=90, attrs={ELECTS_ONE_LANE: True},
        emulate=lambda call, emit: "tvm_cuda_emu::elect_sync()")
def _elect_sync(call: Call, emit: Emit) -> str:
    return helper(emit, "tvm_elect_sync", _ELECT) + "()"


@intrin("ptx.setmaxnreg", "inc, reg_count", min_arch=90,
        emulate=lambda call, emit: "(void)0")  # registers are not modelled
def _setmaxnreg(call: Call, emit: Emit) -> str:
    action = "inc" if bool_arg(call, 0) else "dec"
    n = int_arg(call, 1)
    if n % 8 or not 24 <= n <= 256:
        raise fail(call, f"register count must be a multiple of 8 in [24, 256], got {n}")
    return asm(f"setmaxnreg.{action}.sync.aligned.u32 {n};", memory=False)


@intrin(
    "ptx.fetch_register",
    "bits, reg_name",
    strings=("reg_name",),
    dtype=lambda a: f"int{a[0].value}" if isinstance(a[0], E.IntImm) else "int32",
)
def _fetch_register(call: Call, emit: Emit) -> str:
    bits, name = int_arg(call, 0), S(call, 1)
    if bits not in (32, 64) or not re.fullmatch(r"[a-z_0-9.]+", name):
        raise fail(call, f"cannot read register %{name} as {bits} bits")
    c, ct = ("r", "int") if bits == 32 else ("l", "long long")
    fn = f"tvm_reg_{_mangle(name)}_{bits}"
    return (
        helper(
            emit,
            fn,
            f"__device__ __forceinline__ {ct} {fn}() {{\n  {ct} v;\n"
            f'  asm volatile("mov.b{bits} %0, %%{name};" : "={c}"(v));\n  return v;\n}}',
        )
        + "()"
    )


def _value_helper(
    emit: Emit, fn: str, ret_c: str, con: str, body: str, params: list[tuple[str, tuple[str, str]]]
) -> str:
    """A helper returning one asm output: ``body`` uses %0 for it and %1.. for ``params``."""
    decl = ", ".join(f"{t} {n}" for n, (t, _) in params)
    ins = ", ".join(f'"{c}"({n})' for n, (_, c) in params)
    src = (
        f"__device__ __forceinline__ {ret_c} {fn}({decl}) {{\n  {ret_c} v;\n"
        f'  asm volatile("{body}" : "={con}"(v) : {ins} : "memory");\n  return v;\n}}'
    )
    return helper(emit, fn, src)


# -- emulation rules of the plain loads and stores (the CPU emulator: emu/tvm_cuda_emu.h): a
# shared-space address is a 32-bit shared (or shared::cluster) address, others generic pointers
def _emu_addr(emit: Emit, a: Any, space: str, nbytes: str) -> str:
    if space.startswith("shared"):
        return f"tvm_cuda_emu::smem_at({smem_addr(emit, a)}, {nbytes}, \"ld/st.{space}\")"
    return f"((unsigned char*)({gaddr(emit, a)}))"


def _emu_ld_at(call: Call, emit: Emit, ptype_at: int, space: str) -> str:
    ct = _t(call, ptype_at)[0]
    return (f"(({ctype(emit, call.dtype)})(*({ct}*)"
            f"{_emu_addr(emit, call.args[0], space, f'sizeof({ct})')}))")


def _emu_ld(call: Call, emit: Emit) -> str:
    return _emu_ld_at(call, emit, 6, S(call, 4))


def _emu_st(call: Call, emit: Emit) -> str:
    address, *values = call.args[:-7]
    space, ptype = S(call, len(call.args) - 5), len(call.args) - 2
    ct = _t(call, ptype)[0]
    at = _emu_addr(emit, address, space, f"{len(values)} * sizeof({ct})")
    stores = ", ".join(f"((({ct}*)tvm_emu_p)[{k}] = ({ct})({emit(v)}))"
                       for k, v in enumerate(values))
    return f"[&] {{ unsigned char* tvm_emu_p = {at}; {stores}; }}()"


def _ld_operands(
    addr: Any, return_type: str, ptx_type: str, *, weak: bool = False, space: str = "global",
    cop: str = "", cache_hint: str = "", cache_policy: Any = None,
) -> tuple[Any, ...]:
    """``ld{.weak}{.space}{.cop}{.L2::cache_hint}.{ptx_type}`` of the value at ``addr``."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (addr, policy, return_type, int(bool(weak)), space, cop, ptx_type, has)


@intrin("ptx.ld", _ld_operands, nargs=8, dtype=arg_str(2), choices={"ptx_type": LD_TYPES},
        emulate=_emu_ld)
def _ld(call: Call, emit: Emit) -> str:
    addr, policy, _, weak, space, cop, ptype, has = call.args
    ct, con, _ = _t(call, 6)
    hint = bool_arg(call, 7)
    mods = _dot(
        "weak" if bool_arg(call, 3) else "",
        S(call, 4),
        S(call, 5),
        "L2::cache_hint" if hint else "",
        S(call, 6),
    )
    fn = "tvm_ptx_ld_" + _mangle(mods)
    body = f"ld{mods} %0, [%1]" + (", %2;" if hint else ";")
    acon, act, aval = _addr(emit, addr, S(call, 4))
    params = [("addr", (act, acon))]
    if hint:
        params.append(("policy", ("unsigned long long", "l")))
    _value_helper(emit, fn, ct, con, body, params)
    extra = f", {emit(policy)}" if hint else ""
    return f"(({ctype(emit, call.dtype)}){fn}({aval}{extra}))"


def _ld_ordered(sem: str, params: str, space_at: int) -> None:
    """Declare ``ptx.ld_<sem>``: ``ld.acquire.scope.space`` / ``ld.volatile.space`` of operand 0
    (the modifiers follow the result and PTX types at operands 1 and 2; the space is operand
    ``space_at``)."""

    def rule(call: Call, emit: Emit) -> str:
        ct, con, _ = _t(call, 2)
        mods = _dot(sem, *(S(call, k) for k in range(3, space_at + 1)), S(call, 2))
        fn = "tvm_ptx_ld_" + _mangle(mods)
        acon, act, aval = _addr(emit, call.args[0], S(call, space_at))
        _value_helper(emit, fn, ct, con, f"ld{mods} %0, [%1];", [("addr", (act, acon))])
        return f"(({ctype(emit, call.dtype)}){fn}({aval}))"

    def emulate(call: Call, emit: Emit) -> str:
        return _emu_ld_at(call, emit, 2, S(call, space_at))

    intrin(f"ptx.ld_{sem}", params, dtype=arg_str(1), choices={"ptx_type": LD_TYPES},
           emulate=emulate)(rule)


_ld_ordered("acquire", "addr, return_type, ptx_type, *, scope='gpu', space='global'", 4)
_ld_ordered("volatile", "addr, return_type, ptx_type, *, space='global'", 3)


def _ld_global_acquire_type(call: Call) -> str:
    """The type that names the helper: ``res``'s (a 32-bit value, or what a pointer ``res``
    points to), else ``b32``; anything not 32 bits wide is an error."""
    res = call.args[0]
    dtype = res.dtype if isinstance(res, E.PrimExpr) else None
    if dtype is not None and dtype.is_handle:
        dtype = getattr(res, "ptr_dtype", None)
        if dtype is None:
            return "b32"
    if dtype is None or dtype.bits != 32 or dtype.lanes != 1:
        raise fail(call, f"ld_global_acquire loads 32 bits: res must be a 32-bit scalar or a "
                         f"pointer to one, got {dtype}")
    return str(dtype)


def _ld_global_acquire_helper(call: Call, emit: Emit) -> str:
    """The seed's helper, named by the result's type (``tvm_builtin_ptx_ld_global_acquire_int32``):
    the 32 bits at a global address, loaded with acquire semantics at gpu scope."""
    fn = f"tvm_builtin_ptx_ld_global_acquire_{_ld_global_acquire_type(call)}"
    _value_helper(emit, fn, "unsigned", "r", "ld.global.acquire.gpu.b32 %0, [%1];",
                  [("addr", ("unsigned long long", "l"))])
    return fn


def _emu_ld_global_acquire(call: Call, emit: Emit) -> str:
    # the emulator's memory is coherent: a plain 32-bit load (the helper is not printed)
    res, addr = call.args
    _ld_global_acquire_type(call)
    return f"({lvalue(emit, res, 'unsigned')} = *(const unsigned*){gaddr(emit, addr)})"


@intrin("ptx.ld_global_acquire", "res, addr", min_arch=70, emulate=_emu_ld_global_acquire)
def _ld_global_acquire(call: Call, emit: Emit) -> str:
    res, addr = call.args
    fn = _ld_global_acquire_helper(call, emit)
    return f"({lvalue(emit, res, 'unsigned')} = {fn}({gaddr(emit, addr)}))"


def _red_atom_operands(
    address: Any, value: Any, *, sem: str = "", scope: str = "", space: str = "global", op: str,
    ptx_type: str, cache_hint: str = "", cache_policy: Any = None,
) -> tuple[Any, ...]:
    """``{red|atom}{.sem}{.scope}{.space}.op{.L2::cache_hint}.ptx_type [address], value``."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (address, value, policy, sem, scope, space, op, ptx_type, has)


def _red_atom(call: Call, emit: Emit, what: str) -> tuple[str, str, bool, str, Any, Any, Any]:
    address, value, policy = call.args[:3]
    ct, con, _ = _t(call, 7)
    hint = bool_arg(call, 8)
    mods = _dot(
        S(call, 3), S(call, 4), S(call, 5), S(call, 6), "L2::cache_hint" if hint else "", S(call, 7)
    )
    return ct, con, hint, mods, address, value, policy


# what ``op`` makes of the old value ``o`` and the operand ``v`` (the emulator's read-modify-write)
_RED_ATOM_OPS = {
    "add": "o + v", "min": "(o < v ? o : v)", "max": "(o > v ? o : v)", "and": "o & v",
    "or": "o | v", "xor": "o ^ v", "exch": "v", "inc": "(o >= v ? 0 : o + 1)",
    "dec": "((o == 0 || o > v) ? v : o - 1)",
}


def _emu_red_atom(call: Call, emit: Emit) -> str:
    """``red``/``atom`` on the emulator: one atomic read-modify-write of the element at the
    address (``tvm_cuda_emu::atomic_update``), returning the old value. The lambda's names
    start with ``tvm_``, which no kernel variable does (the code generator renames those)."""
    ct = _t(call, 7)[0]
    op = S(call, 6)
    update = _RED_ATOM_OPS.get(op)
    if update is None:
        raise fail(call, f"the emulator has no {op!r} reduction (it runs "
                         f"{', '.join(_RED_ATOM_OPS)})")
    update = re.sub(r"\b([ov])\b", r"tvm_emu_\1", update)
    at = _emu_addr(emit, call.args[0], S(call, 5), f"sizeof({ct})")
    return (f"[&] {{ {ct} tvm_emu_v = ({ct})({emit(call.args[1])}); "
            f"return tvm_cuda_emu::atomic_update(({ct}*){at}, "
            f"[&]({ct} tvm_emu_o) {{ return ({ct})({update}); }}); }}()")


@intrin("ptx.red_scalar", _red_atom_operands, nargs=9, emulate=_emu_red_atom)
def _red_scalar(call: Call, emit: Emit) -> str:
    ct, con, hint, mods, address, value, policy = _red_atom(call, emit, "red")
    acon, _, aval = _addr(emit, address, S(call, 5))
    ins = [f'"{acon}"({aval})', f'"{con}"(({ct})({emit(value)}))']
    if hint:
        ins.append(f'"l"((unsigned long long)({emit(policy)}))')
    return asm(f"red{mods} [%0], %1" + (", %2;" if hint else ";"), inputs=ins)


@intrin("ptx.atom_scalar", _red_atom_operands, nargs=9, dtype=arg_str(7, _ATOM_RET),
        emulate=_emu_red_atom)
def _atom_scalar(call: Call, emit: Emit) -> str:
    ct, con, hint, mods, address, value, policy = _red_atom(call, emit, "atom")
    fn = "tvm_ptx_atom_" + _mangle(mods)
    acon, act, aval = _addr(emit, address, S(call, 5))
    params = [("addr", (act, acon)), ("value", (ct, con))]
    if hint:
        params.append(("policy", ("unsigned long long", "l")))
    _value_helper(
        emit, fn, ct, con, f"atom{mods} %0, [%1], %2" + (", %3;" if hint else ";"), params
    )
    extra = f", {emit(policy)}" if hint else ""
    return f"{fn}({aval}, ({ct})({emit(value)}){extra})"


def _red_vec_operands(address: Any, *values: Any) -> tuple[Any, ...]:
    """``red.global.add.v2/v4.f32 [address], {values}`` (sm_90): 2 or 4 float32 values added
    to the consecutive floats at ``address`` (8- or 16-byte aligned), each element
    atomically."""
    return (address, *values)


def _red_vec_check(call: Call) -> None:
    if len(call.args) - 1 not in (2, 4):
        raise fail(call, f"red_add_f32_vec adds 2 or 4 values, got {len(call.args) - 1}")


def _emu_red_vec(call: Call, emit: Emit) -> str:
    _red_vec_check(call)
    p = ptr(emit, call.args[0], "float")
    return "(" + ", ".join(f"atomicAdd({p} + {j}, (float)({emit(v)}))"
                           for j, v in enumerate(call.args[1:])) + ")"


@intrin("ptx.red_add_f32_vec", _red_vec_operands, nargs=(3, 5), min_arch=90,
        emulate=_emu_red_vec)
def _red_vec(call: Call, emit: Emit) -> str:
    _red_vec_check(call)
    values = call.args[1:]
    ins = [f'"l"({gaddr(emit, call.args[0])})'] + [f'"f"((float)({emit(v)}))' for v in values]
    regs = ", ".join(f"%{j + 1}" for j in range(len(values)))
    return asm(f"red.global.add.v{len(values)}.f32 [%0], {{{regs}}};", inputs=ins)


def _st_operands(
    address: Any, *values: Any, weak: bool = False, space: str = "shared", cop: str = "",
    vec: str = "", ptx_type: str, cache_hint: str = "", cache_policy: Any = None,
) -> tuple[Any, ...]:
    """``st{.weak}{.space}{.cop}{.vec}{.L2::cache_hint}.ptx_type [address], values``."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (address, *values, policy, int(bool(weak)), space, cop, vec, ptx_type, has)


@intrin("ptx.st", _st_operands, nargs=(8, None), emulate=_emu_st)
def _st(call: Call, emit: Emit) -> str:
    address, *values = call.args[:-7]
    policy = call.args[-7]
    weak, space, cop, vec, ptype, has = (call.args[-6 + k] for k in range(6))
    ct, con, _ = _t(call, len(call.args) - 2)
    hint = bool_arg(call, len(call.args) - 1)
    mods = _dot(
        "weak" if int(weak.value) else "",
        space.value,
        cop.value,
        vec.value,
        "L2::cache_hint" if hint else "",
        ptype.value,
    )
    n = len(values)
    if n != {"": 1, "v2": 2, "v4": 4, "v8": 8}.get(vec.value, -1):
        raise fail(call, f"st{_dot(vec.value)} stores {vec.value or 'one'} value(s), got {n}")
    regs = ", ".join(f"%{k + 1}" for k in range(n))
    regs = f"{{{regs}}}" if vec.value else regs
    acon, _, aval = _addr(emit, address, space.value)
    ins = [f'"{acon}"({aval})'] + [f'"{con}"(({ct})({emit(v)}))' for v in values]
    if hint:
        ins.append(f'"l"((unsigned long long)({emit(policy)}))')
    tail = f", %{n + 1};" if hint else ";"
    return asm(f"st{mods} [%0], {regs}{tail}", inputs=ins)


def _st_bulk_operands(
    ptr: Any, num_bytes: Any, *, weak: bool = False, space: str = "shared::cta"
) -> tuple[Any, ...]:
    """``st.bulk`` of ``num_bytes`` zero bytes at ``ptr``."""
    return (ptr, num_bytes, int(bool(weak)), space)


def _emu_st_bulk(call: Call, emit: Emit) -> str:
    """Zero ``n`` bytes: at a shared address of this CTA (``shared::cta``, bounds-checked), or
    at a generic address."""
    p, n = call.args[:2]
    size = f"(size_t)({emit(n)})"
    if S(call, 3) == "shared::cta":
        dst = f'tvm_cuda_emu::smem_at({smem_addr(emit, p)}, {size}, "st.bulk")'
    else:
        dst = f"(void*)({gaddr(emit, p)})"
    return f"std::memset({dst}, 0, {size})"


@intrin("ptx.st_bulk", _st_bulk_operands, nargs=4, min_arch=100, emulate=_emu_st_bulk)
def _st_bulk(call: Call, emit: Emit) -> str:
    p, n, weak, space = call.args
    mods = _dot("weak" if bool_arg(call, 2) else "", S(call, 3))
    # the address is in the state space named (a 32-bit shared address), else generic
    addr = (f'"r"({smem_addr(emit, p)})' if S(call, 3) == "shared::cta"
            else f'"l"({gaddr(emit, p)})')
    return asm(
        f"st.bulk{mods} [%0], %1, 0;",
        inputs=[addr, f'"l"((unsigned long long)({emit(n)}))'],
    )


@intrin(
    "ptx.prefetch_tensormap",
    "tensormap_addr, space=''",
    choices={"space": ("", "const", "param")},
    min_arch=90,
    emulate=lambda call, emit: "(void)0",  # a cache hint: the emulator has no cache
)
def _prefetch_tensormap(call: Call, emit: Emit) -> str:
    return asm(
        f"prefetch{_dot(S(call, 1))}.tensormap [%0];", inputs=[f'"l"({gaddr(emit, call.args[0])})']
    )


def _emu_fns(call: Call, emit: Emit) -> str:
    m, b, o = (emit(a) for a in call.args)
    return f"tvm_cuda_emu::fns_b32((unsigned)({m}), (unsigned)({b}), (int)({o}))"


@intrin("ptx.fns_b32", "mask, base, offset", dtype="uint32", effect=PURE, emulate=_emu_fns)
def _fns(call: Call, emit: Emit) -> str:
    fn = _value_helper(
        emit,
        "tvm_ptx_fns_b32",
        "unsigned",
        "r",
        "fns.b32 %0, %1, %2, %3;",
        [("mask", ("unsigned", "r")), ("base", ("unsigned", "r")), ("offset", ("int", "r"))],
    )
    m, b, o = (emit(a) for a in call.args)
    return f"{fn}((unsigned)({m}), (unsigned)({b}), (int)({o}))"


@intrin("ptx.add_rn_f32_bf16", "acc, x", dtype="float32", effect=PURE)
def _add_rn_f32_bf16(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_bf16.h")
    acc, x = call.args
    xv = emit(x)
    if isinstance(x, E.PrimExpr) and not x.dtype.is_float:  # raw bf16 bits
        xv = f"__ushort_as_bfloat16((unsigned short)({xv}))"
    return f"__fadd_rn({emit(acc)}, __bfloat162float({xv}))"


def _emu_mapa(call: Call, emit: Emit) -> str:
    p, rank = call.args[:2]
    if S(call, 3) == "u32":
        src = f"(unsigned)({emit(p)})"
        if isinstance(p, E.PrimExpr) and p.dtype.is_handle:
            src = f"(unsigned)__cvta_generic_to_shared((void*)({emit(p)}))"
        out = f"tvm_cuda_emu::mapa_shared({src}, (unsigned)({emit(rank)}))"
    else:
        out = f"tvm_cuda_emu::mapa_generic({gaddr(emit, p)}, (unsigned)({emit(rank)}))"
    rt = call.dtype
    return out if rt.is_void else f"(({ctype(emit, rt)}){out})"


@intrin(
    "ptx.mapa",
    "ptr, rank, *, space='', ptx_type='u64', return_type='uint64'",
    dtype=arg_str(4),
    choices={"space": ("", "shared::cluster"), "ptx_type": ("u32", "u64")},
    min_arch=90,
    emulate=_emu_mapa,
)
def _mapa(call: Call, emit: Emit) -> str:
    p, rank = call.args[:2]
    space, ptype = S(call, 2), S(call, 3)
    mods = _dot(space, ptype)
    fn = "tvm_builtin_ptx_mapa_" + _mangle(space, ptype) if space else f"tvm_builtin_ptx_mapa_{ptype}"
    if ptype == "u32":  # a 32-bit shared address in, one out
        src = f"(unsigned)({emit(p)})"
        if isinstance(p, E.PrimExpr) and p.dtype.is_handle:
            src = f"(unsigned)__cvta_generic_to_shared((void*)({emit(p)}))"
        _value_helper(emit, fn, "unsigned", "r", f"mapa{mods} %0, %1, %2;",
                      [("addr", ("unsigned", "r")), ("rank", ("unsigned", "r"))])
    else:  # the seed's form: the pointer itself in (tvm_builtin_ptx_mapa_u64(A_smem, rank))
        if isinstance(p, E.BufferLoad):
            src = f"(&({emit(p)}))"
        elif isinstance(p, E.PrimExpr) and p.dtype.is_handle:
            src = emit(p)
        else:
            src = f"(const void*)({emit(p)})"
        helper(emit, fn, (
            f"__device__ __forceinline__ unsigned long long {fn}(const void* addr, unsigned rank) {{\n"
            f"  unsigned long long v;\n"
            f'  asm volatile("mapa{mods} %0, %1, %2;" : "=l"(v) : "l"((unsigned long long)addr), '
            f'"r"(rank) : "memory");\n'
            f"  return v;\n}}"))
    out = f"{fn}({src}, (unsigned)({emit(rank)}))"
    rt = call.dtype
    return out if rt.is_void else f"(({ctype(emit, rt)}){out})"


@sugar("ptx.map_shared_rank")
def ptx_map_shared_rank(ptr: Any, rank: Any) -> Call:
    """The generic address of ``ptr`` in the shared memory of cluster CTA ``rank`` (a ``mapa``
    call; the seed prints it as ``T.ptx.mapa``)."""
    return build("ptx.mapa", ptr, rank)


@intrin("ptx.any_sync", "mask, pred", dtype="int32")
def _any_sync(call: Call, emit: Emit) -> str:
    return f"__any_sync((unsigned)({emit(call.args[0])}), {emit(call.args[1])})"
