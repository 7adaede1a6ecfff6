"""Target tags: named target configs (``"nvidia/nvidia-h100"``), registered by backends as data."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from .._registry import Registry, current_owner
from .._registry import _label as _owner_label
from ..error import RegistrationConflict, TargetError

__all__ = ["TAG_REGISTRY", "find_tags", "get_tag", "list_tags", "register_tag", "short_names"]

TAG_REGISTRY: Registry[str, dict[str, Any]] = Registry("target tag", warn_on_override=True)


def register_tag(name: str, config: Mapping[str, Any], override: bool = False) -> dict[str, Any]:
    """Register the target tag ``name`` for ``config`` (a dict with ``"kind"`` and attributes).

    Registering a name that is taken raises :class:`~tvm.error.RegistrationConflict` unless
    ``override=True``. The kind is resolved when a target is made from the tag, so a tag may be
    registered before its kind's backend loads. Returns a copy of the stored config.
    """
    if not isinstance(name, str) or not name:
        raise TargetError(f"a target tag needs a non-empty name, got {name!r}")
    if not isinstance(config, Mapping) or not isinstance(config.get("kind"), str):
        raise TargetError(f"target tag {name!r}: config must be a dict with a 'kind' string")
    if not override and name in TAG_REGISTRY and not TAG_REGISTRY._override_allowed(name):
        # Unlike other registries, re-registering an identical tag is still a mistake.
        first = _owner_label(TAG_REGISTRY.owner_of(name) or "")
        raise RegistrationConflict(
            f"target tag {name!r} is registered twice: by {first} and by "
            f"{_owner_label(current_owner())}; pass override=True to replace it on purpose"
        )
    stored = _copy(dict(config))
    TAG_REGISTRY.register(name, stored, override=True if name in TAG_REGISTRY else override)
    return _copy(stored)


def get_tag(name: str) -> dict[str, Any] | None:
    """A copy of the config of tag ``name``, or ``None``."""
    config = TAG_REGISTRY.get(name)
    return None if config is None else _copy(config)


def list_tags() -> dict[str, dict[str, Any]]:
    """Every registered tag: name -> a copy of its config."""
    return {name: _copy(cfg) for name, cfg in TAG_REGISTRY.items()}


def short_names(tag: str) -> tuple[str, ...]:
    """The short names of ``tag``, by one rule for every backend's tags: the vendor named once,
    and the model alone. ``nvidia/nvidia-h200`` -> ``("nvidia/h200", "nvidia-h200", "h200")``;
    ``aws/trn2/trn2.3xlarge`` -> ``("aws/trn2.3xlarge", "trn2.3xlarge")``;
    ``apple/m1-gpu`` -> ``("m1-gpu",)``."""
    vendor, _, rest = tag.partition("/")
    if not rest:
        return ()
    last = rest.rsplit("/", 1)[-1]
    model = last[len(vendor) + 1:] if last.lower().startswith(vendor.lower() + "-") else last
    return tuple(n for n in dict.fromkeys((f"{vendor}/{model}", last, model)) if n != tag)


def find_tags(name: str) -> list[str]:
    """The tags ``name`` stands for: itself; else the tags whose name equals it ignoring case,
    ``-``, ``_`` and spaces; else the tags with such a short name (:func:`short_names`); else
    the one tag whose model ends in those words (``rtx-4090``). Tags of one config count as
    one. More than one is an ambiguous name; none, an unknown one."""
    if name in TAG_REGISTRY:
        return [name]
    key = _fold(name)
    tags = TAG_REGISTRY.keys()
    same = [t for t in tags if _fold(t) == key]
    short = same or [t for t in tags if any(_fold(s) == key for s in short_names(t))]
    if short:
        return _one_if_same(short)
    # The model's trailing words (``rtx-4090``, ``mi300x``) only when they name one tag.
    words = [t for t in tags if any(_fold(s) == key for s in suggestion_names(t))]
    return words if len(words) == 1 else []


def suggestion_names(tag: str) -> list[str]:
    """What a user may call ``tag`` when they mistype it, for did-you-mean: its short names and
    the model's trailing words (``geforce-rtx-4090`` is also ``rtx-4090`` and ``4090``)."""
    shorts = short_names(tag)
    model = shorts[-1] if shorts else tag.rsplit("/", 1)[-1]
    words = model.split("-")
    return [*shorts, *("-".join(words[i:]) for i in range(1, len(words)))]


def _one_if_same(tags: list[str]) -> list[str]:
    """Tags of one config (a GPU listed under two names) count as one: the shortest name."""
    configs = [TAG_REGISTRY[t] for t in tags]
    if all(c == configs[0] for c in configs):
        return [min(tags, key=lambda t: (len(t), t))]
    return tags


_FOLD = re.compile(r"[-_\s]+")


def _fold(name: str) -> str:
    return _FOLD.sub("", name.lower())


def _copy(value: Any) -> Any:
    """A deep copy of a tag config: JSON-like data copied directly (backends register hundreds
    of tags while ``import tvm`` runs; ``copy.deepcopy`` is several times slower), anything else
    by ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return copy.deepcopy(value)
