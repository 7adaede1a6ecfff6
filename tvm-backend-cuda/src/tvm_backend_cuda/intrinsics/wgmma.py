"""Hopper warpgroup MMA: fence, commit_group, wait_group, mma_async (A and B in shared memory,
or A in registers), the shared-memory matrix descriptor, and the register no-op barrier."""

from __future__ import annotations

from typing import Any

from tvm.error import NotModelledError
from tvm.ir import expr as E
from tvm.ir.expr import Call

from ._base import Emit, asm, bool_arg, fail, int_arg, lvalue, matrix_descriptor_rule, table_arg
from ._spec import intrin
from .mma import PTX_TYPE_NAME

# every op here exists on sm_90a alone (sm_100a dropped wgmma): min_arch = max_arch = 90
# The CPU emulator (emu/tvm_cuda_emu.h, wgmma_*) computes each thread's fragment when the
# instruction is issued and keeps float results aside until the wait_group that completes their
# commit group (the registers read as a poison value until then); the fence has nothing to
# order, the register barrier nothing to pin.
_NOTHING = "(void)0"


def _nothing(call: Call, emit: Emit) -> str:
    return _NOTHING


@intrin("ptx.wgmma.fence", min_arch=90, max_arch=90, emulate=_nothing)
def _fence(call: Call, emit: Emit) -> str:
    return asm("wgmma.fence.sync.aligned;")


@intrin("ptx.wgmma.commit_group", min_arch=90, max_arch=90,
        emulate=lambda call, emit: "tvm_cuda_emu::wgmma_commit()")
def _commit(call: Call, emit: Emit) -> str:
    return asm("wgmma.commit_group.sync.aligned;")


@intrin("ptx.wgmma.wait_group", "n", min_arch=90, max_arch=90,
        emulate=lambda call, emit: f"tvm_cuda_emu::wgmma_wait({int_arg(call, 0)})")
def _wait(call: Call, emit: Emit) -> str:
    return asm(f"wgmma.wait_group.sync.aligned {int_arg(call, 0)};")


def _reg_constraint(a: Any) -> tuple[str, str]:
    dt = a.dtype if isinstance(a, E.PrimExpr) else None
    if dt is None or dt.is_handle:
        return "r", "unsigned"
    if dt.is_float and dt.bits == 32:
        return "f", "float"
    if dt.bits == 64:
        return "l", "unsigned long long"
    return "r", "unsigned"


@intrin("ptx.wgmma.noop_barrier", "reg", min_arch=90, max_arch=90, emulate=_nothing)
def _noop_barrier(call: Call, emit: Emit) -> str:
    # an empty asm that "modifies" the register keeps the compiler from moving its uses across
    # the asynchronous wgmma that writes it
    reg = call.args[0]
    con, ct = _reg_constraint(reg)
    return asm("", [f'"+{con}"({lvalue(emit, reg, ct)})'])


intrin("ptx.wgmma.encode_matrix_descriptor", "desc, addr, ldo, sdo, swizzle", min_arch=90, max_arch=90)(
    matrix_descriptor_rule(
        "tvm_wgmma_desc",
        "wgmma shared-memory matrix descriptor",
        "layout type in bits 62-63 (1 = 128B, 2 = 64B, 3 = 32B swizzle, 0 = none)",
        "unsigned long long layout = (unsigned long long)((4 - swizzle) & 3);",
        "(layout << 62)",
    )
)


def _t(call: Call, i: int) -> str:
    return table_arg(call, i, PTX_TYPE_NAME, "unknown wgmma type")


def _scale(call: Call, i: int) -> int:
    a = call.args[i]
    v = a.value if isinstance(a, (E.FloatImm, E.IntImm)) else None
    if v not in (1, -1, 1.0, -1.0):
        raise fail(call, f"operand {i} (a scale) must be the constant 1 or -1")
    return int(v)


def _mma_async(call: Call, emit: Emit, rs: bool) -> str:
    m, n, k = int_arg(call, 0), int_arg(call, 1), int_arg(call, 2)
    in_t, out_t = _t(call, 3), _t(call, 4)
    if m != 64 or n % 8 or not 8 <= n <= 256:
        raise fail(call, f"wgmma shapes are m64nNk*, N a multiple of 8 up to 256; got m{m}n{n}k{k}")
    trans_a, trans_b = bool_arg(call, 5), bool_arg(call, 6)
    sa, sb = _scale(call, 7), _scale(call, 8)
    scale_d = call.args[9]
    n_acc = n // 4 if out_t == "f16" else n // 2
    if rs:
        b_desc, *rest = call.args[10:]
        a_regs, accs = rest[:4], rest[4:]
        if len(a_regs) != 4:
            raise fail(call, f"wgmma with A in registers takes 4 A registers, got {len(a_regs)}")
    else:
        a_desc, b_desc, *accs = call.args[10:]
        a_regs = []
    if len(accs) != n_acc:
        raise fail(
            call,
            f"m64n{n} with {out_t} results needs {n_acc} accumulator registers, got {len(accs)}",
        )
    acon, act = ("f", "float") if out_t == "f32" else ("r", "unsigned")
    # a constant scale-d of 0 never reads D: write-only operands end the accumulators' old
    # values there (no register stays live from the previous product into this one)
    mode = "=" if isinstance(scale_d, E.IntImm) and scale_d.value == 0 else "+"
    outs = [f'"{mode}{acon}"({lvalue(emit, a, act)})' for a in accs]
    regs = "{" + ", ".join(f"%{j}" for j in range(n_acc)) + "}"
    j = n_acc
    ins: list[str] = []
    if rs:
        a_op = "{" + ", ".join(f"%{j + q}" for q in range(4)) + "}"
        ins += [f'"r"({lvalue(emit, a, "unsigned")})' for a in a_regs]
        j += 4
    else:
        a_op = f"%{j}"
        ins.append(f'"l"((unsigned long long)({emit(a_desc)}))')
        j += 1
    ins.append(f'"l"((unsigned long long)({emit(b_desc)}))')
    b_op = f"%{j}"
    j += 1
    ins.append(f'"r"((int)({emit(scale_d)}))')
    transposes = ""
    if in_t in ("f16", "bf16"):
        transposes = f", {int(trans_b)}" if rs else f", {int(trans_a)}, {int(trans_b)}"
    elif trans_a or trans_b:
        raise fail(call, f"{in_t} wgmma takes K-major operands only")
    text = (
        f"{{\n.reg .pred p;\nsetp.ne.b32 p, %{j}, 0;\n"
        f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{out_t}.{in_t}.{in_t} {regs}, {a_op}, "
        f"{b_op}, p, {sa}, {sb}{transposes};\n}}"
    )
    return asm(text, outs, ins)


