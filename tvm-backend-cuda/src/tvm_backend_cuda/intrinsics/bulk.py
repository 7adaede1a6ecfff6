"""``cp.async.bulk`` and the TMA ``cp.async.bulk.tensor`` copies (sm_90+), completing on an
mbarrier (global->shared) or in a bulk group (shared->global). A tensor map operand is the
generic address of a ``CUtensorMap`` (a ``const __grid_constant__ CUtensorMap`` kernel
parameter, or one in global memory).

TMA operands are the seed's: ``(dim, dst, bar, tensormap, cta_mask, cta_group, policy,
has_policy, *coords)`` for ``g2c``, ``(dim, tensormap, policy, has_policy, *coords)`` for the
prefetch, ``(dim, src, tensormap, policy, has_policy[, red_op], *coords)`` for ``s2g``; copies
are in tile mode."""

from __future__ import annotations

from typing import Any

from tvm.error import NotModelledError
from tvm.ir.expr import Call

from ._base import (
    Emit,
    Rule,
    asm,
    bool_arg,
    cta_group,
    ctype,
    fail,
    gaddr,
    helper,
    int_arg,
    is_const,
    ptr,
    smem_addr,
)
from ._base import str_arg as S
from ._spec import build, intrin, resolve_cache_policy, sugar

CTA_GROUP = (1, 2)
TMA_REDUCTIONS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


def _u64(emit: Emit, a: Any) -> str:
    return f'"l"((unsigned long long)({emit(a)}))'


# -- emulation rules (the CPU emulator: emu/tvm_cuda_emu.h, tma_* and bulk_*): a copy runs when
# it is issued, then completes its bytes on the mbarrier; groups have nothing left to wait for
def _not_modelled(call: Call, what: str) -> NotModelledError:
    return NotModelledError(f"intrinsic {call.op.name.removeprefix('tirx.')} {what}: the CUDA "
                            "emulator does not model it yet")


def _emu_bulk_legacy(call: Call, emit: Emit) -> str:
    ct = ctype(emit, S(call, 0))
    sh, sh_off, gl, gl_off, nbytes, bar = call.args[1:]
    dst = f"({ptr(emit, sh, ct)} + ({emit(sh_off)}))"
    src = f"({ptr(emit, gl, ct)} + ({emit(gl_off)}))"
    return (f"tvm_cuda_emu::bulk_load((unsigned)__cvta_generic_to_shared({dst}), "
            f"(const void*)({src}), (unsigned)({emit(nbytes)}), {smem_addr(emit, bar)})")


def _emu_g2s_cta(call: Call, emit: Emit) -> str:
    dst, src, n, ign_l, ign_r, bar = call.args[:6]
    if bool_arg(call, 8) or not (is_const(ign_l, 0) and is_const(ign_r, 0)):
        raise _not_modelled(call, "with ignore_oob")
    return (f"tvm_cuda_emu::bulk_load({smem_addr(emit, dst)}, (const void*)({gaddr(emit, src)}), "
            f"(unsigned)({emit(n)}), {smem_addr(emit, bar)})")


def _emu_g2s_cluster(call: Call, emit: Emit) -> str:
    dst, src, n, bar, mask = call.args[:5]
    args = (f"{smem_addr(emit, dst)}, (const void*)({gaddr(emit, src)}), (unsigned)({emit(n)}), "
            f"{smem_addr(emit, bar)}")
    if bool_arg(call, 7):  # multicast to the CTAs of the mask
        return f"tvm_cuda_emu::bulk_load_mc({args}, (unsigned)({emit(mask)}))"
    return f"tvm_cuda_emu::bulk_load({args})"


def _emu_s2g(call: Call, emit: Emit) -> str:
    dst, src, n = call.args[:3]
    if bool_arg(call, 6):
        raise _not_modelled(call, "with a byte mask")
    return (f"tvm_cuda_emu::bulk_store((void*)({gaddr(emit, dst)}), {smem_addr(emit, src)}, "
            f"(unsigned)({emit(n)}))")


