"""Blackwell ``tcgen05`` (sm_100a): tensor-memory alloc/dealloc, MMA (dense, sparse, block
scaled), commit to an mbarrier, TMEM loads and stores with their waits, cp, shift, fences, and
the shared-memory / instruction descriptors."""

from __future__ import annotations

from typing import Any

from tvm.error import NotModelledError
from tvm.ir import expr as E
from tvm.ir.expr import Call

from ._base import (
    Emit,
    asm,
    bool_arg,
    cta_group,
    fail,
    int_arg,
    is_const,
    lvalue,
    matrix_descriptor_rule,
    ptr,
    smem_addr,
    table_arg,
)
from ._base import str_arg as S
from ._spec import intrin

A = 100  # every op here assembles for sm_100a
CTA_GROUP = {"cta_group": (1, 2)}
CP_SHAPES = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b")


#: emulation: what ``tvm_cuda_emu`` calls each ld/st shape (``emu/tvm_cuda_emu.h``, TmemShape)
_EMU_SHAPE = {"32x32b": "k32x32b", "16x64b": "k16x64b", "16x128b": "k16x128b",
              "16x256b": "k16x256b", "16x32bx2": "k16x32bx2"}
#: emulation: tcgen05.cp shape -> (rows, bits a row), and its multicasts (TmemMulticast)
_EMU_CP = {"128x256b": (128, 256), "128x128b": (128, 128), "64x128b": (64, 128),
           "32x128b": (32, 128)}
_EMU_CP_MULTICAST = {("128x256b", ""): "kCpNone", ("128x128b", ""): "kCpNone",
                     ("32x128b", "warpx4"): "kCpWarpx4",
                     ("64x128b", "warpx2::02_13"): "kCpWarpx2_02_13",
                     ("64x128b", "warpx2::01_23"): "kCpWarpx2_01_23"}


def _emu_cta_group_1(call: Call, i: int) -> None:
    """The emulator keeps one CTA's tensor memory: cta_group::2 (a CTA pair's) is not
    modelled."""
    if cta_group(call, i) != 1:
        raise NotModelledError(f"{call.op.name} with cta_group=2: the CUDA emulator models the "
                               "tensor memory of one CTA (cta_group=1); run it on a GPU")


def _emu_alloc(call: Call, emit: Emit) -> str:
    _emu_cta_group_1(call, 2)
    return (f"tvm_cuda_emu::tmem_alloc({smem_addr(emit, call.args[0])}, "
            f"(unsigned)({emit(call.args[1])}), __LINE__)")


def _emu_dealloc(call: Call, emit: Emit) -> str:
    _emu_cta_group_1(call, 2)
    return (f"tvm_cuda_emu::tmem_dealloc((unsigned)({emit(call.args[0])}), "
            f"(unsigned)({emit(call.args[1])}), __LINE__)")


def _emu_relinquish(call: Call, emit: Emit) -> str:
    _emu_cta_group_1(call, 0)
    return "tvm_cuda_emu::tmem_relinquish()"


def _columns(call: Call, emit: Emit, instr: str, first: str) -> str:
    """``tcgen05.alloc`` / ``dealloc`` of ``n_cols`` columns (``instr`` ends with the PTX text
    of the first operand, whose input is ``first``)."""
    g = cta_group(call, 2)
    return asm(
        f"tcgen05.{instr.replace('.', f'.cta_group::{g}.sync.aligned.', 1)}, %1;",
        inputs=[f'"r"({first})', f'"r"((unsigned)({emit(call.args[1])}))'],
    )


@intrin("ptx.tcgen05.alloc", "dst_ptr, n_cols, cta_group=1", choices=CTA_GROUP, min_arch=A,
        emulate=_emu_alloc)
def _alloc(call: Call, emit: Emit) -> str:
    return _columns(call, emit, "alloc.shared::cta.b32 [%0]", smem_addr(emit, call.args[0]))


