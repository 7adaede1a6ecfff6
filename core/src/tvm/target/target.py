"""``Target``: a target kind with checked attributes, keys and an optional host target."""

from __future__ import annotations

import contextvars
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .._hints import missing_message
from .._scopes import pop_scope, push_scope
from .._suggest import did_you_mean
from ..error import TargetError
from ..ir.layout_axes import set_target_kind_source
from .kind import KIND_REGISTRY, TargetKind, get_target_kind
from .tag import TAG_REGISTRY, find_tags, get_tag, suggestion_names

__all__ = ["Target"]

_current: contextvars.ContextVar[tuple[Target, ...]] = contextvars.ContextVar(
    "tvm_target_stack", default=()
)


class Target:
    """A compilation target.

    ``Target("c")`` (a kind name), ``Target("nvidia/nvidia-h100")`` (a tag, or a short name
    of it: ``"nvidia/h100"``, ``"h100"``), ``Target("sm_90a")`` (an architecture a kind
    declares with ``arch_attr``/``arch_pattern``),
    ``Target({"kind": "cuda", "arch": "sm_90a"})`` (a config), ``Target("cuda -arch=sm_90a")``
    (the text form of ``str(target)``) or ``Target(other_target)``. ``host`` gives the target
    of the host side (same forms). Attributes are checked against the kind's schema.

    Targets are immutable, compare and hash by kind, attributes, keys and host (not by the tag
    they came from), and are context managers: ``with Target("c"): ...`` makes it
    :meth:`Target.current`.
    """

    __slots__ = ("_attrs", "_host", "_keys", "_kind", "_tag")

    def __init__(self, target: Target | str | Mapping[str, Any], host: Any = None) -> None:
        if isinstance(target, Target):
            self._kind: TargetKind = target._kind
            self._attrs: Mapping[str, Any] = target._attrs
            self._keys: tuple[str, ...] = target._keys
            self._tag: str | None = target._tag
            self._host: Target | None = target._host if host is None else _as_target(host)
            return
        config, tag = _config_of(target)
        if host is not None:
            config["host"] = host
        self._init_from_config(config, tag)

    def _init_from_config(self, config: dict[str, Any], tag: str | None) -> None:
        kind_name = config.pop("kind", None)
        if not isinstance(kind_name, str):
            raise TargetError(f"a target config needs a 'kind' string, got {kind_name!r}")
        self._kind = get_target_kind(kind_name)
        self._tag = config.pop("tag", None) or tag
        keys = config.pop("keys", None)
        host = config.pop("host", None)
        self._attrs = MappingProxyType(self._kind.check_attrs(config))
        self._keys = _dedupe(keys if keys else self._kind.default_keys)
        self._host = None if host is None else _as_target(host)

    # -- fields ----------------------------------------------------------------------------
    @property
    def kind(self) -> TargetKind:
        return self._kind

    @property
    def attrs(self) -> Mapping[str, Any]:
        """The attributes, defaults filled in (read-only)."""
        return self._attrs

    @property
    def keys(self) -> tuple[str, ...]:
        return self._keys

    @property
    def tag(self) -> str | None:
        """The tag this target was made from, if any."""
        return self._tag

    @property
    def host(self) -> Target | None:
        return self._host

    @property
    def device_type(self) -> str:
        return self._kind.device_type

    def get(self, name: str, default: Any = None) -> Any:
        return self._attrs.get(name, default)

    def with_host(self, host: Any) -> Target:
        return Target(self, host=host)

    def export(self) -> dict[str, Any]:
        """The config dict this target was built from (``Target(t.export()) == t``)."""
        out: dict[str, Any] = {"kind": self._kind.name, "keys": list(self._keys)}
        out.update({k: _plain(v) for k, v in self._attrs.items()})
        if self._tag:
            out["tag"] = self._tag
        if self._host is not None:
            out["host"] = self._host.export()
        return out

    # -- identity --------------------------------------------------------------------------
    def _identity(self) -> tuple[Any, ...]:
        attrs = tuple(sorted((k, _hashable(v)) for k, v in self._attrs.items()))
        return (self._kind.name, attrs, self._keys, self._host)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = Target(other)
            except TargetError:
                return False
        if not isinstance(other, Target):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __str__(self) -> str:
        parts = [self._kind.name]
        if self._keys != self._kind.default_keys:
            parts.append("-keys=" + ",".join(self._keys))
        for key in sorted(self._attrs):
            value = self._attrs[key]
            if isinstance(value, tuple):
                value = ",".join(map(str, value))
            elif isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, Mapping):
                continue  # dict attributes have no text form; see export()
            parts.append(f"-{key}={value}")
        return " ".join(parts)

    def __repr__(self) -> str:
        host = f", host={str(self._host)!r}" if self._host is not None else ""
        tag = f", tag={self._tag!r}" if self._tag else ""
        return f"Target({str(self)!r}{tag}{host})"

    # -- scope -----------------------------------------------------------------------------
    def __enter__(self) -> Target:
        push_scope(_current, self)
        return self

    def __exit__(self, *exc: object) -> None:
        pop_scope(_current, self, "Target")

    @staticmethod
    def current(allow_none: bool = True) -> Target | None:
        """The innermost target of an enclosing ``with target:`` block."""
        stack = _current.get()
        if stack:
            return stack[-1]
        if allow_none:
            return None
        raise TargetError("no target is in scope; use 'with tvm.target.Target(...):'")

    @staticmethod
    def list_kinds() -> list[str]:
        return sorted(KIND_REGISTRY.keys())


