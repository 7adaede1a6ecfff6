"""``tvm.tirx.layout``: the layout vocabulary of TIRx programs, as Apache TVM spells it.

``TileLayout``, ``Iter``, ``Axis``, ``S[...]`` (shard specs in every upstream form) and
``R[...]`` (replica specs) are core's. The axes are names of the axis registry:
``from tvm.tirx.layout import laneid, warpid, P, F, TCol, tid_in_wg`` gives the registered
:class:`Axis` of that name; core registers ``m`` and the generic thread axes, backends add
theirs (Trainium ``P``, ``F``, ``Bank``; CUDA ``TCol``, ``TLane``, ``tx``, ``tid_in_wg``, ...).
Layout functions such as ``wg_local_layout`` come from the backend that defines them, through
the ``tvm_layout_names`` hook. A name no loaded backend provides raises an AttributeError that
says which backend does, when one of this project's does.
"""

from __future__ import annotations

from typing import Any

from .._hints import install_hint_for_backend as _install_hint
from ..ir import layout as _layout
from ..ir.layout import AXES, LAYOUT_NAMES, Axis, Iter, R, S, TileLayout

__all__ = ["AXES", "LAYOUT_NAMES", "Axis", "Iter", "R", "S", "TileLayout", "register_layout_name"]

# Which of this project's backends provides a layout name it does not have loaded (hints only).
_PROVIDERS = {
    "cuda": ("TCol", "TLane", "tx", "tid_in_wg", "bx", "by", "bz", "cbx", "cby", "cbz",
             "wg_local_layout", "tcgen05_atom_layout", "tmem_datapath_layout"),
    "trn": ("P", "F", "Bank", "to_psum_layout", "trainium_layout"),
}


def register_layout_name(name: str, value: Any, *, override: bool = False) -> Any:
    """Make ``tvm.tirx.layout.<name>`` resolve to ``value`` (a layout function or constant);
    axes are registered with :meth:`Axis.register` instead."""
    return LAYOUT_NAMES.register(name, value, override=override)


def __getattr__(name: str) -> Any:
    if name in AXES:
        return AXES[name]
    if name in LAYOUT_NAMES:
        return LAYOUT_NAMES[name]
    value = getattr(_layout, name, None)  # layout classes core may add (ComposeLayout, ...)
    if value is not None and not name.startswith("_"):
        return value
    raise AttributeError(_missing(name))


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(AXES.keys()) | set(LAYOUT_NAMES.keys()))


def _missing(name: str) -> str:
    msg = f"module 'tvm.tirx.layout' has no attribute {name!r}"
    for backend, names in _PROVIDERS.items():
        if name in names:
            hint = _install_hint(backend)
            return (f"{msg}: {name} comes with the {backend} backend"
                    + (f"; {hint}" if hint else ""))
    return msg