@intrin("ptx.tcgen05.dealloc", "taddr, n_cols, cta_group=1", choices=CTA_GROUP, min_arch=A,
        emulate=_emu_dealloc)
def _dealloc(call: Call, emit: Emit) -> str:
    return _columns(call, emit, "dealloc.b32 %0", f"(unsigned)({emit(call.args[0])})")


@intrin("ptx.tcgen05.relinquish_alloc_permit", "cta_group=1", choices=CTA_GROUP, min_arch=A,
        emulate=_emu_relinquish)
def _relinquish(call: Call, emit: Emit) -> str:
    return asm(f"tcgen05.relinquish_alloc_permit.cta_group::{cta_group(call, 0)}.sync.aligned;")


intrin("ptx.tcgen05.encode_matrix_descriptor", "desc, addr, ldo, sdo, swizzle", min_arch=A)(
    matrix_descriptor_rule(
        "tvm_tcgen05_desc",
        "tcgen05 shared-memory descriptor",
        "version 1 in bits 46-47, swizzle mode in bits 61-63 (0 none, 2 128B, 4 64B, 6 32B)",
        "unsigned long long mode = swizzle == 3 ? 2ull : swizzle == 2 ? 4ull : swizzle == 1 ? "
        "6ull : 0ull;",
        "(1ull << 46) | (mode << 61)",
    )
)


_D_FMT = {"f16": 0, "float16": 0, "f32": 1, "float32": 1, "s32": 2, "int32": 2}
_AB_FMT = {
    "f16": 0,
    "float16": 0,
    "bf16": 1,
    "bfloat16": 1,
    "tf32": 2,
    "e4m3": 0,
    "float8_e4m3fn": 0,
    "e5m2": 1,
    "float8_e5m2": 1,
    "e2m3": 3,
    "e3m2": 4,
    "e2m1": 5,
    "u8": 0,
    "uint8": 0,
    "s8": 1,
    "int8": 1,
}


def _fmt(call: Call, i: int, table: dict[str, int]) -> int:
    t = S(call, i)
    if t not in table:
        raise fail(call, f"unsupported tcgen05 data type {t!r}")
    return table[t]


def _shape_bits(call: Call, m_i: int) -> int:
    m, n, k = (int_arg(call, m_i + q) for q in range(3))
    if m not in (64, 128, 256) or n % 8 or not 8 <= n <= 256:
        raise fail(call, f"unsupported tcgen05 shape M={m} N={n} K={k}")
    return ((n >> 3) << 17) | ((m >> 4) << 24)



def _flag_bits(call: Call, bits: dict[int, int]) -> int:
    """The instruction descriptor's bits of boolean operands (operand index -> bit), read in
    that order."""
    word = 0
    for i, bit in bits.items():
        word |= int(bool_arg(call, i)) << bit
    return word


@intrin(
    "ptx.tcgen05.encode_instr_descriptor",
    "desc, *, d_dtype, a_dtype, b_dtype, M, N, K, trans_a, trans_b, n_cta_groups=1, neg_a=False, "
    "neg_b=False, sat_d=False, is_sparse=False",
    choices={"n_cta_groups": (1, 2)},
    min_arch=A,
)
def _encode_instr(call: Call, emit: Emit) -> str:
    d = _fmt(call, 1, _D_FMT)
    a, b = _fmt(call, 2, _AB_FMT), _fmt(call, 3, _AB_FMT)
    bits = (d << 4) | (a << 7) | (b << 10) | _shape_bits(call, 4)
    # transpose A, B; negate A, B; saturate D; sparse
    bits |= _flag_bits(call, {7: 15, 8: 16, 10: 13, 11: 14, 12: 3, 13: 2})
    cta_group(call, 9)
    return f"*{ptr(emit, call.args[0], 'unsigned')} = {bits:#010x}u"


_SF_FMT = {"ue4m3": 0, "float8_e4m3fn": 0, "e4m3": 0, "ue8m0": 1, "float8_e8m0fnu": 1}