def _emu_g2c(call: Call, emit: Emit) -> str:
    dim = _dim(call)
    dst, bar, tmap, mask = call.args[1:5]
    coords = list(call.args[8:])
    if cta_group(call, 5) == 2:
        raise _not_modelled(call, "with cta_group 2")
    if len(coords) != dim:
        raise fail(call, f"a {dim}-d copy needs {dim} coordinates, got {len(coords)}")
    cs = "".join(f", (int)({emit(c)})" for c in coords)
    if not is_const(mask, 0):  # multicast to the CTAs of the mask
        return (f"tvm_cuda_emu::tma_load_mc_at({smem_addr(emit, dst)}, {gaddr(emit, tmap)}, "
                f"{smem_addr(emit, bar)}, (unsigned)({emit(mask)}){cs})")
    return (f"tvm_cuda_emu::tma_load_at({smem_addr(emit, dst)}, {gaddr(emit, tmap)}, "
            f"{smem_addr(emit, bar)}{cs})")


_EMU_REDUCTIONS = ("add", "min", "max", "and", "or", "xor")  # tvm_cuda_emu::TmaRed's order


def _emu_s2g_reduce(call: Call, emit: Emit) -> str:
    dim = _dim(call)
    src, tmap = call.args[1:3]
    op = S(call, 5)
    if op not in TMA_REDUCTIONS:
        raise fail(call, f"unknown TMA reduction {op!r}")
    if op not in _EMU_REDUCTIONS:
        raise _not_modelled(call, f"with .{op}")
    coords = list(call.args[6:])
    if len(coords) != dim:
        raise fail(call, f"a {dim}-d copy needs {dim} coordinates, got {len(coords)}")
    cs = "".join(f", (int)({emit(c)})" for c in coords)
    return (f"tvm_cuda_emu::tma_reduce_at({smem_addr(emit, src)}, {gaddr(emit, tmap)}, "
            f"{_EMU_REDUCTIONS.index(op)}{cs})")


def _emu_s2g_tensor(call: Call, emit: Emit) -> str:
    dim = _dim(call)
    src, tmap = call.args[1:3]
    coords = list(call.args[5:])
    if len(coords) != dim:
        raise fail(call, f"a {dim}-d copy needs {dim} coordinates, got {len(coords)}")
    cs = "".join(f", (int)({emit(c)})" for c in coords)
    return f"tvm_cuda_emu::tma_store_at({smem_addr(emit, src)}, {gaddr(emit, tmap)}{cs})"


@intrin(
    "ptx.cp_async.bulk",
    "dtype, shared_ptr, shared_offset, global_ptr, global_offset, bytes, barrier",
    strings=("dtype",),
    dtype_forward=True,
    min_arch=90,
    emulate=_emu_bulk_legacy,
)
def _bulk_legacy(call: Call, emit: Emit) -> str:
    """``cp.async.bulk`` global -> shared completing on ``barrier`` (offsets in ``dtype``)."""
    ct = ctype(emit, S(call, 0))
    sh, sh_off, gl, gl_off, nbytes, bar = call.args[1:]
    dst = f"({ptr(emit, sh, ct)} + ({emit(sh_off)}))"
    src = f"({ptr(emit, gl, ct)} + ({emit(gl_off)}))"
    return _bulk_to_cluster("global", f'"r"((unsigned)__cvta_generic_to_shared({dst}))',
                            f'"l"((unsigned long long)({src}))', emit(nbytes), smem_addr(emit, bar))


def _bulk_to_cluster(src_space: str, dst: str, src: str, nbytes: str, bar: str) -> str:
    """``cp.async.bulk`` of ``nbytes`` bytes from ``src_space`` into shared::cluster memory,
    completing on the mbarrier at shared address ``bar`` (``dst``, ``src``: asm operands)."""
    return asm(
        f"cp.async.bulk.shared::cluster.{src_space}.mbarrier::complete_tx::bytes "
        "[%0], [%1], %2, [%3];",
        inputs=[dst, src, f'"r"((unsigned)({nbytes}))', f'"r"({bar})'],
    )


