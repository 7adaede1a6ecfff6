"""``cp.async`` (Ampere asynchronous global->shared copies) with commit_group / wait_group."""

from __future__ import annotations

from ._base import asm, bool_arg, ctype, fail, gaddr, int_arg, intrin, is_const, ptr, smem_addr
from ._base import str_arg as S


def _cp_async_text(
    call, emit, dst, src, size: int, policy, has_policy: bool, prefetch: int, pred, fill_zero: bool
) -> str:
    if size not in (4, 8, 16):
        raise fail(call, f"cp.async copies 4, 8 or 16 bytes, got {size}")
    cache = "cg" if size == 16 else "ca"  # .cg (L2 only) exists for 16-byte copies alone
    mods = f".{cache}.shared.global"
    if has_policy:
        mods += ".L2::cache_hint"
    if prefetch > 0:
        mods += f".L2::{prefetch}B"
    ins = [f'"r"({smem_addr(emit, dst)})', f'"l"({gaddr(emit, src)})']
    operands = f"[%0], [%1], {size}"
    guarded = pred is not None and not is_const(pred, -1)
    if guarded and fill_zero:
        # zero-fill: copy `size` bytes when pred holds, else write zeros (src-size 0)
        ins.append(f'"r"(({emit(pred)}) ? {size} : 0)')
        operands += f", %{len(ins) - 1}"
    if has_policy:
        ins.append(f'"l"((unsigned long long)({emit(policy)}))')
        operands += f", %{len(ins) - 1}"
    text = f"cp.async{mods} {operands};"
    if guarded and not fill_zero:
        ins.append(f'"r"((int)({emit(pred)}))')
        text = (
            f"{{\n.reg .pred p;\nsetp.ne.b32 p, %{len(ins) - 1}, 0;\n"
            f"@p cp.async{mods} {operands};\n}}"
        )
    return asm(text, inputs=ins)


@intrin("ptx.cp_async", nargs=8, min_arch=80)
def _cp_async(call, emit):
    dst, src, _, policy, _, _, pred, _ = call.args
    fill = S(call, 7)
    if fill not in ("", "zero"):
        raise fail(call, f"fill_mode must be '' or 'zero', got {fill!r}")
    return _cp_async_text(
        call,
        emit,
        dst,
        src,
        int_arg(call, 2),
        policy,
        bool_arg(call, 4),
        int_arg(call, 5),
        pred,
        fill == "zero",
    )


@intrin("ptx.cp_async.legacy", nargs=6, flat="cp_async_legacy", min_arch=80)
def _cp_async_legacy(call, emit):
    ct = ctype(emit, S(call, 0))
    dst, doff, src, soff = call.args[1:5]
    dptr = f"({ptr(emit, dst, ct)} + ({emit(doff)}))"
    sptr = f"({ptr(emit, src, ct)} + ({emit(soff)}))"
    size = int_arg(call, 5)
    if size not in (4, 8, 16):
        raise fail(call, f"cp.async copies 4, 8 or 16 bytes, got {size}")
    cache = "cg" if size == 16 else "ca"
    return asm(
        f"cp.async.{cache}.shared.global [%0], [%1], {size};",
        inputs=[
            f'"r"((unsigned)__cvta_generic_to_shared({dptr}))',
            f'"l"((unsigned long long)({sptr}))',
        ],
    )


@intrin("ptx.cp_async.commit_group", min_arch=80)
def _commit_group(call, emit):
    return asm("cp.async.commit_group;")


@intrin("ptx.cp_async.wait_group", nargs=1, min_arch=80)
def _wait_group(call, emit):
    return asm(f"cp.async.wait_group {int_arg(call, 0)};")


@intrin("ptx.cp_async.mbarrier.arrive", nargs=1, min_arch=80)
def _cp_async_mbarrier_arrive(call, emit):
    return asm(
        "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];",
        inputs=[f'"r"({smem_addr(emit, call.args[0])})'],
    )
