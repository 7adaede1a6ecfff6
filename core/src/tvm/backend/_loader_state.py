"""What the loader knows: the state names, :class:`BackendState` (one backend), and the
``_Loader`` that holds every backend's state (swapped for a fresh one in tests); and the small
functions that record and describe a backend's failure."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .. import _registry
from ..plugin import BackendInfo
from . import _discovery
from ._selection import Selection

CORE_DISTRIBUTION = _registry.owner_labels[_registry.CORE_OWNER]  # "tvm-core"
# Backends shipped inside tvm-core itself (the host backend "c") always load: they are part of
# core, so TVM_BACKENDS does not select them. This is decided by distribution, not by name.
# Their names (core/pyproject.toml's tvm.backends entry points) belong to tvm-core: no other
# distribution may take them, wherever it sits on sys.path.
BUILTIN_BACKENDS = frozenset({"c"})

_LOCK = threading.RLock()

LOADED, FAILED, DISABLED, INCOMPATIBLE, AVAILABLE, NOT_INSTALLED = (
    "loaded",
    "failed",
    "disabled",
    "incompatible",
    "available",
    "not installed",
)


@dataclass
class BackendState:
    """What the loader knows about one backend."""

    name: str
    entry: _discovery.EntryPointInfo
    state: str = AVAILABLE
    reason: str = ""
    error: BaseException | None = None
    info: BackendInfo | None = None
    plugin: Any = None
    package: ModuleType | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    # the module paths in core's namespace it declared (tvm.tirx.lang.pipeline)
    module_paths: list[str] = field(default_factory=list)
    # how to undo the committed registration (kept for a deferred registration that fails)
    undo: list[Callable[[], None]] = field(default_factory=list)
    # seconds spent importing the plugin module and running its registration hooks
    import_s: float = 0.0
    register_s: float = 0.0
    dispatch_s: float = 0.0

    @property
    def distribution(self) -> str:
        return (self.info.distribution if self.info else "") or self.entry.distribution

    @property
    def version(self) -> str:
        return (self.info.version if self.info else "") or self.entry.version

    @property
    def builtin(self) -> bool:
        return self.entry.distribution == CORE_DISTRIBUTION


class _Loader:
    """All loader state, so tests can swap in a fresh one."""

    def __init__(self, scan: Callable[[], list[_discovery.EntryPointInfo]] | None = None) -> None:
        self.scan = scan or _discovery.scan_entry_points
        self.backends: dict[str, BackendState] | None = None
        self.duplicates: list[tuple[_discovery.EntryPointInfo, str]] = []
        self.loading: list[str] = []
        # backends autoload skipped because their plugin module was mid-import (_wait_for_import)
        self.waiting: list[str] = []
        self.autoloaded = False
        self.selection: Selection = Selection("all")

    def discover(self) -> dict[str, BackendState]:
        if self.backends is None:
            with _LOCK:
                if self.backends is None:
                    self.backends = self._discover()
        return self.backends

    def _discover(self) -> dict[str, BackendState]:
        """One backend per name: the first distribution on sys.path that offers it, except that
        the names of tvm-core's built-in backends are tvm-core's. Every other offer of a taken
        name is a conflict, kept in ``duplicates`` (reported at autoload and by
        ``list_backends``)."""
        found: dict[str, BackendState] = {}
        for ep in self.scan():
            first = found.get(ep.name)
            if ep.name in BUILTIN_BACKENDS and ep.distribution != CORE_DISTRIBUTION:
                self.duplicates.append((ep, CORE_DISTRIBUTION))
            elif first is not None:
                self.duplicates.append((ep, first.entry.distribution))
            else:
                found[ep.name] = BackendState(ep.name, ep)
        return found


_loader = _Loader()


def _state() -> _Loader:
    return _loader


def _set_loader(loader: _Loader) -> _Loader:
    """Install ``loader`` (tests); returns the previous one."""
    global _loader
    old, _loader = _loader, loader
    return old


def discovered() -> dict[str, BackendState]:
    """Installed backends by name (discovery runs once, lazily)."""
    return _loader.discover()


def builtin_distribution() -> str:
    return CORE_DISTRIBUTION


def loaded_names() -> list[str]:
    """The names of the loaded backends, sorted."""
    return sorted(name for name, b in discovered().items() if b.state == LOADED)



def _core_version() -> str:
    for backend in discovered().values():
        if backend.builtin and backend.entry.version:
            return backend.entry.version
    return "(development)"



def _fail(backend: BackendState, state: str, reason: str, err: BaseException | None) -> None:
    backend.state = state
    backend.reason = reason
    backend.error = err



def _describe(backend: BackendState | None) -> str:
    if backend is None:
        return "TVM_BACKENDS"
    version = f" {backend.version}" if backend.version else ""
    return f"{backend.distribution}{version}"



def _exc(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"



def _reraise_interrupt(err: BaseException) -> None:
    """Contain whatever a plugin raises (SystemExit included) except the user's Ctrl-C."""
    if isinstance(err, KeyboardInterrupt):
        raise err

