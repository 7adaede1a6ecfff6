"""Warp-level ``mma.sync``: dense (any PTX shape and type, one pointer per register), the
legacy pointer+offset form, and the sparse ``mma.sp`` form for 16-bit inputs."""

from __future__ import annotations

from typing import Any

from tvm.error import NotModelledError
from tvm.ir.expr import Call

from ._base import Emit, asm, bool_arg, fail, helper, int_arg, lvalue, ptr, table_arg
from ._base import str_arg as S
from ._spec import build, intrin, sugar

# PTX spellings of the type names the seed uses, and each type's register constraint/C type.
PTX_TYPE_NAME = {
    "fp16": "f16",
    "fp32": "f32",
    "fp64": "f64",
    "bf16": "bf16",
    "tf32": "tf32",
    "int8": "s8",
    "uint8": "u8",
    "int32": "s32",
    "int4": "s4",
    "uint4": "u4",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "bfloat16": "bf16",
    "e4m3": "e4m3",
    "e5m2": "e5m2",
    "s8": "s8",
    "u8": "u8",
    "s32": "s32",
    "s4": "s4",
    "u4": "u4",
    "b1": "b1",
    "f16": "f16",
    "f32": "f32",
    "f64": "f64",
}


def _ptx_type(call: Call, i: int) -> str:
    return table_arg(call, i, PTX_TYPE_NAME, "unknown mma data type")


def _reg(t: str) -> tuple[str, str]:
    """(constraint, C type) of one 32/64-bit register holding type ``t``."""
    return {"f32": ("f", "float"), "f64": ("d", "double")}.get(t, ("r", "unsigned"))


def _mnemonic(shape: str, a_layout: str, b_layout: str, d_t: str, a_t: str, b_t: str, c_t: str,
              satfinite: bool, bit_op: str) -> str:
    kind = f".{bit_op}.popc" if bit_op else ""
    sat = ".satfinite" if satfinite else ""
    if a_t in ("f16", "bf16", "tf32", "e4m3", "e5m2") or shape == "m8n8k4":
        layouts = f".{a_layout}.{b_layout}"
    else:
        layouts = ".row.col"
    return f"mma.sync.aligned.{shape}{layouts}{sat}.{d_t}.{a_t}.{b_t}.{c_t}{kind}"


def _mma_asm(
    shape: str, a_layout: str, b_layout: str, d_t: str, a_t: str, b_t: str, c_t: str,
    d_regs: list[str], a_regs: list[str], b_regs: list[str], c_regs: list[str],
    satfinite: bool, bit_op: str,
) -> str:
    """``mma.sync`` with its operands given as C lvalues (d) and values (a, b, c)."""
    mnemonic = _mnemonic(shape, a_layout, b_layout, d_t, a_t, b_t, c_t, satfinite, bit_op)
    k = 0
    groups: list[str] = []
    for regs in (d_regs, a_regs, b_regs, c_regs):
        groups.append("{" + ", ".join(f"%{k + j}" for j in range(len(regs))) + "}")
        k += len(regs)
    dc, _ = _reg(d_t)
    outs = [f'"={dc}"({r})' for r in d_regs]
    ins = [f'"{_reg(a_t)[0]}"({r})' for r in a_regs] + [f'"{_reg(b_t)[0]}"({r})' for r in b_regs]
    ins += [f'"{_reg(c_t)[0]}"({r})' for r in c_regs]
    return asm(f"{mnemonic} {', '.join(groups)};", outs, ins, memory=False)


def _helper_name(mnemonic: str) -> str:
    """``ptx_mma_m16n8k16_row_col_f32_f16_f16_f32``: the ``__device__`` function that issues
    ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`` (one per instruction form)."""
    return "ptx_mma_" + mnemonic.removeprefix("mma.sync.aligned.").replace(".", "_")


def _params(prefix: str, ctype: str, n: int) -> list[str]:
    return [f"{ctype} {prefix}{i}" for i in range(n)]


