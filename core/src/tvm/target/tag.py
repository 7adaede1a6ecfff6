"""Target tags: named target configs (``"nvidia/nvidia-h100"``), registered by backends as data."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .._registry import Registry, current_owner
from .._registry import _label as _owner_label
from ..error import RegistrationConflict, TargetError

__all__ = ["TAG_REGISTRY", "get_tag", "list_tags", "register_tag"]

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