@intrin(
    "ptx.tcgen05.encode_instr_descriptor_block_scaled",
    "desc, *, d_dtype, a_dtype, b_dtype, sfa_dtype, sfb_dtype, sfa_tmem_addr, sfb_tmem_addr, M, N, "
    "K, trans_a, trans_b, n_cta_groups=1, neg_a=False, neg_b=False, is_sparse=False",
    choices={"n_cta_groups": (1, 2)},
    min_arch=A,
)
def _encode_instr_bs(call: Call, emit: Emit) -> str:
    a, b = _fmt(call, 2, _AB_FMT), _fmt(call, 3, _AB_FMT)
    sf = _fmt(call, 4, _SF_FMT)
    if _fmt(call, 5, _SF_FMT) != sf:
        raise fail(call, "A and B scale factors must have one format")
    bits = (a << 7) | (b << 10) | (sf << 23) | _shape_bits(call, 8)
    bits |= _flag_bits(call, {11: 15, 12: 16, 14: 13, 15: 14, 16: 2})  # as above, no saturate
    cta_group(call, 13)
    sfa, sfb = (emit(x) for x in call.args[6:8])
    # the scale-factor ids are the TMEM sub-column (bits 30-31) of each scale-factor address
    return (
        f"*{ptr(emit, call.args[0], 'unsigned')} = {bits:#010x}u | ((((unsigned)({sfb})) >> 30)"
        f" << 4) | ((((unsigned)({sfa})) >> 30) << 29)"
    )


_LDST_REGS = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4}


def _ldst_operands(call: Call, emit: Emit) -> tuple[str, int, bool, list[Any], str]:
    """shape, .num, the pack/unpack flag, the registers and the TMEM address (C++) of a
    tcgen05.ld/st, checked."""
    addr, row, col = call.args[:3]
    shape, num = S(call, 3), int_arg(call, 4)
    flag = bool_arg(call, 5)
    regs = list(call.args[6:])
    if shape not in _LDST_REGS:
        raise fail(call, f"tcgen05 ld/st shape {shape!r} is not generated")
    if num not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise fail(call, f"num must be a power of two up to 128, got {num}")
    want = _LDST_REGS[shape] * num
    if len(regs) != want:
        raise fail(call, f"{shape}.x{num} moves {want} registers, got {len(regs)}")
    if want > 128:
        raise fail(call, f"{shape}.x{num} would move {want} registers (at most 128)")
    taddr = (
        f"((unsigned)({emit(addr)}) + ((unsigned)({emit(row)}) << 16) + (unsigned)({emit(col)}))"
    )
    return shape, num, flag, regs, taddr


def _emu_ldst(call: Call, emit: Emit, store: bool) -> str:
    shape, num, flag, regs, taddr = _ldst_operands(call, emit)
    fn = "tmem_st" if store else "tmem_ld"
    ops = "".join(f", {lvalue(emit, r, 'unsigned')}" for r in regs)
    return (f"tvm_cuda_emu::{fn}(tvm_cuda_emu::{_EMU_SHAPE[shape]}, {num}u, "
            f"{'true' if flag else 'false'}, {taddr}, 0u{ops})")


def _ldst(call: Call, emit: Emit, store: bool) -> str:
    shape, num, flag, regs, taddr = _ldst_operands(call, emit)
    want = len(regs)
    if store:
        mods = f"{shape}.x{num}{'.unpack::16b' if flag else ''}.b32"
        names = "{" + ", ".join(f"%{1 + q}" for q in range(want)) + "}"
        return asm(
            f"tcgen05.st.sync.aligned.{mods} [%0], {names};",
            inputs=[f'"r"({taddr})'] + [f'"r"({lvalue(emit, r, "unsigned")})' for r in regs],
        )
    mods = f"{shape}.x{num}{'.pack::16b' if flag else ''}.b32"
    names = "{" + ", ".join(f"%{q}" for q in range(want)) + "}"
    return asm(
        f"tcgen05.ld.sync.aligned.{mods} {names}, [%{want}];",
        [f'"=r"({lvalue(emit, r, "unsigned")})' for r in regs],
        [f'"r"({taddr})'],
    )


