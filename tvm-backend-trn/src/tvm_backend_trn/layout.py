"""Trainium tile layouts: the memory axes ``P`` (partition), ``F`` (free) and ``Bank`` (PSUM).

A Trainium on-chip buffer is described by an annotation string of ``P`` and ``F``, one letter
per logical dimension: ``trainium_layout("PF", (128, 512))`` puts dim 0 on the 128 partitions
and dim 1 along the free axis of each partition. A single ``P`` dimension larger than 128 (a
multiple of 128) is split into an outer ``F`` part and an inner 128-wide ``P`` part; several
``P`` dimensions must multiply to at most 128. PSUM buffers additionally map the free axis onto
2 KiB banks of 512 fp32 elements (:func:`to_psum_layout`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from tvm.ir.layout import Axis, Iter, ScopeLayout, TileLayout

__all__ = [
    "PSUM_MAX_ELEM_PER_BANK",
    "TRN_MEMORY_AXES",
    "is_trainium_layout",
    "layout_names",
    "register_axes",
    "to_psum_layout",
    "trainium_layout",
]

TRN_MEMORY_AXES = frozenset({"F", "P", "Bank"})
PSUM_MAX_ELEM_PER_BANK = 512
_PARTITIONS = 128


def layout_names() -> dict[str, Any]:
    """What the ``tvm_layout_names`` hook returns: the memory axes ``P``, ``F`` and ``Bank``,
    the layout functions (``to_psum_layout`` is also ``TileLayout.to_psum``) and what a layout
    string means in ``trn.sbuf`` and ``trn.psum`` (``layout="PF"``: :func:`trainium_layout`)."""
    names: dict[str, Any] = {name: Axis(name, "memory") for name in ("P", "F", "Bank")}
    names.update(to_psum_layout=to_psum_layout, trainium_layout=trainium_layout,
                 scope_trn_sbuf=ScopeLayout("trn.sbuf", _sbuf_layout),
                 scope_trn_psum=ScopeLayout("trn.psum", _psum_layout))
    return names


def _sbuf_layout(annotation: str, shape: Sequence[Any]) -> TileLayout:
    return trainium_layout(annotation, shape)


def _psum_layout(annotation: str, shape: Sequence[Any]) -> TileLayout:
    return trainium_layout(annotation, shape, is_psum=True)


def register_axes() -> None:
    """Register the layout axes ``P``, ``F`` and ``Bank`` (memory axes; idempotent)."""
    for name in ("P", "F", "Bank"):
        Axis.register(name, "memory")


def _axis(name: str) -> Axis:
    try:
        return Axis.get(name)
    except KeyError:
        register_axes()
        return Axis.get(name)


def is_trainium_layout(layout: Any) -> bool:
    """True iff ``layout`` is a TileLayout with no shard iterator on a memory axis other than
    ``P``, ``F`` and ``Bank`` (thread axes are not checked)."""
    if not isinstance(layout, TileLayout):
        return False
    return not any(it.axis.is_memory and it.axis.name not in TRN_MEMORY_AXES
                   for it in layout.shard)


def _static(x: Any) -> int:
    value = getattr(x, "value", x)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"Trainium layouts need static shapes; got extent {x!r}")
    return value


def _default_strides(shape: Sequence[int]) -> list[int]:
    strides, acc = [], 1
    for ext in reversed(shape):
        strides.append(acc)
        acc *= ext
    return list(reversed(strides))


def trainium_layout(annotation: str, shape: Sequence[Any], is_psum: bool = False) -> TileLayout:
    """A Trainium tile layout from a ``P``/``F`` annotation and the logical ``shape``."""
    if not isinstance(annotation, str) or not re.fullmatch(r"[PF]*", annotation):
        raise ValueError(f"annotation {annotation} must be a string of 'P' and 'F'")
    shape = tuple(_static(s) for s in shape)
    if len(annotation) != len(shape):
        raise ValueError(
            f"annotation {annotation} and shape {shape} must have the same length")
    num_p = annotation.count("P")
    split_p = False
    p_idx = annotation.find("P")
    if num_p == 1:
        p_dim = shape[p_idx]
        if not (p_dim <= _PARTITIONS or p_dim % _PARTITIONS == 0):
            raise ValueError(
                f"There is only 1 P in the annotation. Partition size {p_dim} must be less than "
                f"or equal to 128 or a multiple of 128")
        if p_dim > _PARTITIONS:
            split_p = True
            annotation = "F" + annotation
            shape = (p_dim // _PARTITIONS, *shape[:p_idx], _PARTITIONS, *shape[p_idx + 1:])
    elif num_p > 1:
        prod = math.prod(s for s, c in zip(shape, annotation) if c == "P")
        if prod > _PARTITIONS:
            raise ValueError(
                f"There are {num_p} Ps in the annotation. Partition size {prod} must be less "
                f"than or equal to 128")
    f_shape = [s for s, c in zip(shape, annotation) if c == "F"]
    p_shape = [s for s, c in zip(shape, annotation) if c == "P"]
    f_iters = [Iter(e, s, _axis("F")) for e, s in zip(f_shape, _default_strides(f_shape))]
    p_iters = [Iter(e, s, _axis("P")) for e, s in zip(p_shape, _default_strides(p_shape))]
    result: list[Iter] = []
    for char in annotation:
        result.append(f_iters.pop(0) if char == "F" else p_iters.pop(0))
    if split_p:
        # the outer ("higher P") part goes right before the 128-wide P iterator
        higher_p, result = result[0], result[1:]
        result = [*result[:p_idx], higher_p, *result[p_idx:]]
    layout = TileLayout.from_iters(result, [], {})
    return to_psum_layout(layout) if is_psum else layout


def to_psum_layout(layout: TileLayout) -> TileLayout:
    """Map the free axis of a Trainium SBUF layout onto PSUM banks of 512 elements."""
    bank = _axis("Bank")
    shard: list[Iter] = []
    for it in layout.shard:
        if it.axis.name != "F":
            shard.append(it)
            continue
        extent, stride = _static(it.extent), _static(it.stride)
        if stride % PSUM_MAX_ELEM_PER_BANK == 0:
            shard.append(Iter(extent, stride // PSUM_MAX_ELEM_PER_BANK, bank))
        elif PSUM_MAX_ELEM_PER_BANK % stride == 0:
            c = PSUM_MAX_ELEM_PER_BANK // stride
            if extent < c:
                shard.append(it)
            elif extent % c == 0:
                shard.append(Iter(extent // c, 1, bank))
                shard.append(Iter(c, stride, _axis("F")))
            else:
                raise ValueError(f"layout {layout} can not be converted to psum layout")
        else:
            raise ValueError(f"layout {layout} can not be converted to psum layout")
    return TileLayout.from_iters(shard, [], {})