# the emulator's C++ type of each wgmma input type
_EMU_IN = {"f16": "__half", "bf16": "__nv_bfloat16", "e4m3": "__nv_fp8_e4m3",
           "e5m2": "__nv_fp8_e5m2", "tf32": "tvm_cuda_emu::Tf32"}


def _emu_mma_async(call: Call, emit: Emit, rs: bool) -> str:
    _mma_async(call, emit, rs)  # the same operand checks as the CUDA rule
    n, k = int_arg(call, 1), int_arg(call, 2)
    in_t, out_t = _t(call, 3), _t(call, 4)
    if in_t not in _EMU_IN or out_t not in ("f32", "f16"):
        raise NotModelledError(f"intrinsic {call.op.name.removeprefix('tirx.')} with {in_t} "
                               f"inputs and {out_t} results: the CUDA emulator models f16, bf16, "
                               "tf32 and fp8 inputs into f32 or f16")
    trans_a, trans_b = int(bool_arg(call, 5)), int(bool_arg(call, 6))
    sa, sb = _scale(call, 7), _scale(call, 8)
    scale_d = f"(int)({emit(call.args[9])})"
    acon = "float" if out_t == "f32" else "unsigned"
    tmpl = f"<{_EMU_IN[in_t]}, {'true' if out_t == 'f32' else 'false'}>"
    if rs:
        b_desc, *rest = call.args[10:]
        a_regs, accs = rest[:4], rest[4:]
        regs = "".join(f", {lvalue(emit, a, 'unsigned')}" for a in a_regs)
        head = (f"tvm_cuda_emu::wgmma_rs{tmpl}(__LINE__, {n}, {k}, {trans_b}, {sa}, {sb}, "
                f"{scale_d}, (unsigned long long)({emit(b_desc)}){regs}")
    else:
        a_desc, b_desc, *accs = call.args[10:]
        head = (f"tvm_cuda_emu::wgmma_ss{tmpl}({n}, {k}, {trans_a}, {trans_b}, {sa}, {sb}, "
                f"{scale_d}, (unsigned long long)({emit(a_desc)}), "
                f"(unsigned long long)({emit(b_desc)})")
    text = head + "".join(f", {lvalue(emit, a, acon)}" for a in accs) + ")"
    return f"(tvm_cuda_emu::wgmma_line = __LINE__, {text})"  # the line reports name


def _shape_operands(
    M: Any, N: Any, K: Any, in_dtype: Any, out_dtype: Any, transA: Any, transB: Any,
    scaleA: Any, scaleB: Any, scaleD: Any,
) -> tuple[Any, ...]:
    return (M, N, K, in_dtype, out_dtype, transA, transB, float(scaleA), float(scaleB), scaleD)


def _ss_operands(
    descA: Any, descB: Any, *accums: Any, M: Any, N: Any, K: Any, in_dtype: Any, out_dtype: Any,
    transA: Any, transB: Any, scaleA: Any, scaleB: Any, scaleD: Any,
) -> tuple[Any, ...]:
    """``wgmma.mma_async`` with A and B as shared-memory descriptors, accumulating into
    ``accums`` (one register each)."""
    head = _shape_operands(M, N, K, in_dtype, out_dtype, transA, transB, scaleA, scaleB, scaleD)
    return (*head, descA, descB, *accums)


def _rs_operands(
    descB: Any, *reg_list: Any, M: Any, N: Any, K: Any, in_dtype: Any, out_dtype: Any,
    transA: Any, transB: Any, scaleA: Any, scaleB: Any, scaleD: Any,
) -> tuple[Any, ...]:
    """``wgmma.mma_async`` with A in registers: ``reg_list`` is the 4 A registers, then the
    accumulators."""
    head = _shape_operands(M, N, K, in_dtype, out_dtype, transA, transB, scaleA, scaleB, scaleD)
    return (*head, descB, *reg_list)


@intrin("ptx.wgmma.mma_async.ss", _ss_operands, nargs=(12, None), min_arch=90, max_arch=90,
        emulate=lambda call, emit: _emu_mma_async(call, emit, False))
def _ss(call: Call, emit: Emit) -> str:
    return _mma_async(call, emit, False)


@intrin("ptx.wgmma.mma_async.rs", _rs_operands, nargs=(11, None), min_arch=90, max_arch=90,
        emulate=lambda call, emit: _emu_mma_async(call, emit, True))
def _rs(call: Call, emit: Emit) -> str:
    return _mma_async(call, emit, True)