def _ld_operands(
    src_addr: Any, *regs: Any, shape: str, num: Any, row: Any = 0, col: Any = 0,
    pack: bool = False,
) -> tuple[Any, ...]:
    """``tcgen05.ld`` of ``shape``.x``num`` from tensor memory at ``src_addr`` (+ row, col)
    into ``regs``."""
    return (src_addr, row, col, shape, num, pack, *regs)


def _st_operands(
    dst_addr: Any, *regs: Any, shape: str, num: Any, row: Any = 0, col: Any = 0,
    unpack: bool = False,
) -> tuple[Any, ...]:
    """``tcgen05.st`` of ``regs`` to tensor memory at ``dst_addr`` (+ row, col)."""
    return (dst_addr, row, col, shape, num, unpack, *regs)


@intrin("ptx.tcgen05.ld", _ld_operands, nargs=(7, None), min_arch=A,
        emulate=lambda call, emit: _emu_ldst(call, emit, False))
def _ld(call: Call, emit: Emit) -> str:
    return _ldst(call, emit, False)


@intrin("ptx.tcgen05.st", _st_operands, nargs=(7, None), min_arch=A,
        emulate=lambda call, emit: _emu_ldst(call, emit, True))
def _st(call: Call, emit: Emit) -> str:
    return _ldst(call, emit, True)


def _no_operands(path: str, text: str) -> None:
    """Declare ``T.<path>()``: no operands, the inline PTX ``text``."""

    def rule(call: Call, emit: Emit) -> str:
        return asm(text)

    # the emulator runs tcgen05 operations when issued: the waits and fences have nothing to do
    intrin(path, min_arch=A, emulate=lambda call, emit: "(void)0")(rule)


_no_operands("ptx.tcgen05.wait.ld", "tcgen05.wait::ld.sync.aligned;")
_no_operands("ptx.tcgen05.wait.st", "tcgen05.wait::st.sync.aligned;")


def _guard(text: str, ins: list[str], pred: Any, emit: Emit) -> str:
    """Wrap ``text`` as ``@q text`` with q = (pred != 0), unless pred is None."""
    if pred is None:
        return text
    ins.append(f'"r"((unsigned)({emit(pred)}))')
    return f"{{\n.reg .pred q;\nsetp.ne.u32 q, %{len(ins) - 1}, 0;\n@q {text}\n}}"


def _commit_operands(
    bar: Any, cta_group: Any = 1, cta_mask: Any = 0, *, pred: Any = None
) -> tuple[Any, ...]:
    """Arrive on ``bar`` when the tcgen05 operations issued so far complete (on the barriers of
    the CTAs of ``cta_mask`` when it is not 0; only if ``pred`` when given)."""
    return (bar, cta_group, cta_mask, *([pred] if pred is not None else []))


def _emu_commit(call: Call, emit: Emit) -> str:
    _emu_cta_group_1(call, 1)
    bar, _, mask = call.args[:3]
    text = (f"tvm_cuda_emu::tmem_commit({smem_addr(emit, bar)}, "
            f"(unsigned)({emit(mask)}))")
    if len(call.args) == 4:
        return f"(({emit(call.args[3])}) ? {text} : (void)0)"
    return text


@intrin("ptx.tcgen05.commit", _commit_operands, nargs=(3, 4), choices=CTA_GROUP, min_arch=A,
        emulate=_emu_commit)
def _commit(call: Call, emit: Emit) -> str:
    g = cta_group(call, 1)
    bar, _, mask = call.args[:3]
    pred = call.args[3] if len(call.args) == 4 else None
    ins = [f'"r"({smem_addr(emit, bar)})']
    base = f"tcgen05.commit.cta_group::{g}.mbarrier::arrive::one.shared::cluster"
    if is_const(mask, 0):
        text = f"{base}.b64 [%0];"
    else:
        ins.append(f'"h"((unsigned short)({emit(mask)}))')
        text = f"{base}.multicast::cluster.b64 [%0], %1;"
    return asm(_guard(text, ins, pred, emit), inputs=ins)


