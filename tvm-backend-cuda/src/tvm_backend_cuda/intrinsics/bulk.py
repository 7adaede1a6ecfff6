"""``cp.async.bulk`` and the TMA ``cp.async.bulk.tensor`` copies (sm_90+), completing on an
mbarrier (global->shared) or in a bulk group (shared->global). A tensor map operand is the
generic address of a ``CUtensorMap`` (a ``const __grid_constant__ CUtensorMap`` kernel
parameter, or one in global memory)."""

from __future__ import annotations

from ._base import (
    asm,
    bool_arg,
    cta_group,
    ctype,
    fail,
    gaddr,
    int_arg,
    intrin,
    is_const,
    ptr,
    smem_addr,
)
from ._base import str_arg as S


def _u64(emit, a):
    return f'"l"((unsigned long long)({emit(a)}))'


@intrin("ptx.cp_async.bulk", nargs=7, flat="cp_async_bulk", min_arch=90)
def _bulk_legacy(call, emit):
    ct = ctype(emit, S(call, 0))
    sh, sh_off, gl, gl_off, nbytes, bar = call.args[1:]
    dst = f"({ptr(emit, sh, ct)} + ({emit(sh_off)}))"
    src = f"({ptr(emit, gl, ct)} + ({emit(gl_off)}))"
    return asm(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];",
        inputs=[
            f'"r"((unsigned)__cvta_generic_to_shared({dst}))',
            f'"l"((unsigned long long)({src}))',
            f'"r"((unsigned)({emit(nbytes)}))',
            f'"r"({smem_addr(emit, bar)})',
        ],
    )


def _s2cluster(call, emit):
    dst, src, n, bar = call.args
    return asm(
        "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes "
        "[%0], [%1], %2, [%3];",
        inputs=[
            f'"r"({smem_addr(emit, dst)})',
            f'"r"({smem_addr(emit, src)})',
            f'"r"((unsigned)({emit(n)}))',
            f'"r"({smem_addr(emit, bar)})',
        ],
    )


_s2cluster.__module__ = __name__
intrin("ptx.cp_async.bulk.s2c", nargs=4, flat="cp_async_bulk_shared_to_cluster", min_arch=90)(
    _s2cluster
)
intrin("ptx.cp_async_bulk_s2s_cluster", nargs=4, min_arch=90)(_s2cluster)


@intrin("ptx.cp_async.bulk.commit_group", min_arch=90)
def _bulk_commit(call, emit):
    return asm("cp.async.bulk.commit_group;")


@intrin("ptx.cp_async.bulk.wait_group", nargs=2, min_arch=90)
def _bulk_wait(call, emit):
    read = ".read" if bool_arg(call, 1) else ""
    return asm(f"cp.async.bulk.wait_group{read} {int_arg(call, 0)};")


@intrin("ptx.cp_async_bulk_g2s_cta", nargs=9, min_arch=90)
def _g2s_cta(call, emit):
    dst, src, n, ign_l, ign_r, bar, policy, _, _ = call.args
    if bool_arg(call, 8) or not (is_const(ign_l, 0) and is_const(ign_r, 0)):
        raise fail(call, "ignore_oob copies are not generated")
    return _g2s(call, emit, dst, src, n, bar, policy, bool_arg(call, 7), None)


@intrin("ptx.cp_async_bulk_g2s_cluster", nargs=8, min_arch=90)
def _g2s_cluster(call, emit):
    dst, src, n, bar, mask, policy, _, _ = call.args
    return _g2s(
        call, emit, dst, src, n, bar, policy, bool_arg(call, 6), mask if bool_arg(call, 7) else None
    )


def _g2s(call, emit, dst, src, n, bar, policy, hint: bool, mask) -> str:
    mods = ".multicast::cluster" if mask is not None else ""
    mods += ".L2::cache_hint" if hint else ""
    ins = [
        f'"r"({smem_addr(emit, dst)})',
        f'"l"({gaddr(emit, src)})',
        f'"r"((unsigned)({emit(n)}))',
        f'"r"({smem_addr(emit, bar)})',
    ]
    tail = ""
    if mask is not None:
        ins.append(f'"h"((unsigned short)({emit(mask)}))')
        tail += f", %{len(ins) - 1}"
    if hint:
        ins.append(_u64(emit, policy))
        tail += f", %{len(ins) - 1}"
    return asm(
        f"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{mods} "
        f"[%0], [%1], %2, [%3]{tail};",
        inputs=ins,
    )


@intrin("ptx.cp_async_bulk_s2g", nargs=7, min_arch=90)
def _bulk_s2g(call, emit):
    dst, src, n, byte_mask, policy, _, _ = call.args
    if bool_arg(call, 6):
        raise fail(call, "cp_mask copies are not generated")
    hint = bool_arg(call, 5)
    ins = [
        f'"l"({gaddr(emit, dst)})',
        f'"r"({smem_addr(emit, src)})',
        f'"r"((unsigned)({emit(n)}))',
    ]
    tail = ""
    if hint:
        ins.append(_u64(emit, policy))
        tail = ", %3"
    return asm(
        f"cp.async.bulk.global.shared::cta.bulk_group{'.L2::cache_hint' if hint else ''} "
        f"[%0], [%1], %2{tail};",
        inputs=ins,
    )


# -- tensor (TMA) copies ---------------------------------------------------------------------------
def _mode(call) -> str:
    mode = S(call, len(call.args) - 1)
    if mode not in ("", "tile"):
        raise fail(call, f"only tile mode TMA copies are generated, got {mode!r}")
    return ".tile"


