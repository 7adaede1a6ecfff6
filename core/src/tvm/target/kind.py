"""Target kinds: what a backend compiles for, with the attributes a target of that kind takes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .._hints import missing_message
from .._registry import Registry
from .._suggest import did_you_mean
from ..error import TargetError

__all__ = [
    "KIND_REGISTRY",
    "RESERVED_ATTRS",
    "Attr",
    "TargetKind",
    "get_target_kind",
    "list_target_kinds",
    "register_target_kind",
]

_MISSING: Any = object()
# Fields of a target config that are not kind attributes.
RESERVED_ATTRS = frozenset({"kind", "keys", "host", "tag"})


@dataclass(frozen=True)
class Attr:
    """One attribute of a target kind: its type, default (optional) and a line of help.

    ``type`` is ``str``, ``int``, ``float``, ``bool``, ``tuple`` or ``dict``. Lists given by
    users are stored as tuples; ints are accepted for floats; bools are not ints here.
    """

    type: type
    default: Any = _MISSING
    doc: str = ""

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    def convert(self, kind: str, name: str, value: Any) -> Any:
        """Check ``value`` against the type (parsing strings from ``-name=value`` options)."""
        if isinstance(value, str) and self.type is not str:
            value = _parse_text(self.type, value)
        if self.type in (tuple, list) and isinstance(value, (list, tuple)):
            return tuple(value)
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if self.type is int and isinstance(value, bool):
            raise TargetError(f"target kind {kind!r}: attribute {name!r} must be int, got bool")
        if self.type is dict and isinstance(value, Mapping):
            return MappingProxyType(dict(value))
        if not isinstance(value, self.type):
            raise TargetError(
                f"target kind {kind!r}: attribute {name!r} must be {self.type.__name__}, "
                f"got {type(value).__name__} {value!r}"
            )
        return value


def _parse_text(typ: type, text: str) -> Any:
    if typ is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        return text
    if typ in (tuple, list):
        return tuple(t for t in text.split(",") if t)
    try:
        return typ(text)
    except (TypeError, ValueError):
        return text  # the isinstance check reports it


@dataclass(frozen=True)
class TargetKind:
    """A kind of target, registered by the backend that compiles for it.

    ``attrs`` maps attribute names to :class:`Attr` (or a bare type, or ``(type, default)``).
    ``default_keys`` are the target's keys when the config gives none (``("cuda", "gpu")``;
    the kind name when empty). ``device_type`` names the device the code runs on (``"cpu"``,
    ``"cuda"``, ``"trn"``, ``"metal"``). ``validate(attrs) -> attrs | None`` runs after defaults
    are filled; it may return canonicalised attrs or raise :class:`~tvm.error.TargetError`.

    ``vector_bytes`` is the width of the device's widest vector register (64 on AVX-512, 16
    for a GPU's 128-bit loads); 0 when the kind does not say (core assumes 64). A vectorised
    loop far wider than that is compiled in chunks of that width, with a warning.

    ``arch_attr`` and ``arch_pattern`` (a regular expression) let a bare architecture name stand
    for a target: with ``arch_attr="arch", arch_pattern=r"sm_[0-9]+a?"``, ``Target("sm_90a")`` is
    ``Target({"kind": name, "arch": "sm_90a"})``.
    """

    name: str
    attrs: Mapping[str, Any] = field(default_factory=dict)
    default_keys: tuple[str, ...] = ()
    device_type: str = "cpu"
    validate: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
    doc: str = ""
    arch_attr: str = ""
    arch_pattern: str = ""
    vector_bytes: int = 0

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("a target kind needs a non-empty name")
        schema = {}
        for key, spec in dict(self.attrs).items():
            if key in RESERVED_ATTRS:
                raise ValueError(f"target kind {self.name!r}: attribute {key!r} is reserved")
            schema[key] = _as_attr(spec)
        if bool(self.arch_attr) != bool(self.arch_pattern) or (
                self.arch_attr and self.arch_attr not in schema):
            raise ValueError(f"target kind {self.name!r}: arch_attr must name one of its "
                             "attributes and come with an arch_pattern")
        object.__setattr__(self, "attrs", MappingProxyType(schema))
        object.__setattr__(self, "default_keys", tuple(self.default_keys) or (self.name,))

    def check_attrs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults filled in, types checked, then ``validate``; unknown attributes raise."""
        unknown = sorted(set(given) - set(self.attrs))
        if unknown:
            allowed = ", ".join(sorted(self.attrs)) or "none"
            raise TargetError(
                f"target kind {self.name!r} has no attribute {unknown[0]!r}; "
                f"allowed: {allowed} (and keys, host, tag)"
            )
        out: dict[str, Any] = {}
        for key, attr in self.attrs.items():
            if key in given:
                out[key] = attr.convert(self.name, key, given[key])
            elif attr.has_default:
                out[key] = attr.default
        if self.validate is not None:
            out = self._run_validate(out)
        return out

    def _run_validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            result = self.validate(dict(attrs))  # type: ignore[misc]
        except TargetError:
            raise
        except Exception as err:
            raise TargetError(f"invalid target of kind {self.name!r}: {err}") from err
        return attrs if result is None else dict(result)


def _as_attr(spec: Any) -> Attr:
    if isinstance(spec, Attr):
        return spec
    if isinstance(spec, type):
        return Attr(spec)
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], type):
        return Attr(spec[0], spec[1])
    raise TypeError(
        f"attribute schema entry {spec!r}: use Attr(type, default), type or (type, default)"
    )


KIND_REGISTRY: Registry[str, TargetKind] = Registry("target kind", warn_on_override=True)


def register_target_kind(kind: TargetKind, *, override: bool = False) -> TargetKind:
    """Register ``kind`` (owned by the backend being loaded); returns it."""
    if not isinstance(kind, TargetKind):
        raise TypeError(f"register_target_kind expects a TargetKind, got {type(kind).__name__}")
    return KIND_REGISTRY.register(kind.name, kind, override=override)


def get_target_kind(name: str) -> TargetKind:
    """The registered kind ``name``; a :class:`TargetError` with an install hint otherwise."""
    kind = KIND_REGISTRY.get(name)
    if kind is None:
        raise TargetError(_unknown_kind_message(name))
    return kind


def list_target_kinds() -> dict[str, TargetKind]:
    return dict(KIND_REGISTRY.items())


def _unknown_kind_message(name: str) -> str:
    hint = missing_message("target kind", name)
    if hint is not None:
        return hint
    known = ", ".join(sorted(KIND_REGISTRY.keys())) or "none"
    hint = did_you_mean(name, KIND_REGISTRY.keys())
    return f"unknown target kind {name!r}; {hint + ' ' if hint else ''}registered kinds: {known}"
