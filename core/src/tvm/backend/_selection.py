"""``TVM_BACKENDS``: which installed backends load at ``import tvm``."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Selection", "parse_selection"]


@dataclass(frozen=True)
class Selection:
    """``mode`` is ``all`` (unset), ``only`` (``cuda,trn``), ``except`` (``-metal``) or ``none``."""

    mode: str
    names: frozenset[str] = frozenset()
    raw: str | None = None

    def selects(self, name: str) -> bool:
        if self.mode == "all":
            return True
        if self.mode == "none":
            return False
        if self.mode == "only":
            return name in self.names
        return name not in self.names

    def describe(self) -> str:
        return "TVM_BACKENDS unset" if self.raw is None else f"TVM_BACKENDS={self.raw!r}"


def parse_selection(value: str | None) -> Selection:
    """Parse ``TVM_BACKENDS``; raises ValueError for a value that mixes ``name`` and ``-name``."""
    if value is None or value.strip() in ("", "*", "all"):
        return Selection("all", raw=value)
    if value.strip().lower() in ("0", "none"):
        return Selection("none", raw=value)
    items = [item.strip() for item in value.split(",") if item.strip()]
    negated = [item[1:].strip() for item in items if item.startswith("-")]
    plain = [item for item in items if not item.startswith("-")]
    if negated and plain:
        raise ValueError(
            f"TVM_BACKENDS={value!r} mixes names and -names; use 'cuda,trn' to load only those "
            "or '-metal' to load all but those"
        )
    if negated:
        return Selection("except", frozenset(negated), raw=value)
    return Selection("only", frozenset(plain), raw=value)