@intrin(
    "ptx.tcgen05.cp",
    "taddr, src_desc, *, shape, cta_group=1, multicast='', decompress='', row=0, col=0",
    choices={"shape": CP_SHAPES, **CTA_GROUP},
    min_arch=A,
    emulate=lambda call, emit: _emu_cp(call, emit),
)
def _cp(call: Call, emit: Emit) -> str:
    taddr, desc = call.args[:2]
    shape, g, multicast, decompress = S(call, 2), cta_group(call, 3), S(call, 4), S(call, 5)
    row, col = call.args[6:8]
    mods = (
        f".{shape}"
        + (f".{multicast}" if multicast else "")
        + (f".{decompress}" if decompress else "")
    )
    addr = (
        f"((unsigned)({emit(taddr)}) + ((unsigned)({emit(row)}) << 16) + (unsigned)({emit(col)}))"
    )
    return asm(
        f"tcgen05.cp.cta_group::{g}{mods} [%0], %1;",
        inputs=[f'"r"({addr})', f'"l"((unsigned long long)({emit(desc)}))'],
    )


def _emu_cp(call: Call, emit: Emit) -> str:
    _emu_cta_group_1(call, 3)
    shape, multicast, decompress = S(call, 2), S(call, 4), S(call, 5)
    kind = _EMU_CP_MULTICAST.get((shape, multicast))
    if kind is None or decompress:
        raise NotModelledError(
            f"tcgen05.cp.{shape}{'.' + multicast if multicast else ''}"
            f"{'.' + decompress if decompress else ''}: the CUDA emulator models "
            f"{', '.join(s + ('.' + m if m else '') for s, m in _EMU_CP_MULTICAST)}, "
            "without decompression; run it on a GPU")
    rows, bits = _EMU_CP[shape]
    taddr, desc, row, col = call.args[0], call.args[1], call.args[6], call.args[7]
    addr = (f"((unsigned)({emit(taddr)}) + ((unsigned)({emit(row)}) << 16) + "
            f"(unsigned)({emit(col)}))")
    return (f"tvm_cuda_emu::tmem_cp({addr}, (unsigned long long)({emit(desc)}), {rows}u, "
            f"{bits}u, tvm_cuda_emu::{kind})")


@intrin("ptx.tcgen05.shift", "taddr, cta_group=1", choices=CTA_GROUP, min_arch=A)
def _shift(call: Call, emit: Emit) -> str:
    return asm(
        f"tcgen05.shift.cta_group::{cta_group(call, 1)}.down [%0];",
        inputs=[f'"r"((unsigned)({emit(call.args[0])}))'],
    )


_no_operands("ptx.tcgen05.fence.before_thread_sync", "tcgen05.fence::before_thread_sync;")
_no_operands("ptx.tcgen05.fence.after_thread_sync", "tcgen05.fence::after_thread_sync;")


#: the tcgen05.mma kind of each operand type
_KIND = {
    **dict.fromkeys(("f16", "float16", "bf16", "bfloat16"), "f16"),
    "tf32": "tf32",
    **dict.fromkeys(("e4m3", "float8_e4m3fn", "e5m2", "float8_e5m2", "e2m3", "e3m2", "e2m1"),
                    "f8f6f4"),
    **dict.fromkeys(("s8", "int8", "u8", "uint8"), "i8"),
}


def _kind(call: Call, i: int) -> str:
    return table_arg(call, i, _KIND, "no tcgen05.mma kind for")