def _s2cluster(call: Call, emit: Emit) -> str:
    """A call of the seed's helper ``tvm_builtin_ptx_cp_async_bulk_s2s_cluster`` (its tests
    read the source for the name): shared::cta into shared::cluster memory."""
    dst, src, n, bar = call.args
    params = [("unsigned", "dst", "r"), ("unsigned", "src", "r"), ("unsigned", "num_bytes", "r"),
              ("unsigned", "mbar", "r")]
    fn = _bulk_helper(emit, "tvm_builtin_ptx_cp_async_bulk_s2s_cluster",
                      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes",
                      "[%0], [%1], %2, [%3]", params)
    args = [smem_addr(emit, dst), smem_addr(emit, src), f"(unsigned)({emit(n)})",
            smem_addr(emit, bar)]
    return f"{fn}({', '.join(args)})"


def _emu_s2cluster(call: Call, emit: Emit) -> str:
    dst, src, n, bar = call.args
    return (f"tvm_cuda_emu::bulk_s2c({smem_addr(emit, dst)}, {smem_addr(emit, src)}, "
            f"(unsigned)({emit(n)}), {smem_addr(emit, bar)})")


intrin(
    "ptx.cp_async.bulk.s2c",
    "dst_ptr, src_ptr, size, mbar",
    name="cp_async_bulk_shared_to_cluster",
    min_arch=90,
    emulate=_emu_s2cluster,
)(_s2cluster)
intrin("ptx.cp_async_bulk_s2s_cluster", "dst_ptr, src_ptr, num_bytes, mbarrier", min_arch=90,
       emulate=_emu_s2cluster)(_s2cluster)


@intrin("ptx.cp_async.bulk.commit_group", min_arch=90, emulate=lambda call, emit: "(void)0")
def _bulk_commit(call: Call, emit: Emit) -> str:
    return asm("cp.async.bulk.commit_group;")


@intrin("ptx.cp_async.bulk.wait_group", "n=0, read=True", min_arch=90,
        emulate=lambda call, emit: "(void)0")  # the copies ran when issued
def _bulk_wait(call: Call, emit: Emit) -> str:
    read = ".read" if bool_arg(call, 1) else ""
    return asm(f"cp.async.bulk.wait_group{read} {int_arg(call, 0)};")


def _g2s_cta_operands(
    dst_ptr: Any, src_ptr: Any, num_bytes: Any, mbarrier_ptr: Any, *, cache_hint: str = "",
    cache_policy: Any = None, ignore_oob: bool = False, ignore_bytes_left: Any = 0,
    ignore_bytes_right: Any = 0,
) -> tuple[Any, ...]:
    """``cp.async.bulk`` of ``num_bytes`` from global memory into this CTA's shared memory."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    ignore = (ignore_bytes_left, ignore_bytes_right)
    return (dst_ptr, src_ptr, num_bytes, *ignore, mbarrier_ptr, policy, has, int(bool(ignore_oob)))


@intrin("ptx.cp_async_bulk_g2s_cta", _g2s_cta_operands, nargs=9, min_arch=90,
        emulate=_emu_g2s_cta)
def _g2s_cta(call: Call, emit: Emit) -> str:
    dst, src, n, ign_l, ign_r, bar, policy, _, _ = call.args
    if bool_arg(call, 8) or not (is_const(ign_l, 0) and is_const(ign_r, 0)):
        raise fail(call, "ignore_oob copies are not generated")
    return _g2s(call, emit, dst, src, n, bar, policy, bool_arg(call, 7), None, "shared::cta")


def _g2s_cluster_operands(
    dst_ptr: Any, src_ptr: Any, num_bytes: Any, mbarrier_ptr: Any, *, cache_hint: str = "",
    cache_policy: Any = None, multicast: bool = False, cta_mask: Any = 0,
) -> tuple[Any, ...]:
    """``cp.async.bulk`` from global memory into shared memory of the cluster (multicast to the
    CTAs of ``cta_mask`` when ``multicast``)."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (dst_ptr, src_ptr, num_bytes, mbarrier_ptr, cta_mask, policy, has, int(bool(multicast)))


@intrin("ptx.cp_async_bulk_g2s_cluster", _g2s_cluster_operands, nargs=8, min_arch=90,
        emulate=_emu_g2s_cluster)
def _g2s_cluster(call: Call, emit: Emit) -> str:
    dst, src, n, bar, mask, policy, _, _ = call.args
    return _g2s(
        call, emit, dst, src, n, bar, policy, bool_arg(call, 6), mask if bool_arg(call, 7) else None
    )