def _coords(call, emit, coords, first: int, dim: int) -> tuple[str, list[str]]:
    if len(coords) != dim:
        raise fail(call, f"a {dim}-d copy needs {dim} coordinates, got {len(coords)}")
    names = ", ".join(f"%{first + k}" for k in range(dim))
    return "{" + names + "}", [f'"r"((int)({emit(c)}))' for c in coords]


def _dim(call) -> int:
    d = int_arg(call, 0)
    if not 1 <= d <= 5:
        raise fail(call, f"TMA copies have 1 to 5 dimensions, got {d}")
    return d


def _g2c(call, emit, gather4: bool) -> str:
    dim = _dim(call)
    dst, bar, tmap, mask, _, policy, _ = call.args[1:8]
    coords = call.args[8:-1]
    group = cta_group(call, 5)
    hint = bool_arg(call, 7)
    multicast = not is_const(mask, 0)
    load = ".tile::gather4" if gather4 else _mode(call)
    if gather4 and (dim != 2 or len(coords) != 5):
        raise fail(call, "tile::gather4 copies are 2-d with 5 coordinates (column, 4 rows)")
    mods = (
        f".{dim}d.shared::cluster.global{load}.mbarrier::complete_tx::bytes"
        + (".multicast::cluster" if multicast else "")
        + (".cta_group::2" if group == 2 else "")
        + (".L2::cache_hint" if hint else "")
    )
    ins = [
        f'"r"({smem_addr(emit, dst)})',
        f'"l"({gaddr(emit, tmap)})',
        f'"r"({smem_addr(emit, bar)})',
    ]
    if gather4:
        names = "{" + ", ".join(f"%{3 + k}" for k in range(5)) + "}"
        ins += [f'"r"((int)({emit(c)}))' for c in coords]
    else:
        names, cins = _coords(call, emit, coords, 3, dim)
        ins += cins
    tail = ""
    if multicast:
        ins.append(f'"h"((unsigned short)({emit(mask)}))')
        tail += f", %{len(ins) - 1}"
    if hint:
        ins.append(_u64(emit, policy))
        tail += f", %{len(ins) - 1}"
    return asm(f"cp.async.bulk.tensor{mods} [%0], [%1, {names}], [%2]{tail};", inputs=ins)


@intrin(
    "ptx.cp_async.bulk.tensor.g2c",
    nargs=(10, None),
    flat="cp_async_bulk_tensor_global_to_cluster",
    min_arch=90,
)
def _tensor_g2c(call, emit):
    return _g2c(call, emit, False)


@intrin(
    "ptx.cp_async.bulk.tensor.g2c_tile_gather4",
    nargs=(10, None),
    flat="cp_async_bulk_tensor_tile_gather4_global_to_cluster",
    min_arch=100,
)
def _tensor_g2c_gather4(call, emit):
    return _g2c(call, emit, True)


@intrin(
    "ptx.cp_async.bulk.tensor.g2c_prefetch",
    nargs=(6, None),
    flat="cp_async_bulk_tensor_global_to_cluster_prefetch",
    min_arch=90,
)
def _tensor_prefetch(call, emit):
    dim = _dim(call)
    tmap, policy = call.args[1], call.args[2]
    hint = bool_arg(call, 3)
    names, ins = _coords(call, emit, call.args[4:-1], 1, dim)
    ins = [f'"l"({gaddr(emit, tmap)})', *ins]
    tail = ""
    if hint:
        ins.append(_u64(emit, policy))
        tail = f", %{len(ins) - 1}"
    mods = f".{dim}d.L2.global{_mode(call)}" + (".L2::cache_hint" if hint else "")
    return asm(f"cp.async.bulk.prefetch.tensor{mods} [%0, {names}]{tail};", inputs=ins)


def _s2g(call, emit, red_op: str | None) -> str:
    dim = _dim(call)
    src, tmap, policy = call.args[1:4]
    hint = bool_arg(call, 4)
    first_coord = 6 if red_op is not None else 5
    names, cins = _coords(call, emit, call.args[first_coord:-1], 2, dim)
    ins = [f'"r"({smem_addr(emit, src)})', f'"l"({gaddr(emit, tmap)})', *cins]
    tail = ""
    if hint:
        ins.append(_u64(emit, policy))
        tail = f", %{len(ins) - 1}"
    hint_mod = ".L2::cache_hint" if hint else ""
    if red_op is None:
        return asm(
            f"cp.async.bulk.tensor.{dim}d.global.shared::cta{_mode(call)}.bulk_group"
            f"{hint_mod} [%1, {names}], [%0]{tail};",
            inputs=ins,
        )
    return asm(
        f"cp.reduce.async.bulk.tensor.{dim}d.global.shared::cta.{red_op}{_mode(call)}"
        f".bulk_group{hint_mod} [%1, {names}], [%0]{tail};",
        inputs=ins,
    )


@intrin(
    "ptx.cp_async.bulk.tensor.s2g",
    nargs=(7, None),
    flat="cp_async_bulk_tensor_shared_to_global",
    min_arch=90,
)
def _tensor_s2g(call, emit):
    return _s2g(call, emit, None)


@intrin(
    "ptx.cp_async.bulk.tensor.s2g_reduce",
    nargs=(8, None),
    flat="cp_async_bulk_tensor_shared_to_global_reduce",
    min_arch=90,
)
def _tensor_s2g_reduce(call, emit):
    op = S(call, 5)
    if op not in ("add", "min", "max", "inc", "dec", "and", "or", "xor"):
        raise fail(call, f"unknown TMA reduction {op!r}")
    return _s2g(call, emit, op)
