"""``ldmatrix`` / ``stmatrix``: warp-collective 8x8 matrix loads and stores of shared memory."""

from __future__ import annotations

from ._base import asm, bool_arg, ctype, fail, int_arg, intrin, lvalue, ptr, smem_addr
from ._base import str_arg as S


def _num(call, i):
    num = int_arg(call, i)
    if num not in (1, 2, 4):
        raise fail(call, f"num must be 1, 2 or 4, got {num}")
    return num


def _regs(n, first):
    return "{" + ", ".join(f"%{first + k}" for k in range(n)) + "}"


@intrin("ptx.ldmatrix", nargs=(5, 8), min_arch=75)
def _ldmatrix(call, emit):
    trans, num, dtype = bool_arg(call, 0), _num(call, 1), S(call, 2).lstrip(".")
    if dtype != "b16":
        raise fail(call, f"only .b16 ldmatrix is generated, got .{dtype}")
    smem, *dst = call.args[3:]
    if len(dst) != num:
        raise fail(call, f"ldmatrix .x{num} needs {num} destination registers, got {len(dst)}")
    t = ".trans" if trans else ""
    return asm(
        f"ldmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 {_regs(num, 0)}, [%{num}];",
        [f'"=r"({lvalue(emit, d, "unsigned")})' for d in dst],
        [f'"r"({smem_addr(emit, smem)})'],
    )


@intrin("ptx.stmatrix", nargs=(7, 10), min_arch=90)
def _stmatrix(call, emit):
    trans, num, dtype = bool_arg(call, 0), _num(call, 1), S(call, 2).lstrip(".")
    shape, space = S(call, 3), S(call, 4)
    smem, *src = call.args[5:]
    if len(src) != num:
        raise fail(call, f"stmatrix .x{num} needs {num} source registers, got {len(src)}")
    t = ".trans" if trans else ""
    return asm(
        f"stmatrix.sync.aligned.{shape}.x{num}{t}.{space}.{dtype} [%0], {_regs(num, 1)};",
        inputs=[f'"r"({smem_addr(emit, smem)})']
        + [f'"r"({lvalue(emit, s, "unsigned")})' for s in src],
    )


@intrin("ptx.ldmatrix_legacy", nargs=8, min_arch=75)
def _ldmatrix_legacy(call, emit):
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
