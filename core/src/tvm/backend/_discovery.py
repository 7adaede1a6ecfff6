"""Find installed backends: entry points of group ``tvm.backends``, metadata only.

``importlib.metadata.entry_points`` parses every installed distribution and costs tens of
milliseconds in a big environment, plus ~15 ms to import. Backends are discovered at every
``import tvm``, so :func:`scan_entry_points` reads ``entry_points.txt`` files directly with the
same rules (``sys.path`` order, the first distribution of a name wins) and only reads the
metadata of the few distributions that declare a backend.

A source checkout on ``PYTHONPATH`` has no installed metadata: :func:`source_entry_point` reads
the entry point from the checkout's ``pyproject.toml`` instead, for a backend that another
backend ``requires`` (the loader never finds a backend by a package-naming rule).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["GROUP", "EntryPointInfo", "scan_entry_points", "scan_entry_points_importlib",
           "scan_source_entry_points", "source_entry_point"]

GROUP = "tvm.backends"
_SECTION = f"[{GROUP}]"


@dataclass(frozen=True)
class EntryPointInfo:
    """One ``tvm.backends`` entry point: ``name = module[:attr]`` of a distribution."""

    name: str
    value: str
    distribution: str
    version: str
    # In-process plugins (tvm.backend.register_plugin) carry their object here.
    obj: Any = None

    @property
    def module_name(self) -> str:
        return self.value.partition(":")[0].strip()

    def load(self) -> Any:
        """Import the entry point's module (and attribute, if any)."""
        if self.obj is not None:
            return self.obj
        module_name, _, attr = self.value.partition(":")
        obj = importlib.import_module(module_name.strip())
        for part in filter(None, attr.strip().split(".")):
            obj = getattr(obj, part)
        return obj


def normalize(dist: str) -> str:
    """The comparable form of a distribution name (PEP 503, with '-')."""
    return re.sub(r"[-_.]+", "-", dist).lower()


def scan_entry_points(paths: list[str] | None = None) -> list[EntryPointInfo]:
    """Every ``tvm.backends`` entry point installed on ``paths`` (default ``sys.path``)."""
    seen: set[str] = set()
    found: list[EntryPointInfo] = []
    for entry in sys.path if paths is None else paths:
        try:
            listing = sorted(os.scandir(entry or "."), key=lambda d: d.name)
        except OSError:
            continue
        for item in listing:
            suffix = _meta_suffix(item.name)
            if suffix is None:
                continue
            key = normalize(item.name[: -len(suffix)].partition("-")[0])
            if key in seen:
                continue  # shadowed by a distribution earlier on sys.path
            seen.add(key)
            found.extend(_read_dist(item.path, key))
    return found


def _meta_suffix(name: str) -> str | None:
    for suffix in (".dist-info", ".egg-info"):
        if name.endswith(suffix):
            return suffix
    return None


def _read_dist(path: str, key: str) -> list[EntryPointInfo]:
    try:
        with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    if _SECTION not in text:
        return []
    dist, version = _read_name_version(path, key)
    return [EntryPointInfo(n, v, dist, version) for n, v in _parse_section(text)]


def _parse_section(text: str, *sections: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of the section ``sections`` name (default ``[tvm.backends]``
    of an ``entry_points.txt``)."""
    items: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            inside = line in (sections or (_SECTION,))
            continue
        if inside and "=" in line and not line.startswith(("#", ";")):
            name, _, value = line.partition("=")
            items.append((name.strip(), value.strip()))
    return items


def _read_name_version(path: str, key: str) -> tuple[str, str]:
    name, version = key, ""
    for meta in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(path, meta), encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        break  # end of the header block
                    if line.startswith("Name:"):
                        name = line[5:].strip()
                    elif line.startswith("Version:"):
                        version = line[8:].strip()
            break
        except OSError:
            continue
    return normalize(name), version


#: how a ``pyproject.toml`` spells the group's table (either TOML quote)
_PYPROJECT_SECTIONS = (f'[project.entry-points."{GROUP}"]', f"[project.entry-points.'{GROUP}']")


def scan_source_entry_points(paths: list[str] | None = None) -> list[EntryPointInfo]:
    """The ``tvm.backends`` entry points of the source checkouts on ``paths`` (default
    ``sys.path``): for a folder ``<project>/src`` on the path, those ``<project>/pyproject.toml``
    declares (``[project.entry-points."tvm.backends"]``), with its name and version."""
    found: list[EntryPointInfo] = []
    for entry in sys.path if paths is None else paths:
        try:
            with open(os.path.join(entry or ".", os.pardir, "pyproject.toml"),
                      encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        declared = _parse_section(text, *_PYPROJECT_SECTIONS)
        if not declared:
            continue
        project = {k: v.strip("\"'") for k, v in _parse_section(text, "[project]")}
        dist = normalize(project.get("name", ""))
        found.extend(EntryPointInfo(n, v.strip("\"'"), dist, project.get("version", ""))
                     for n, v in declared)
    return found


def source_entry_point(name: str, paths: list[str] | None = None) -> EntryPointInfo | None:
    """Backend ``name``'s entry point in a source checkout on ``paths`` (the first), or None."""
    return next((ep for ep in scan_source_entry_points(paths) if ep.name == name), None)


def scan_entry_points_importlib() -> list[EntryPointInfo]:
    """The same answer through ``importlib.metadata`` (slower; used to cross-check)."""
    from importlib import metadata  # noqa: PLC0415 - ~15 ms to import; scan_entry_points, which import tvm runs, does without it

    out = []
    for ep in metadata.entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        name = normalize(dist.metadata["Name"]) if dist is not None else ""
        version = dist.version if dist is not None else ""
        out.append(EntryPointInfo(ep.name, ep.value, name, version))
    return out
