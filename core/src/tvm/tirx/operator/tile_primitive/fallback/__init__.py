"""The generic fallback variant of every tile primitive, for every target kind.

Each tile primitive has a variant ``"fallback"`` registered for ``"*"`` at priority
:data:`FALLBACK_PRIORITY`: it lowers the call to plain loops over buffer elements, correct at
every execution scope (see ``_scope``). Backends register faster variants at higher priority;
a backend that registers its own ``"fallback"`` for its kind replaces this one there.
"""

from __future__ import annotations

from ..dispatch_context import SERIAL, register_scope_barrier
from ..dispatcher import Impl, register_dispatch
from ..ops import TILE_OPS, core_registration
from .compose import (
    lower_binary_reduce,
    lower_compose_op,
    lower_reduce_negate,
    lower_unary_reduce,
)
from .elementwise import (
    lower_binary,
    lower_binary_chain,
    lower_copy,
    lower_fill,
    lower_fma,
    lower_select,
    lower_unary,
)
from .gemm import lower_gemm, lower_gemm_async
from .reduce import lower_reduce

__all__ = ["FALLBACK_PRIORITY", "FALLBACK_VARIANT", "fallback_impl"]

FALLBACK_PRIORITY = -100
FALLBACK_VARIANT = "fallback"

_BY_FAMILY: dict[str, Impl] = {
    "copy": lower_copy,
    "cast": lower_copy,
    "fill": lower_fill,
    "unary": lower_unary,
    "binary": lower_binary,
    "fma": lower_fma,
    "select": lower_select,
    "reduce": lower_reduce,
}
_BY_NAME: dict[str, Impl] = {
    "gemm": lower_gemm,
    "gemm_async": lower_gemm_async,
    "binary_chain": lower_binary_chain,
    "binary_reduce": lower_binary_reduce,
    "unary_reduce": lower_unary_reduce,
    "reduce_negate": lower_reduce_negate,
    "compose_op": lower_compose_op,
}


def fallback_impl(op_name: str) -> Impl:
    """The generic lowering function ``(op_call, sctx) -> PrimFunc`` of a tile primitive."""
    spec = TILE_OPS[op_name.removeprefix("tirx.tile.")]
    impl = _BY_NAME.get(spec.name) or _BY_FAMILY.get(spec.family)
    if impl is None:
        raise KeyError(f"no generic fallback for tile primitive {spec.name!r} (family {spec.family})")
    return impl


def _register() -> None:
    with core_registration():
        for name in TILE_OPS:
            register_dispatch(name, "*", variant=FALLBACK_VARIANT,
                              priority=FALLBACK_PRIORITY)(fallback_impl(name))
        # The host C target runs a kernel's threads one after another: a collective op is done
        # by the scope's thread 0 and needs no barrier.
        register_scope_barrier("c", "*", SERIAL)


_register()