def _mma_text(call: Call, emit: Emit, *, sparse: bool, block_scale: bool) -> str:
    """Operands after the three (or five) type strings: d_tmem, a, b_desc, [sfa, sfb], [sp],
    i_desc, use_a_tmem, cta_group, enable_input_d, [scale_input_d, *disable_lanes, [pred]]."""
    n_types = 5 if block_scale else 3
    kind = _kind(call, 1)
    if block_scale:
        kind = "mxf4" if S(call, 1) == "e2m1" else "mxf8f6f4"
    ops = list(call.args[n_types:])
    d_tmem, a_op, b_desc = ops[:3]
    k = 3
    sfa = sfb = sp = None
    if block_scale:
        sfa, sfb = ops[k : k + 2]
        k += 2
    if sparse:
        sp = ops[k]
        k += 1
    i_desc, use_a_tmem = ops[k], ops[k + 1]
    g = cta_group(call, n_types + k + 2)
    enable = ops[k + 3]
    rest = ops[k + 4 :]
    ins = [f'"r"((unsigned)({emit(d_tmem)}))']
    if bool(int(use_a_tmem.value)) if isinstance(use_a_tmem, E.IntImm) else False:
        ins.append(f'"r"((unsigned)({emit(a_op)}))')
        a_text = "[%1]"
    else:
        ins.append(f'"l"((unsigned long long)({emit(a_op)}))')
        a_text = "%1"
    ins.append(f'"l"((unsigned long long)({emit(b_desc)}))')
    operands = ["[%0]", a_text, "%2"]
    if sp is not None:
        ins.append(f'"r"((unsigned)({emit(sp)}))')
        operands.append(f"[%{len(ins) - 1}]")
    ins.append(f'"r"((unsigned)({emit(i_desc)}))')
    operands.append(f"%{len(ins) - 1}")
    if block_scale:
        ins += [f'"r"((unsigned)({emit(sfa)}))', f'"r"((unsigned)({emit(sfb)}))']
        operands += [f"[%{len(ins) - 2}]", f"[%{len(ins) - 1}]"]
    scale_imm = ""
    pred = None
    if not block_scale:
        scale_d, *lanes = rest
        n_lanes = 4 if g == 1 else 8
        if len(lanes) == n_lanes + 1:
            pred = lanes.pop()
        if len(lanes) != n_lanes:
            raise fail(call, f"cta_group::{g} takes {n_lanes} disable-output-lane words")
        if not all(is_const(x, 0) for x in lanes):
            first = len(ins)
            ins += [f'"r"((unsigned)({emit(x)}))' for x in lanes]
            operands.append("{" + ", ".join(f"%{first + q}" for q in range(n_lanes)) + "}")
        if not is_const(scale_d, 0):
            scale_imm = f", {int_arg(call, n_types + k + 4)}"
    ins.append(f'"r"((unsigned)({emit(enable)}))')
    p_idx = len(ins) - 1
    name = "tcgen05.mma" + (".sp" if sparse else "") + f".cta_group::{g}.kind::{kind}"
    name += ".block_scale" if block_scale else ""
    body = f"{name} {', '.join(operands)}, p{scale_imm};"
    body = _guard(body, ins, pred, emit)
    return asm(f"{{\n.reg .pred p;\nsetp.ne.b32 p, %{p_idx}, 0;\n{body}\n}}", inputs=ins)


def _lanes(disable_output_lane: tuple[Any, ...], cta_group: Any) -> list[Any]:
    return list(disable_output_lane) or [0] * (4 if int(cta_group) == 1 else 8)


def _mma_operands(
    d_tmem_addr: Any, a_operand: Any, b_desc: Any, i_desc: Any, *disable_output_lane: Any,
    d_dtype: str, a_dtype: str, b_dtype: str, use_a_tmem: Any, cta_group: Any,
    enable_input_d: Any = 1, scale_input_d: Any = 0, pred: Any = None,
) -> tuple[Any, ...]:
    """``tcgen05.mma``: D (tensor memory) = A (tensor memory or descriptor) x B (descriptor)
    [+ D], with the instruction descriptor ``i_desc``."""
    head = (d_dtype, a_dtype, b_dtype, d_tmem_addr, a_operand, b_desc, i_desc)
    flags = (use_a_tmem, cta_group, enable_input_d, scale_input_d)
    lanes = _lanes(disable_output_lane, cta_group)
    return (*head, *flags, *lanes, *([pred] if pred is not None else []))


