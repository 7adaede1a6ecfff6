"""``ldmatrix`` / ``stmatrix``: warp-collective 8x8 matrix loads and stores of shared memory."""

from __future__ import annotations

import re
from typing import Any

from tvm.ir import expr as E
from tvm.ir.expr import Call

from ._base import Emit, asm, bool_arg, ctype, fail, helper, int_arg, lvalue, ptr, smem_addr
from ._base import str_arg as S
from ._spec import intrin

NUM = (1, 2, 4)
LDMATRIX_DTYPE = (".b16", ".b8", "b16", "b8")
STMATRIX_SHAPE = ("m8n8", "m16n8")
STMATRIX_SPACE = ("shared", "shared::cta")


def _num(call: Call, i: int) -> int:
    num = int_arg(call, i)
    if num not in NUM:
        raise fail(call, f"num must be 1, 2 or 4, got {num}")
    return num


def _regs(n: int, first: int) -> str:
    return "{" + ", ".join(f"%{first + k}" for k in range(n)) + "}"


def _warp_matrix(call: Call, smem_at: int, role: str) -> tuple[str, int, Any, list[Any]]:
    """``(".trans" or "", num, shared pointer, registers)`` of an ldmatrix/stmatrix call whose
    shared pointer is operand ``smem_at``, followed by its ``role`` registers."""
    trans, num = bool_arg(call, 0), _num(call, 1)
    smem, *regs = call.args[smem_at:]
    instr = call.op.name.rsplit(".", 1)[-1]
    if len(regs) != num:
        raise fail(call, f"{instr} .x{num} needs {num} {role} registers, got {len(regs)}")
    return (".trans" if trans else ""), num, smem, regs


def _check_registers(name: str, num: Any, smem_ptr: Any, regs: tuple[Any, ...]) -> None:
    if isinstance(smem_ptr, str) or len(regs) != int(num):
        raise TypeError(f"{name} .x{num} takes the shared pointer and {num} registers")


def _ldmatrix_operands(
    trans: Any, num: Any, dtype: str, smem_ptr: Any, *dst_handles: Any
) -> tuple[Any, ...]:
    """``ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared{dtype}`` into one register per handle."""
    _check_registers("ldmatrix", num, smem_ptr, dst_handles)
    return (trans, num, dtype, smem_ptr, *dst_handles)


def _emu_ldmatrix(call: Call, emit: Emit) -> str:
    if S(call, 2).lstrip(".") != "b16":
        raise fail(call, "the CUDA emulator models .b16 ldmatrix only")
    t, num, smem, dst = _warp_matrix(call, 3, "destination")
    regs = ", ".join(f"&{lvalue(emit, d, 'unsigned')}" for d in dst)
    return (f"tvm_cuda_emu::ldmatrix_b16({'true' if t else 'false'}, {num}, "
            f"{smem_addr(emit, smem)}, {regs})")


@intrin(
    "ptx.ldmatrix",
    _ldmatrix_operands,
    nargs=(5, 8),
    choices={"num": NUM, "dtype": LDMATRIX_DTYPE},
    min_arch=75,
    emulate=_emu_ldmatrix,
)
def _ldmatrix(call: Call, emit: Emit) -> str:
    dtype = S(call, 2).lstrip(".")
    if dtype != "b16":
        raise fail(call, f"only .b16 ldmatrix is generated, got .{dtype}")
    t, num, smem, dst = _warp_matrix(call, 3, "destination")
    return asm(
        f"ldmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 {_regs(num, 0)}, [%{num}];",
        [f'"=r"({lvalue(emit, d, "unsigned")})' for d in dst],
        [f'"r"({smem_addr(emit, smem)})'],
    )


def _stmatrix_operands(
    trans: Any, num: Any, dtype: str, smem_ptr: Any, *src_handles: Any, shape: str = "m8n8",
    space: str = "shared",
) -> tuple[Any, ...]:
    """``stmatrix.sync.aligned.{shape}.x{num}{.trans}.{space}{dtype}`` from one register per
    handle."""
    _check_registers("stmatrix", num, smem_ptr, src_handles)
    return (trans, num, dtype, shape, space, smem_ptr, *src_handles)


def _emu_stmatrix(call: Call, emit: Emit) -> str:
    if S(call, 2).lstrip(".") != "b16" or S(call, 3) != "m8n8":
        raise fail(call, "the CUDA emulator models m8n8 .b16 stmatrix only")
    t, num, smem, src = _warp_matrix(call, 5, "source")
    regs = ", ".join(lvalue(emit, r, "unsigned") for r in src)
    return (f"tvm_cuda_emu::stmatrix_b16({'true' if t else 'false'}, {num}, "
            f"{smem_addr(emit, smem)}, {regs})")


@intrin(
    "ptx.stmatrix",
    _stmatrix_operands,
    nargs=(7, 10),
    choices={"num": NUM, "shape": STMATRIX_SHAPE, "space": STMATRIX_SPACE},
    min_arch=90,
    emulate=_emu_stmatrix,
)
def _stmatrix(call: Call, emit: Emit) -> str:
    dtype, shape, space = S(call, 2).lstrip("."), S(call, 3), S(call, 4)
    t, num, smem, src = _warp_matrix(call, 5, "source")
    instr = f"stmatrix.sync.aligned.{shape}.x{num}{t}.{space}.{dtype}"
    # the seed's form: a helper taking the shared address and one pointer per source register,
    # each register read as *(uint32_t*)src<k> (the fragments need not be contiguous)
    fn = "tvm_builtin_ptx_stmatrix_" + re.sub(r"\W+", "_", instr.removeprefix("stmatrix.sync.aligned."))
    params = ", ".join(["unsigned smem_addr"] + [f"void* src{k}" for k in range(num)])
    ins = ", ".join(['"r"(smem_addr)'] + [f'"r"(*(uint32_t*)src{k})' for k in range(num)])
    helper(emit, fn, (
        f"__device__ __forceinline__ void {fn}({params}) {{\n"
        f'  asm volatile("{instr} [%0], {_regs(num, 1)};" : : {ins} : "memory");\n}}'))
    args = [smem_addr(emit, smem)] + [_register_ptr(emit, r) for r in src]
    return f"{fn}({', '.join(args)})"


def _register_ptr(emit: Emit, a: Any) -> str:
    """A ``void*`` to a register operand: the address of a buffer element, or a pointer."""
    if isinstance(a, E.BufferLoad):
        return f"(void*)(&({emit(a)}))"
    return f"(void*)({emit(a)})"


@intrin(
    "ptx.ldmatrix_legacy",
    "dtype, trans, num, type, local_ptr, local_offset, smem_ptr, smem_offset",
    dtype_forward=True,
    min_arch=75,
)
def _ldmatrix_legacy(call: Call, emit: Emit) -> str:
    elem = S(call, 0)
    trans, num, dtype = bool_arg(call, 1), _num(call, 2), S(call, 3).lstrip(".")
    local, local_off, smem, smem_off = call.args[4:]
    ct = ctype(emit, elem)
    dst = f"({ptr(emit, local, ct)} + ({emit(local_off)}))"
    src = f"({ptr(emit, smem, ct)} + ({emit(smem_off)}))"
    t = ".trans" if trans else ""
    outs = [f'"=r"(((unsigned*){dst})[{k}])' for k in range(num)]
    return asm(
        f"ldmatrix.sync.aligned.m8n8.x{num}{t}.shared.{dtype} {_regs(num, 0)}, [%{num}];",
        outs,
        [f'"r"((unsigned)__cvta_generic_to_shared({src}))'],
    )
