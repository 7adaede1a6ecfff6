"""``cp.async`` (Ampere asynchronous global->shared copies) with commit_group / wait_group."""

from __future__ import annotations

from typing import Any

from tvm.ir.expr import Call

from ._base import Emit, asm, bool_arg, ctype, fail, gaddr, int_arg, is_const, ptr, smem_addr
from ._base import str_arg as S
from ._spec import Typed, intrin, resolve_cache_policy

CP_SIZE = (4, 8, 16)


def _cp_async_text(
    call: Call, emit: Emit, dst: Any, src: Any, size: int, policy: Any, has_policy: bool,
    prefetch: int, pred: Any, fill_zero: bool,
) -> str:
    size = _size(call, size)
    cache = "cg" if size == 16 else "ca"  # .cg (L2 only) exists for 16-byte copies alone
    mods = f".{cache}.shared.global"
    if has_policy:
        mods += ".L2::cache_hint"
    if prefetch > 0:
        mods += f".L2::{prefetch}B"
    ins = [f'"r"({smem_addr(emit, dst)})', f'"l"({gaddr(emit, src)})']
    operands = f"[%0], [%1], {size}"
    guarded = pred is not None and not is_const(pred, -1)
    if guarded:
        ins.append(f'"r"((int)({emit(pred)}))')
        if fill_zero:
            # zero-fill: the ISA's ignore-src predicate (PTX 7.5, `q` = the predicate fails)
            # writes cp-size zeros. Not `src-size = pred ? cp-size : 0`: src-size must be less
            # than cp-size, so that spelling is outside the ISA whenever the predicate holds.
            operands += ", q"
    if has_policy:
        # `.L2::cache_hint` and its 64-bit policy operand, after src-size / ignore-src
        ins.append(f'"l"((unsigned long long)({emit(policy)}))')
        operands += f", %{len(ins) - 1}"
    text = f"cp.async{mods} {operands};"
    if guarded:
        flag = 2  # the predicate's operand follows dst and src
        if fill_zero:
            text = f"{{\n.reg .pred q;\nsetp.eq.b32 q, %{flag}, 0;\n{text}\n}}"
        else:
            text = f"{{\n.reg .pred p;\nsetp.ne.b32 p, %{flag}, 0;\n@p {text}\n}}"
    return asm(text, inputs=ins)


def _cp_async_operands(
    dst_ptr: Any, src_ptr: Any, cp_size: Any, *, cache_hint: str = "", cache_policy: Any = None,
    prefetch_size: Any = -1, predicate: Any = -1, fill_mode: str = "",
) -> tuple[Any, ...]:
    """``cp.async`` of ``cp_size`` bytes from global ``src_ptr`` to shared ``dst_ptr``."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (dst_ptr, src_ptr, cp_size, policy, has, prefetch_size, predicate, fill_mode)


def _emulate_cp_async(call: Call, emit: Emit) -> str:
    """The copy is queued for this thread and done when its group is waited for."""
    dst, src, _, _, _, _, pred, _ = call.args
    size = _size(call, int_arg(call, 2))
    guarded = pred is not None and not is_const(pred, -1)
    if not guarded:
        src_bytes = str(size)
    elif S(call, 7) == "zero":
        src_bytes = f"(({emit(pred)}) ? {size}u : 0u)"
    else:  # predicated off: no copy at all
        return (f"if ({emit(pred)}) tvm_cuda_emu::cp_async({smem_addr(emit, dst)}, "
                f"(const void*){gaddr(emit, src)}, {size}u, {size}u)")
    return (f"tvm_cuda_emu::cp_async({smem_addr(emit, dst)}, (const void*){gaddr(emit, src)}, "
            f"{size}u, {src_bytes})")


def _emulate_cp_async_legacy(call: Call, emit: Emit) -> str:
    ct = ctype(emit, call.dtype)
    dst, doff, src, soff = call.args[:4]
    size = _size(call, int_arg(call, 4))
    dptr = f"({ptr(emit, dst, ct)} + ({emit(doff)}))"
    sptr = f"({ptr(emit, src, ct)} + ({emit(soff)}))"
    return (f"tvm_cuda_emu::cp_async(__cvta_generic_to_shared({dptr}), (const void*)({sptr}), "
            f"{size}u, {size}u)")


@intrin(
    "ptx.cp_async",
    _cp_async_operands,
    nargs=8,
    choices={"cp_size": CP_SIZE, "prefetch_size": (-1, 64, 128, 256), "fill_mode": ("", "zero")},
    min_arch=80,
    emulate=_emulate_cp_async,
)
def _cp_async(call: Call, emit: Emit) -> str:
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


def _cp_async_legacy_operands(
    dtype: str, shared_ptr: Any, shared_offset: Any, global_ptr: Any, global_offset: Any,
    bytes: Any,
) -> Typed:
    """The seed's legacy ``cp.async``: ``bytes`` bytes from ``global_ptr + global_offset`` to
    ``shared_ptr + shared_offset`` (offsets in ``dtype`` elements), a five-operand call of
    ``tirx.ptx.cp_async`` typed ``dtype``, printed ``T.ptx.cp_async("dtype", dst, dst_off, src,
    src_off, bytes)``."""
    return Typed(dtype, (shared_ptr, shared_offset, global_ptr, global_offset, bytes))


@intrin(
    "ptx.cp_async.legacy",
    _cp_async_legacy_operands,
    nargs=5,
    form_of="ptx.cp_async",
    strings=("dtype",),
    dtype_forward=True,
    min_arch=80,
    emulate=_emulate_cp_async_legacy,
)
def _cp_async_legacy(call: Call, emit: Emit) -> str:
    """``cp.async`` with element offsets (in elements of the call's type) beside the pointers."""
    ct = ctype(emit, call.dtype)
    dst, doff, src, soff = call.args[:4]
    dptr = f"({ptr(emit, dst, ct)} + ({emit(doff)}))"
    sptr = f"({ptr(emit, src, ct)} + ({emit(soff)}))"
    size = _size(call, int_arg(call, 4))
    cache = "cg" if size == 16 else "ca"
    return asm(
        f"cp.async.{cache}.shared.global [%0], [%1], {size};",
        inputs=[
            f'"r"((unsigned)__cvta_generic_to_shared({dptr}))',
            f'"l"((unsigned long long)({sptr}))',
        ],
    )


def _size(call: Call, size: int) -> int:
    if size not in CP_SIZE:
        raise fail(call, f"cp.async copies 4, 8 or 16 bytes, got {size}")
    return size


@intrin("ptx.cp_async.commit_group", min_arch=80,
        emulate=lambda call, emit: "tvm_cuda_emu::cp_async_commit()")
def _commit_group(call: Call, emit: Emit) -> str:
    return asm("cp.async.commit_group;")


@intrin("ptx.cp_async.wait_group", "num=0", min_arch=80,
        emulate=lambda call, emit: f"tvm_cuda_emu::cp_async_wait({int_arg(call, 0)})")
def _wait_group(call: Call, emit: Emit) -> str:
    return asm(f"cp.async.wait_group {int_arg(call, 0)};")


@intrin("ptx.cp_async.mbarrier.arrive", "bar", min_arch=80,
        emulate=lambda call, emit: f"tvm_cuda_emu::cp_async_mbar_arrive("
                                   f"{smem_addr(emit, call.args[0])})")
def _cp_async_mbarrier_arrive(call: Call, emit: Emit) -> str:
    return asm(
        "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];",
        inputs=[f'"r"({smem_addr(emit, call.args[0])})'],
    )