def _mma_sp_operands(
    d_tmem_addr: Any, a_operand: Any, b_desc: Any, sp_tmem_addr: Any, i_desc: Any,
    *disable_output_lane: Any, d_dtype: str, a_dtype: str, b_dtype: str, use_a_tmem: Any,
    cta_group: Any, enable_input_d: Any = 1, scale_input_d: Any = 0,
) -> tuple[Any, ...]:
    """``tcgen05.mma.sp``: sparse A with its metadata at ``sp_tmem_addr``."""
    head = (d_dtype, a_dtype, b_dtype, d_tmem_addr, a_operand, b_desc, sp_tmem_addr, i_desc)
    flags = (use_a_tmem, cta_group, enable_input_d, scale_input_d)
    return (*head, *flags, *_lanes(disable_output_lane, cta_group))


def _block_scale_operands(
    d_tmem_addr: Any, a_operand: Any, b_desc: Any, sfa_tmem_addr: Any, sfb_tmem_addr: Any,
    i_desc: Any, *, d_dtype: str, a_dtype: str, b_dtype: str, sfa_dtype: str, sfb_dtype: str,
    use_a_tmem: Any, cta_group: Any, enable_input_d: Any = 1,
) -> tuple[Any, ...]:
    """``tcgen05.mma.block_scale``: A and B scaled by the factors at ``sfa/sfb_tmem_addr``."""
    types = (d_dtype, a_dtype, b_dtype, sfa_dtype, sfb_dtype)
    ops = (d_tmem_addr, a_operand, b_desc, sfa_tmem_addr, sfb_tmem_addr, i_desc)
    return (*types, *ops, use_a_tmem, cta_group, enable_input_d)


def _sp_block_scale_operands(
    d_tmem_addr: Any, a_operand: Any, b_desc: Any, sfa_tmem_addr: Any, sfb_tmem_addr: Any,
    sp_tmem_addr: Any, i_desc: Any, *, d_dtype: str, a_dtype: str, b_dtype: str, sfa_dtype: str,
    sfb_dtype: str, use_a_tmem: Any, cta_group: Any, enable_input_d: Any = 1,
) -> tuple[Any, ...]:
    """``tcgen05.mma.sp.block_scale``: sparse A, block-scaled A and B."""
    types = (d_dtype, a_dtype, b_dtype, sfa_dtype, sfb_dtype)
    ops = (d_tmem_addr, a_operand, b_desc, sfa_tmem_addr, sfb_tmem_addr, sp_tmem_addr, i_desc)
    return (*types, *ops, use_a_tmem, cta_group, enable_input_d)


#: emulation: the C++ input type of each tcgen05.mma A/B type the emulator models
_EMU_MMA_IN = {
    **dict.fromkeys(("f16", "float16"), "__half"),
    **dict.fromkeys(("bf16", "bfloat16"), "__nv_bfloat16"),
    "tf32": "tvm_cuda_emu::Tf32",
    **dict.fromkeys(("e4m3", "float8_e4m3fn"), "__nv_fp8_e4m3"),
    **dict.fromkeys(("e5m2", "float8_e5m2"), "__nv_fp8_e5m2"),
}