def _bulk_helper(emit: Emit, name: str, instr: str, operands: str,
                 params: list[tuple[str, str, str]]) -> str:
    """A helper ``name`` running ``instr operands`` with ``params`` (C type, name, asm
    constraint) as its inputs in order: the seed's form of the non-tensor bulk copies (its tests
    read the helpers' ``unsigned long long cache_policy``)."""
    decl = ", ".join(f"{t} {n}" for t, n, _ in params)
    ins = ", ".join(f'"{c}"({n})' for _, n, c in params)
    return helper(emit, name, (
        f"__device__ __forceinline__ void {name}({decl}) {{\n"
        f'  asm volatile("{instr} {operands};" : : {ins} : "memory");\n}}'))


def _g2s(
    call: Call, emit: Emit, dst: Any, src: Any, n: Any, bar: Any, policy: Any, hint: bool,
    mask: Any, space: str = "shared::cluster",
) -> str:
    """``cp.async.bulk.<space>.global.mbarrier::complete_tx::bytes`` (into this CTA's shared
    memory with ``space`` ``shared::cta``, PTX 8.6), multicast to ``mask``'s CTAs, with an L2
    cache policy when ``hint``."""
    mods = ".multicast::cluster" if mask is not None else ""
    mods += ".L2::cache_hint" if hint else ""
    params = [("unsigned", "dst", "r"), ("unsigned long long", "src", "l"),
              ("unsigned", "num_bytes", "r"), ("unsigned", "mbar", "r")]
    args = [smem_addr(emit, dst), gaddr(emit, src), f"(unsigned)({emit(n)})",
            smem_addr(emit, bar)]
    if mask is not None:
        params.append(("unsigned short", "cta_mask", "h"))
        args.append(f"(unsigned short)({emit(mask)})")
    if hint:
        params.append(("unsigned long long", "cache_policy", "l"))
        args.append(f"(unsigned long long)({emit(policy)})")
    tail = "".join(f", %{k}" for k in range(4, len(params)))
    name = ("tvm_builtin_ptx_cp_async_bulk_g2s_" + space.split("::")[1]
            + ("_multicast" if mask is not None else "") + ("_cache_hint" if hint else ""))
    fn = _bulk_helper(emit, name, f"cp.async.bulk.{space}.global.mbarrier::complete_tx::bytes"
                      f"{mods}", f"[%0], [%1], %2, [%3]{tail}", params)
    return f"{fn}({', '.join(args)})"


