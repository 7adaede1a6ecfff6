"""``list_backends()``: one record per installed or catalogued backend, and its table."""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from typing import Any

from .. import _hints, _registry
from . import _loader

__all__ = ["BackendRecord", "format_table", "list_backends"]


@dataclass(frozen=True)
class BackendRecord:
    """The status of one backend and what it registered (counted from the registries)."""

    name: str
    distribution: str
    version: str
    state: str  # loaded, failed, disabled, incompatible, available, not installed
    reason: str = ""
    builtin: bool = False
    target_kinds: tuple[str, ...] = ()
    n_tags: int = 0
    namespaces: tuple[str, ...] = ()
    pipelines: tuple[str, ...] = ()
    n_ops: int = 0
    n_dispatch: int = 0
    aliases: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    #: milliseconds spent importing its plugin module, running its registration hooks (both
    #: at ``import tvm``) and registering its dispatch variants (deferred to first use)
    import_ms: float = 0.0
    register_ms: float = 0.0
    dispatch_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_backends() -> list[BackendRecord]:
    """Every installed backend (in load order), then catalogued ones that are not installed."""
    _registry.run_deferred()  # the dispatch variants, so that they are counted (or fail) here
    backends = _loader.discovered()
    records = [_record(backends[name]) for name in _loader._load_order(backends)]
    for ep, first in _loader._state().duplicates:
        records.append(
            BackendRecord(
                ep.name,
                ep.distribution,
                ep.version,
                _loader.FAILED,
                _loader._duplicate_message(ep, first),
            )
        )
    for entry in _hints.CATALOGUE:
        if entry.name not in backends:
            records.append(
                BackendRecord(
                    entry.name,
                    entry.distribution,
                    "",
                    _loader.NOT_INSTALLED,
                    _hints.install_command(entry.distribution),
                    namespaces=(),
                    target_kinds=(),
                )
            )
    return records


def _record(backend: _loader.BackendState) -> BackendRecord:
    name = backend.name
    return BackendRecord(
        name=name,
        distribution=backend.distribution,
        version=backend.version,
        state=backend.state,
        reason=backend.reason,
        builtin=backend.builtin,
        target_kinds=tuple(_owned("tvm.target.kind", "KIND_REGISTRY", name)),
        n_tags=len(_owned("tvm.target.tag", "TAG_REGISTRY", name)),
        namespaces=tuple(_owned("tvm.script.namespace", "NAMESPACES", name)),
        pipelines=tuple(_owned("tvm.tirx.compilation_pipeline", "PIPELINE_MAP", name)),
        n_ops=len(_owned("tvm.ir.op", "OP_REGISTRY", name)),
        n_dispatch=len(
            _owned("tvm.tirx.operator.tile_primitive.dispatcher", "DISPATCH_REGISTRY", name)
        ),
        aliases=tuple(backend.aliases),
        overrides=tuple(_overrides(name)),
        requires=tuple(backend.info.requires) if backend.info else (),
        import_ms=round(backend.import_s * 1e3, 1),
        register_ms=round(backend.register_s * 1e3, 1),
        dispatch_ms=round(backend.dispatch_s * 1e3, 1),
    )


def _owned(module_name: str, attr: str, owner: str) -> list[Any]:
    # A registry whose module was never imported holds nothing, so importing it is not needed.
    registry = getattr(sys.modules.get(module_name), attr, None)
    keys_owned_by = getattr(registry, "keys_owned_by", None)
    if keys_owned_by is None:
        return []
    try:
        return [str(k) if not isinstance(k, str) else k for k in keys_owned_by(owner)]
    except Exception:
        return []


def _overrides(owner: str) -> list[str]:
    out = []
    for registry in _registry.Registry._all:
        for key in registry.keys_owned_by(owner):
            replaced = registry.overridden_owner(key)
            if replaced is not None:
                label = _registry.owner_labels.get(replaced, replaced)
                out.append(f"{registry.what} {key!r} (from {label})")
    return out


_COLUMNS = (
    ("backend", lambda r: r.name + (" *" if r.builtin else "")),
    ("distribution", lambda r: r.distribution),
    ("version", lambda r: r.version or "-"),
    ("state", lambda r: r.state),
    ("kinds", lambda r: ",".join(r.target_kinds) or "-"),
    ("tags", lambda r: str(r.n_tags)),
    ("namespaces", lambda r: ",".join(r.namespaces) or "-"),
    ("pipelines", lambda r: ",".join(r.pipelines) or "-"),
    ("ops", lambda r: str(r.n_ops)),
    ("dispatch", lambda r: str(r.n_dispatch)),
)


_TIMING_COLUMNS = (
    ("import ms", lambda r: _ms(r, r.import_ms)),
    ("register ms", lambda r: _ms(r, r.register_ms)),
    ("dispatch ms", lambda r: _ms(r, r.dispatch_ms)),
)


def _ms(record: BackendRecord, value: float) -> str:
    return f"{value:.1f}" if record.state in ("loaded", "failed") else "-"


def format_table(records: list[BackendRecord], *, timings: bool = False) -> str:
    """A plain-text table of ``records``, with reasons and overrides listed below it;
    ``timings`` adds each backend's import, registration and dispatch-registration time."""
    columns = _COLUMNS + (_TIMING_COLUMNS if timings else ())
    rows = [[title for title, _ in columns]]
    rows += [[get(r) for _, get in columns] for r in records]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = []
    for r in records:
        if r.reason and r.state != "loaded":
            notes.append(f"  {r.name}: {r.reason}")
        for override in r.overrides:
            notes.append(f"  {r.name}: overrides {override}")
    if any(r.builtin for r in records):
        lines.append("(* built into tvm-core: always loaded, whatever TVM_BACKENDS says)")
    if notes:
        lines += ["", "notes:", *notes]
    return "\n".join(lines)