def _as_target(value: Any) -> Target:
    return value if isinstance(value, Target) else Target(value)


def _config_of(target: str | Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    if isinstance(target, Mapping):
        return dict(target), None
    if not isinstance(target, str):
        raise TargetError(f"cannot make a Target from {type(target).__name__} {target!r}")
    head, *opts = target.split()
    if not head:
        raise TargetError("empty target string")
    tag_config = get_tag(head)
    if tag_config is not None:
        config, tag = tag_config, head
    elif head in KIND_REGISTRY:
        config, tag = {"kind": head}, None
    else:
        config, tag = _short_name_config(head)
    config.update(_parse_options(head, opts))
    return config, tag


def _short_name_config(name: str) -> tuple[dict[str, Any], str | None]:
    """A tag named by a short name (``h200``), or a kind's bare architecture (``sm_90a``)."""
    tags = find_tags(name)
    if len(tags) == 1:
        return get_tag(tags[0]) or {}, tags[0]
    if tags:
        raise TargetError(f"target {name!r} is ambiguous: it names the tags "
                          f"{', '.join(map(repr, sorted(tags)))}; use one of them")
    kinds = [k for k in KIND_REGISTRY.values()
             if k.arch_pattern and re.fullmatch(k.arch_pattern, name)]
    if len(kinds) == 1:
        return {"kind": kinds[0].name, kinds[0].arch_attr: name}, None
    if kinds:
        options = ", ".join(f"'{k.name} -{k.arch_attr}={name}'" for k in kinds)
        raise TargetError(f"target {name!r} is ambiguous: it is an architecture of target kinds "
                          f"{', '.join(repr(k.name) for k in kinds)}; use one of {options}")
    raise TargetError(_unknown_name_message(name))


def _parse_options(head: str, opts: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for opt in opts:
        if not opt.startswith("-") or "=" not in opt:
            raise TargetError(f"target {head!r}: option {opt!r} must look like -name=value")
        key, _, value = opt.lstrip("-").partition("=")
        out[key] = tuple(v for v in value.split(",") if v) if key == "keys" else value
    return out


def _unknown_name_message(name: str) -> str:
    # A tag's vendor prefix or a kind name may identify the backend that would provide it.
    what = "target tag" if "/" in name else "target kind"
    hint = missing_message(what, name)
    if hint is not None:
        return hint
    kinds = ", ".join(sorted(KIND_REGISTRY.keys())) or "none"
    hint = did_you_mean(name, [*KIND_REGISTRY.keys(), *TAG_REGISTRY.keys()],
                        spellings={t: suggestion_names(t) for t in TAG_REGISTRY})
    return (
        f"unknown target {name!r}: no target kind or tag of that name is registered"
        f"{'; ' + hint if hint else ''} (kinds: {kinds}; {len(TAG_REGISTRY)} tags, see "
        "tvm.target.list_tags())"
    )


def _dedupe(keys: Any) -> tuple[str, ...]:
    if isinstance(keys, str):
        keys = keys.split(",")
    return tuple(dict.fromkeys(str(k) for k in keys))


def _hashable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _current_kind() -> str | None:
    current = Target.current()
    return None if current is None else current.kind.name


set_target_kind_source(_current_kind)  # layouts' fusion rules read the current target's kind