def _s2g_operands(
    dst_ptr: Any, src_ptr: Any, num_bytes: Any, *, cache_hint: str = "", cache_policy: Any = None,
    cp_mask: bool = False, byte_mask: Any = 0,
) -> tuple[Any, ...]:
    """``cp.async.bulk`` of ``num_bytes`` from shared to global memory, in a bulk group."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (dst_ptr, src_ptr, num_bytes, byte_mask, policy, has, int(bool(cp_mask)))


@intrin("ptx.cp_async_bulk_s2g", _s2g_operands, nargs=7, min_arch=90, emulate=_emu_s2g)
def _bulk_s2g(call: Call, emit: Emit) -> str:
    dst, src, n, byte_mask, policy, _, _ = call.args
    if bool_arg(call, 6):
        raise fail(call, "cp_mask copies are not generated")
    hint = bool_arg(call, 5)
    params = [("unsigned long long", "dst", "l"), ("unsigned", "src", "r"),
              ("unsigned", "num_bytes", "r")]
    args = [gaddr(emit, dst), smem_addr(emit, src), f"(unsigned)({emit(n)})"]
    if hint:
        params.append(("unsigned long long", "cache_policy", "l"))
        args.append(f"(unsigned long long)({emit(policy)})")
    fn = _bulk_helper(emit, "tvm_builtin_ptx_cp_async_bulk_s2g" + ("_cache_hint" if hint else ""),
                      f"cp.async.bulk.global.shared::cta.bulk_group"
                      f"{'.L2::cache_hint' if hint else ''}",
                      "[%0], [%1], %2" + (", %3" if hint else ""), params)
    return f"{fn}({', '.join(args)})"


# -- tensor (TMA) copies ---------------------------------------------------------------------------
def _coords(
    call: Call, emit: Emit, coords: list[Any], first: int, dim: int
) -> tuple[str, list[str]]:
    if len(coords) != dim:
        raise fail(call, f"a {dim}-d copy needs {dim} coordinates, got {len(coords)}")
    names = ", ".join(f"%{first + k}" for k in range(dim))
    return "{" + names + "}", [f'"r"((int)({emit(c)}))' for c in coords]


def _dim(call: Call) -> int:
    d = int_arg(call, 0)
    if not 1 <= d <= 5:
        raise fail(call, f"TMA copies have 1 to 5 dimensions, got {d}")
    return d


def _cache_tail(emit: Emit, ins: list[str], hint: bool, policy: Any) -> str:
    """Append the cache policy operand when ``hint``; the text it adds after the operands."""
    if not hint:
        return ""
    ins.append(_u64(emit, policy))
    return f", %{len(ins) - 1}"


def _g2c(call: Call, emit: Emit, gather4: bool) -> str:
    dim = _dim(call)
    dst, bar, tmap, mask, _, policy, _ = call.args[1:8]
    coords = list(call.args[8:])
    group = cta_group(call, 5)
    hint = bool_arg(call, 7)
    multicast = not is_const(mask, 0)
    if gather4 and (dim != 2 or len(coords) != 5):
        raise fail(call, "tile::gather4 copies are 2-d with 5 coordinates (column, 4 rows)")
    mods = (
        f".{dim}d.shared::cluster.global{'.tile::gather4' if gather4 else '.tile'}"
        ".mbarrier::complete_tx::bytes"
        + (".multicast::cluster" if multicast else "")
        + (".cta_group::2" if group == 2 else "")
        + (".L2::cache_hint" if hint else "")
    )
    ins = [
        f'"r"({smem_addr(emit, dst)})',
        f'"l"({gaddr(emit, tmap)})',
        f'"r"({smem_addr(emit, bar)})',
    ]
    names, cins = _coords(call, emit, coords, 3, 5 if gather4 else dim)
    ins += cins
    tail = ""
    if multicast:
        ins.append(f'"h"((unsigned short)({emit(mask)}))')
        tail += f", %{len(ins) - 1}"
    tail += _cache_tail(emit, ins, hint, policy)
    return asm(f"cp.async.bulk.tensor{mods} [%0], [%1, {names}], [%2]{tail};", inputs=ins)


def _g2c_operands(
    dim: Any, dst_ptr: Any, bar: Any, tensormap_addr: Any, cta_mask: Any, cta_group: Any,
    cache_hint: str, *coords: Any, cache_policy: Any = None,
) -> tuple[Any, ...]:
    """TMA load of a ``dim``-d box at ``coords`` into ``dst_ptr``, completing on ``bar`` (a
    pointer, or a 32-bit shared address), multicast to the CTAs of ``cta_mask`` when it is not
    0."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (dim, dst_ptr, bar, tensormap_addr, cta_mask, cta_group, policy, has, *coords)


def _g2c_rule(gather4: bool) -> Rule:
    def rule(call: Call, emit: Emit) -> str:
        return _g2c(call, emit, gather4)

    return rule


# the tile copy (sm_90+, emulated) and its tile::gather4 form (sm_100+): one operand list
for _path, _name, _arch, _emulate, _gather4 in (
    ("g2c", "global_to_cluster", 90, _emu_g2c, False),
    ("g2c_tile_gather4", "tile_gather4_global_to_cluster", 100, None, True),
):
    intrin(f"ptx.cp_async.bulk.tensor.{_path}", _g2c_operands, nargs=(9, None),
           name=f"cp_async_bulk_tensor_{_name}", choices={"cta_group": CTA_GROUP},
           min_arch=_arch, emulate=_emulate)(_g2c_rule(_gather4))


