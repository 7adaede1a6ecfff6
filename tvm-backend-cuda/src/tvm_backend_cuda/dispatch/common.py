"""Helpers shared by the CUDA dispatch variants (the seed's ``common`` and
``exec_scope_utils``): arch checks, scope checks, extents, descriptor arithmetic."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tvm.backend.sdk import DispatchContext, bound_args, fail, region_of
from tvm.ir import Buffer, BufferRegion, Cast, IntImm, PrimExpr, TilePrimitiveCall, const

from ..tags import sm_version

__all__ = [
    "const_extents",
    "dst_src",
    "exec_scope_ok",
    "is_cuda",
    "thread_to_cta_scope",
    "get_st_extent",
    "match_scope",
    "needs_arch",
    "next_power_of_2",
    "region_numel",
    "single_thread",
    "sm_version",
    "sm_version_ok",
    "smem_desc_add_16B_offset",
]


# a tag of each arch, for the hint of needs_arch
_TAG_OF_ARCH = {"sm_80": "nvidia/nvidia-a100", "sm_90a": "nvidia/nvidia-h100",
                "sm_100a": "nvidia/nvidia-b200"}


def const_extents(region: BufferRegion, variant: str) -> list[int]:
    """The extents of ``region``; ``variant`` declines when one is not a constant."""
    exts = []
    for r in region.region:
        if not isinstance(r.extent, IntImm):
            fail(f"{variant} needs constant extents")
        exts.append(r.extent.value)
    return exts


def const_int(e: Any, what: str) -> int:
    """``e`` as an int; the variant declines (``what`` must be a constant) when it is not one."""
    if isinstance(e, int):
        return e
    if not isinstance(e, IntImm):
        fail(f"{what} must be a constant, got {e}")
    return int(e.value)


def needs_arch(need: str, have: Any, *, or_newer: bool = False) -> str:
    """Why a variant declines: the arch it needs, the target's, and how to ask for the one it
    needs (``tvm.compile`` resolves target ``cuda`` to the GPU of the machine, else sm_80)."""
    ask = need if need in _TAG_OF_ARCH else f"{need}a" if f"{need}a" in _TAG_OF_ARCH else need
    tag = _TAG_OF_ARCH.get(ask)
    how = f"target={{'kind': 'cuda', 'arch': '{ask}'}}" + (f" or target='{tag}'" if tag else "")
    return (f"needs {need}{' or newer' if or_newer else ''}; the target's arch is "
            f"{have or 'unset'} (compile with {how})")


def sm_version_ok(sctx: DispatchContext, minimum: int, *, exact: int | None = None) -> tuple[bool, str]:
    """(True, "") when the target's arch is at least ``minimum`` (or is ``exact``). A target
    without an arch passes (``tvm.compile`` always settles one; a bare lowering may not)."""
    v = sm_version(sctx.target)
    if v is None:
        return True, ""
    have = sctx.target.attrs.get("arch")
    if exact is not None and v != exact:
        return False, needs_arch(f"sm_{exact}a", have)
    if v < minimum:
        return False, needs_arch(f"sm_{minimum}", have, or_newer=True)
    return True, ""


def match_scope(scope: str, *patterns: str) -> bool:
    """``scope`` is one of ``patterns``; ``"shared*"`` matches ``shared`` and ``shared.dyn``."""
    return any(p.endswith("*") and scope.startswith(p[:-1]) or scope == p for p in patterns)


def exec_scope_ok(sctx: DispatchContext, *scopes: str) -> tuple[bool, str]:
    if sctx.scope_kind in scopes:
        return True, ""
    return False, f"scope {sctx.scope_kind} (needs {', '.join(scopes)})"


def single_thread(sctx: DispatchContext) -> bool:
    return sctx.scope_kind == "thread" or sctx.is_single_thread()


def get_st_extent(region: BufferRegion) -> tuple[list[PrimExpr], list[PrimExpr]]:
    """(starts, extents) of a region."""
    return [r.min for r in region.region], [r.extent for r in region.region]


def next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def smem_desc_add_16B_offset(desc: PrimExpr, offset: Any) -> PrimExpr:  # noqa: N802 - seed name
    """The descriptor of the operand ``16 * offset`` bytes after ``desc``'s (the start address
    field, in 16-byte units, is the low bits)."""
    if isinstance(offset, int) and offset == 0:
        return desc
    off = offset if isinstance(offset, PrimExpr) else const(offset, "uint64")
    if off.dtype != desc.dtype:
        off = Cast(desc.dtype, off)
    return desc + off


def static_extents(extents: Sequence[Any]) -> list[int] | None:
    out = []
    for e in extents:
        if not isinstance(e, IntImm):
            return None
        out.append(e.value)
    return out


def region_numel(region: BufferRegion) -> int | None:
    """How many elements ``region`` has; None when an extent is not a constant."""
    extents = static_extents([r.extent for r in region.region])
    return None if extents is None else math.prod(extents)


def is_cuda(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    """Predicate: the target is CUDA (the seed's ``sctx.is_target("cuda")``)."""
    return (True, "") if sctx.is_target("cuda") else (False, "non-cuda target")


def thread_to_cta_scope(call: TilePrimitiveCall, sctx: DispatchContext) -> tuple[bool, str]:
    """Predicate: thread, warp, warpgroup or cta scope (the CUDA copy/elementwise scopes)."""
    return exec_scope_ok(sctx, "thread", "warp", "warpgroup", "cta")


def dst_src(call: TilePrimitiveCall) -> tuple[BufferRegion, BufferRegion]:
    """The ``dst`` and ``src`` arguments of a copy-like call as regions (declines otherwise)."""
    a = bound_args(call)
    dst, src = a["dst"], a["src"]
    if not isinstance(dst, (Buffer, BufferRegion)) or not isinstance(src, (Buffer, BufferRegion)):
        fail("dst and src must be buffers or buffer regions")
    return region_of(dst), region_of(src)