def _emu_mma(call: Call, emit: Emit) -> str:
    """``tcgen05.mma`` (dense, cta_group::1, A and B in shared memory, float32 D, every output
    lane enabled): ``tvm_cuda_emu::tcgen05_mma_ss``; other forms are not modelled."""
    a_t, b_t = S(call, 1), S(call, 2)
    d_tmem, a_op, b_desc, i_desc, use_a_tmem = call.args[3:8]
    g = cta_group(call, 8)
    enable, scale_d, *lanes = call.args[9:]
    pred = lanes.pop() if len(lanes) == 5 else None
    why = []
    if g != 1:
        why.append("cta_group=2")
    if not is_const(use_a_tmem, 0):
        why.append("A in tensor memory")
    if a_t not in _EMU_MMA_IN or _EMU_MMA_IN.get(b_t) != _EMU_MMA_IN[a_t]:
        why.append(f"A and B of types {a_t} and {b_t}")
    if S(call, 0) not in ("f32", "float32"):
        why.append(f"a {S(call, 0)} D")
    if not is_const(scale_d, 0) or not all(is_const(x, 0) for x in lanes):
        why.append("a D scale or disabled output lanes")
    if why:
        raise NotModelledError(f"tcgen05.mma with {', '.join(why)}: the CUDA emulator models "
                               "dense cta_group=1 MMAs of A and B in shared memory into a "
                               "float32 D; run it on a GPU")
    text = (f"tvm_cuda_emu::tcgen05_mma_ss<{_EMU_MMA_IN[a_t]}>((unsigned)({emit(d_tmem)}), "
            f"(unsigned long long)({emit(a_op)}), (unsigned long long)({emit(b_desc)}), "
            f"(unsigned)({emit(i_desc)}), ({emit(enable)}) != 0)")
    return text if pred is None else f"(({emit(pred)}) ? {text} : (void)0)"


def _emu_mma_block_scale(call: Call, emit: Emit) -> str:
    """``tcgen05.mma.block_scale`` (cta_group::1, fp8 A and B in shared memory, ue8m0 factors,
    float32 D): ``tvm_cuda_emu::tcgen05_mma_ss_bs``; other forms are not modelled."""
    a_t, b_t = S(call, 1), S(call, 2)
    d_tmem, a_op, b_desc, sfa, sfb, i_desc, use_a_tmem = call.args[5:12]
    why = []
    if cta_group(call, 12) != 1:
        why.append("cta_group=2")
    if not is_const(use_a_tmem, 0):
        why.append("A in tensor memory")
    if a_t not in ("e4m3", "e5m2") or _EMU_MMA_IN.get(b_t) != _EMU_MMA_IN[a_t]:
        why.append(f"A and B of types {a_t} and {b_t}")
    if any(S(call, i) not in ("float8_e8m0fnu", "ue8m0") for i in (3, 4)):
        why.append(f"scale factors of types {S(call, 3)} and {S(call, 4)}")
    if why:
        raise NotModelledError(f"tcgen05.mma.block_scale with {', '.join(why)}: the CUDA "
                               "emulator models cta_group=1 fp8 MMAs with ue8m0 factors; run "
                               "it on a GPU")
    return (f"tvm_cuda_emu::tcgen05_mma_ss_bs<{_EMU_MMA_IN[a_t]}>((unsigned)({emit(d_tmem)}), "
            f"(unsigned long long)({emit(a_op)}), (unsigned long long)({emit(b_desc)}), "
            f"(unsigned)({emit(sfa)}), (unsigned)({emit(sfb)}), (unsigned)({emit(i_desc)}), "
            f"({emit(call.args[13])}) != 0)")


def _mma_variant(path: str, operands: Any, nargs: Any, sparse: bool, block_scale: bool) -> None:
    def rule(call: Call, emit: Emit) -> str:
        return _mma_text(call, emit, sparse=sparse, block_scale=block_scale)

    emulate = _emu_mma if not (sparse or block_scale) else \
        _emu_mma_block_scale if not sparse else None
    intrin(path, operands, nargs=nargs, choices=CTA_GROUP, min_arch=A, emulate=emulate)(rule)


_mma_variant("ptx.tcgen05.mma", _mma_operands, (15, None), False, False)
_mma_variant("ptx.tcgen05.mma.sp", _mma_sp_operands, (16, None), True, False)
_mma_variant("ptx.tcgen05.mma.block_scale", _block_scale_operands, 14, False, True)
_mma_variant("ptx.tcgen05.mma.sp.block_scale", _sp_block_scale_operands, 15, True, True)