def _mma_operands(
    shape: str, a_layout: str, b_layout: str, d_type: str, a_type: str, b_type: str,
    c_type: str, d_ptrs: list[Any], a_ptrs: list[Any], b_ptrs: list[Any],
    c_ptrs: list[Any] | None = None, saturate: bool = False, bit_op: str | None = None,
) -> tuple[Any, ...]:
    """``mma.sync``: one pointer per 32-bit register of D, A, B (and C; None = C is zero)."""
    for n, v in (("d_ptrs", d_ptrs), ("a_ptrs", a_ptrs), ("b_ptrs", b_ptrs)):
        if not isinstance(v, (list, tuple)):
            raise TypeError(f"{n} must be a list of register pointers")
    c = list(c_ptrs) if c_ptrs is not None else []
    counts = (len(d_ptrs), len(a_ptrs), len(b_ptrs), len(c), c_ptrs is None)
    head = (shape, a_layout, b_layout, d_type, a_type, b_type, c_type, *counts)
    return (*head, *d_ptrs, *a_ptrs, *b_ptrs, *c, saturate, *([bit_op] if bit_op is not None else []))


def _emu_mma(call: Call, emit: Emit) -> str:
    """m16n8k16 and m16n8k8, row.col, f16 or bf16 inputs, f32 accumulators, through a helper of
    the real rule's name (``tvm_cuda_emu::mma_m16n8k``); other forms are named as not modelled."""
    shape, a_layout, b_layout = S(call, 0), S(call, 1), S(call, 2)
    d_t, a_t, b_t, c_t = (_ptx_type(call, i) for i in range(3, 7))
    nd, na, nb, nc = (int_arg(call, i) for i in range(7, 11))
    k = {"m16n8k16": 16, "m16n8k8": 8}.get(shape)
    if k is None or (a_layout, b_layout, d_t, c_t) != ("row", "col", "f32", "f32") or \
            a_t != b_t or a_t not in ("f16", "bf16") or (nd, na, nb) != (4, k // 4, k // 8):
        raise NotModelledError(
            f"intrinsic ptx.mma {shape}.{a_layout}.{b_layout}.{d_t}.{a_t}.{b_t}.{c_t}: the CUDA "
            "emulator models m16n8k16 and m16n8k8 .row.col.f32 with f16 or bf16 inputs only")
    ptrs = call.args[12 : 12 + nd + na + nb + nc]
    d = [f"&{lvalue(emit, p, 'float')}" for p in ptrs[:4]]
    a = [lvalue(emit, p, "unsigned") for p in ptrs[4 : 4 + na]]
    b = [lvalue(emit, p, "unsigned") for p in ptrs[4 + na : 4 + na + nb]]
    c = ["0.0f"] * 4 if bool_arg(call, 11) else [lvalue(emit, p, "float") for p in ptrs[-4:]]
    mnemonic = _mnemonic(shape, a_layout, b_layout, d_t, a_t, b_t, c_t, False, "")
    name = _helper_name(mnemonic)
    params = _params("*d", "float", 4) + _params("a", "unsigned", na) + \
        _params("b", "unsigned", nb) + _params("c", "float", 4)
    args = [f"d{i}" for i in range(4)] + [f"a{i}" for i in range(na)] + ["0u"] * (4 - na) + \
        [f"b{i}" for i in range(nb)] + ["0u"] * (2 - nb) + [f"c{i}" for i in range(4)]
    kind = "__half" if a_t == "f16" else "__nv_bfloat16"
    helper(emit, name, (
        f"// {mnemonic}, run on the CPU (the warp's fragments are exchanged, then multiplied)\n"
        f"__device__ __forceinline__ void {name}({', '.join(params)}, "
        "unsigned line = __builtin_LINE()) {\n"
        f"  tvm_cuda_emu::mma_m16n8k<{kind}, {k}>({', '.join(args)}, line);\n}}\n"))
    return f"{name}({', '.join(d + a + b + c)})"


@intrin("ptx.mma", _mma_operands, nargs=(14, None), min_arch=80, emulate=_emu_mma)
def _mma(call: Call, emit: Emit) -> str:
    """A ``__device__`` helper per instruction form (:func:`_helper_name`) holding the inline
    PTX; the call passes D's registers by reference."""
    shape, a_layout, b_layout = S(call, 0), S(call, 1), S(call, 2)
    d_t, a_t, b_t, c_t = (_ptx_type(call, i) for i in range(3, 7))
    nd, na, nb, nc = (int_arg(call, i) for i in range(7, 11))
    no_c = bool_arg(call, 11)
    ptrs = call.args[12 : 12 + nd + na + nb + nc]
    rest = call.args[12 + nd + na + nb + nc :]
    if len(ptrs) != nd + na + nb + nc or not rest:
        raise fail(call, "operand counts do not match the register lists")
    saturate = bool_arg(call, 12 + nd + na + nb + nc)
    bit_op = S(call, len(call.args) - 1) if len(rest) > 1 else ""
    dct, act, bct, cct = (_reg(t)[1] for t in (d_t, a_t, b_t, c_t))
    d = [lvalue(emit, p, dct) for p in ptrs[:nd]]
    a = [lvalue(emit, p, act) for p in ptrs[nd : nd + na]]
    b = [lvalue(emit, p, bct) for p in ptrs[nd + na : nd + na + nb]]
    if no_c:
        c = ["0.0f" if cct == "float" else f"({cct})0" for _ in d]
    else:
        c = [lvalue(emit, p, cct) for p in ptrs[nd + na + nb :]]
    mnemonic = _mnemonic(shape, a_layout, b_layout, d_t, a_t, b_t, c_t, saturate, bit_op)
    name = _helper_name(mnemonic)
    params = _params("&d", dct, nd) + _params("a", act, na) + _params("b", bct, nb) + \
        _params("c", cct, len(c))
    body = _mma_asm(shape, a_layout, b_layout, d_t, a_t, b_t, c_t, [f"d{i}" for i in range(nd)],
                    [f"a{i}" for i in range(na)], [f"b{i}" for i in range(nb)],
                    [f"c{i}" for i in range(len(c))], saturate, bit_op)
    helper(emit, name, f"__device__ __forceinline__ void {name}({', '.join(params)}) {{\n"
                       f"  {body};\n}}\n")
    return f"{name}({', '.join(d + a + b + c)})"


# registers per thread of (A, B, C) for the shapes the legacy and sparse forms generate
_COUNTS = {
    ("m16n8k16", "f16"): (4, 2, 4),
    ("m16n8k16", "bf16"): (4, 2, 4),
    ("m16n8k8", "f16"): (2, 1, 4),
    ("m16n8k8", "bf16"): (2, 1, 4),
    ("m16n8k8", "tf32"): (4, 2, 4),
    ("m16n8k32", "s8"): (4, 2, 4),
    ("m16n8k32", "u8"): (4, 2, 4),
    ("m8n8k4", "f16"): (2, 2, 8),
}


def _mma_legacy_operands(
    dtype: str, shape: str, A_layout: str, B_layout: str, A_dtype: str, B_dtype: str,
    C_dtype: str, multiplicand_a: Any, a_index: Any, multiplicand_b: Any, b_index: Any,
    accumulator: Any, c_index: Any, saturate: Any, operator: str | None = None,
) -> tuple[Any, ...]:
    """``mma.sync`` on fragments given as pointer + element offset (the Apache TVM form)."""
    head = (dtype, shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype)
    frags = (multiplicand_a, a_index, multiplicand_b, b_index, accumulator, c_index)
    return (*head, *frags, saturate, *([operator] if operator is not None else []))


@intrin(
    "ptx.mma.legacy", _mma_legacy_operands, nargs=(14, 15), dtype_forward=True, min_arch=80
)
def _mma_legacy(call: Call, emit: Emit) -> str:
    shape, a_layout, b_layout = S(call, 1), S(call, 2), S(call, 3)
    a_t, b_t, c_t = (_ptx_type(call, i) for i in (4, 5, 6))
    a_p, a_o, b_p, b_o, acc, c_o = call.args[7:13]
    saturate = bool_arg(call, 13)
    bit_op = S(call, 14) if len(call.args) > 14 else ""
    counts = _COUNTS.get((shape, a_t))
    if counts is None:
        raise fail(call, f"legacy mma for {shape} {a_t} is not generated")
    na, nb, nc = counts
    cc = _reg(c_t)[1]
    if c_t == "f16":
        nc //= 2
    ab = f"(({ptr(emit, a_p, 'char')}) + ({emit(a_o)}) * {_elem_bytes(a_t)})"
    bb = f"(({ptr(emit, b_p, 'char')}) + ({emit(b_o)}) * {_elem_bytes(b_t)})"
    cb = f"(({ptr(emit, acc, 'char')}) + ({emit(c_o)}) * {_elem_bytes(c_t)})"
    a = [f"((unsigned*){ab})[{k}]" for k in range(na)]
    b = [f"((unsigned*){bb})[{k}]" for k in range(nb)]
    c = [f"(({cc}*){cb})[{k}]" for k in range(nc)]
    return _mma_asm(shape, a_layout, b_layout, c_t, a_t, b_t, c_t, c, a, b, c, saturate, bit_op)


@sugar("ptx.mma.sp_legacy")
def ptx_mma_sp_legacy(*args: Any, **kwargs: Any) -> Call:
    """The seed's name for sparse ``mma.sync`` on fragments given as pointer + element offset;
    ``T.ptx.mma.sp`` takes that form already, so this builds the same call."""
    return build("ptx.mma.sp", *args, **kwargs)


def _elem_bytes(t: str) -> int:
    return {
        "f16": 2,
        "bf16": 2,
        "f32": 4,
        "tf32": 4,
        "f64": 8,
        "s8": 1,
        "u8": 1,
        "s32": 4,
        "e4m3": 1,
        "e5m2": 1,
    }.get(t, 1)


@intrin(
    "ptx.mma.sp",
    "dtype, shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, multiplicand_a, a_index, "
    "multiplicand_b, b_index, accumulator, c_index, metadata, meta_index, sparse_selector, "
    "saturate",
    dtype_forward=True,
    min_arch=80,
)
def _mma_sp(call: Call, emit: Emit) -> str:
    shape = S(call, 1)  # sparse mma.sync exists for row.col layouts only
    a_t, b_t, c_t = (_ptx_type(call, i) for i in (4, 5, 6))
    a_p, a_o, b_p, b_o, acc, c_o, meta, m_o, _ = call.args[7:16]
    saturate = bool_arg(call, 16)
    if a_t not in ("f16", "bf16") or shape not in ("m16n8k16", "m16n8k32") or c_t != "f32":
        raise fail(
            call,
            f"sparse mma is generated for f16/bf16 m16n8k16/k32 into f32, got "
            f"{shape} {a_t} -> {c_t}",
        )
    na = 2 if shape == "m16n8k16" else 4
    nb = na
    sel = int_arg(call, 15)
    ab = f"((unsigned*)(({ptr(emit, a_p, 'char')}) + ({emit(a_o)}) * 2))"
    bb = f"((unsigned*)(({ptr(emit, b_p, 'char')}) + ({emit(b_o)}) * 2))"
    cb = f"(({ptr(emit, acc, 'float')}) + ({emit(c_o)}))"
    mb = f"(({ptr(emit, meta, 'unsigned')}) + ({emit(m_o)}))"
    outs = [f'"=f"({cb}[{k}])' for k in range(4)]
    ins = [f'"r"({ab}[{k}])' for k in range(na)] + [f'"r"({bb}[{k}])' for k in range(nb)]
    ins += [f'"f"({cb}[{k}])' for k in range(4)] + [f'"r"({mb}[0])']

    def g(s: int, n: int) -> str:
        return "{" + ", ".join(f"%{s + j}" for j in range(n)) + "}"

    sat = ".satfinite" if saturate else ""
    text = (
        f"mma.sp.sync.aligned.{shape}.row.col{sat}.f32.{a_t}.{b_t}.f32 {g(0, 4)}, "
        f"{g(4, na)}, {g(4 + na, nb)}, {g(4 + na + nb, 4)}, %{8 + na + nb}, {sel:#x};"
    )
    return asm(text, outs, ins, memory=False)