def _prefetch_operands(
    dim: Any, tensormap_addr: Any, cache_hint: str, *coords: Any, cache_policy: Any = None
) -> tuple[Any, ...]:
    """TMA prefetch of a ``dim``-d box at ``coords`` into L2."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (dim, tensormap_addr, policy, has, *coords)


@intrin(
    "ptx.cp_async.bulk.tensor.g2c_prefetch",
    _prefetch_operands,
    nargs=(5, None),
    name="cp_async_bulk_tensor_global_to_cluster_prefetch",
    min_arch=90,
    emulate=lambda call, emit: "(void)0",  # no cache in the emulator
)
def _tensor_prefetch(call: Call, emit: Emit) -> str:
    dim = _dim(call)
    tmap, policy = call.args[1], call.args[2]
    hint = bool_arg(call, 3)
    names, cins = _coords(call, emit, list(call.args[4:]), 1, dim)
    ins = [f'"l"({gaddr(emit, tmap)})', *cins]
    tail = _cache_tail(emit, ins, hint, policy)
    mods = f".{dim}d.L2.global.tile" + (".L2::cache_hint" if hint else "")
    return asm(f"cp.async.bulk.prefetch.tensor{mods} [%0, {names}]{tail};", inputs=ins)


def _s2g(call: Call, emit: Emit, red_op: str | None) -> str:
    dim = _dim(call)
    src, tmap, policy = call.args[1:4]
    hint = bool_arg(call, 4)
    first_coord = 6 if red_op is not None else 5
    names, cins = _coords(call, emit, list(call.args[first_coord:]), 2, dim)
    ins = [f'"r"({smem_addr(emit, src)})', f'"l"({gaddr(emit, tmap)})', *cins]
    tail = _cache_tail(emit, ins, hint, policy)
    hint_mod = ".L2::cache_hint" if hint else ""
    instr = "cp.async.bulk.tensor" if red_op is None else "cp.reduce.async.bulk.tensor"
    red = "" if red_op is None else f".{red_op}"
    return asm(
        f"{instr}.{dim}d.global.shared::cta{red}.tile.bulk_group{hint_mod} "
        f"[%1, {names}], [%0]{tail};",
        inputs=ins,
    )


def _s2g_tensor_operands(
    dim: Any, src_ptr: Any, tensormap_addr: Any, cache_hint: str, *coords: Any,
    cache_policy: Any = None,
) -> tuple[Any, ...]:
    """TMA store of the ``dim``-d box at ``coords`` from ``src_ptr``, in a bulk group."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (dim, src_ptr, tensormap_addr, policy, has, *coords)


@intrin(
    "ptx.cp_async.bulk.tensor.s2g",
    _s2g_tensor_operands,
    nargs=(6, None),
    name="cp_async_bulk_tensor_shared_to_global",
    min_arch=90,
    emulate=_emu_s2g_tensor,
)
def _tensor_s2g(call: Call, emit: Emit) -> str:
    return _s2g(call, emit, None)


def _s2g_reduce_operands(
    dim: Any, src_ptr: Any, tensormap_addr: Any, cache_hint: str, red_op: str, *coords: Any,
    cache_policy: Any = None,
) -> tuple[Any, ...]:
    """TMA reduction (``red_op``) of the ``dim``-d box at ``coords`` from ``src_ptr`` into
    global memory, in a bulk group."""
    policy, has = resolve_cache_policy(cache_hint, cache_policy)
    return (dim, src_ptr, tensormap_addr, policy, has, red_op, *coords)


@intrin(
    "ptx.cp_async.bulk.tensor.s2g_reduce",
    _s2g_reduce_operands,
    nargs=(7, None),
    name="cp_async_bulk_tensor_shared_to_global_reduce",
    strings=("red_op",),
    min_arch=90,
    emulate=_emu_s2g_reduce,
)
def _tensor_s2g_reduce(call: Call, emit: Emit) -> str:
    op = S(call, 5)
    if op not in TMA_REDUCTIONS:
        raise fail(call, f"unknown TMA reduction {op!r}")
    return _s2g(call, emit, op)


# The seed's spellings for a barrier given as a 32-bit shared address: the same ops (the rules
# take a uint32 barrier operand as an address already).
@sugar("ptx.cp_async.bulk.tensor.g2c_bar_addr", export=False)
def g2c_bar_addr(*args: Any, **kwargs: Any) -> Call:
    return build("ptx.cp_async.bulk.tensor.g2c", *args, **kwargs)


@sugar("ptx.cp_async.bulk.tensor.g2c_tile_gather4_bar_addr", export=False)
def g2c_tile_gather4_bar_addr(*args: Any, **kwargs: Any) -> Call:
    return build("ptx.cp_async.bulk.tensor.g2c_tile_gather4", *args, **kwargs)
