"""Registries that record who registered each entry, with transactional rollback.

Every registry of the project (ops, script namespaces, target kinds and tags, pipelines,
dispatch variants, module aliases) is a :class:`Registry`. Each entry remembers its *owner*: the
backend whose registration added it ("core" for core itself). The plugin loader runs each
backend's registration inside :func:`transaction`; if any hook raises, every entry that backend
added is removed again and any entry it overrode is restored.

Registrations made where no owner is set (a thread a plugin started, its module's import) are
attributed by the code that makes them: while a backend loads (:func:`plugin_load`), a
registration whose first caller outside tvm is in the backend's package is that backend's (and
rolled back with it); after its load has finished, such a registration is refused with an
error naming the backend. The registries can be read while another thread registers.

Replacing another backend's builder, target kind or target tag warns, naming both
distributions; ``TVM_BACKENDS_STRICT=1`` makes that an error.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, Generic, TypeVar

from .error import BackendWarning, RegistrationConflict, warn

__all__ = [
    "CORE_OWNER",
    "Registry",
    "allow_overrides",
    "current_owner",
    "defer",
    "owner_scope",
    "plugin_load",
    "run_deferred",
    "set_miss_handler",
    "snapshot_all",
    "strict_backends",
    "transaction",
]

K = TypeVar("K")
V = TypeVar("V")
CORE_OWNER = "core"

# "" (the default, also in every new thread): no owner set; current_owner() says core, and
# register() attributes the entry by its caller (_attribute).
_owner: contextvars.ContextVar[str] = contextvars.ContextVar("tvm_registry_owner", default="")
_journal: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "tvm_registry_journal", default=None
)
# Entries the running registration declared it replaces on purpose (BackendInfo.overrides):
# "<what>:<key>" for one registry, or "<key>" for any registry.
_allowed_overrides: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "tvm_registry_allowed_overrides", default=frozenset()
)
_lock = threading.RLock()
# Maps an owner name to a human label (its distribution), used in conflict messages.
owner_labels: dict[str, str] = {CORE_OWNER: "tvm-core"}


def current_owner() -> str:
    """The name of the backend whose registration is running ("core" outside any)."""
    return _owner.get() or CORE_OWNER


def strict_backends() -> bool:
    """Whether ``TVM_BACKENDS_STRICT`` turns backend problems into errors."""
    return os.environ.get("TVM_BACKENDS_STRICT", "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(eq=False)
class _PluginLoad:
    """One backend's load, for attributing registrations that name no owner."""

    owner: str
    packages: tuple[str, ...]
    journal: list[Callable[[], None]]
    finished: bool = False


_plugin_loads: dict[str, _PluginLoad] = {}


@contextlib.contextmanager
def plugin_load(owner: str, packages: tuple[str, ...] | list[str],
                journal: list[Callable[[], None]]) -> Iterator[None]:
    """Backend ``owner`` loads inside this block (the loader wraps its import and hooks).

    A registration with no owner set whose first caller outside tvm is a module of one of
    ``packages`` (``tvm_backend_x``: its module-level code, a thread it started) is the
    backend's: it is journaled in ``journal`` (how the loader undoes a failed load) while the
    block runs, and refused with :class:`~tvm.error.RegistrationConflict` once it is over.
    """
    load = _PluginLoad(owner, tuple(p for p in packages if p), journal)
    with _lock:
        _plugin_loads[owner] = load
    try:
        yield
    finally:
        load.finished = True


def _frame_module(frame: Any) -> str:
    name = frame.f_globals.get("__name__")
    return name if isinstance(name, str) else ""


def _calling_plugin() -> _PluginLoad | None:
    """The backend whose code made the registration running now: the first frame outside tvm
    decides (importlib's frames stop the search, so a core module imported by plugin code
    stays core's)."""
    loads = list(_plugin_loads.values())
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        module = _frame_module(frame)
        if module != "tvm" and not module.startswith("tvm."):
            for load in loads:
                if any(module == p or module.startswith(p + ".") for p in load.packages):
                    return load
            return None
        frame = frame.f_back
    return None


def _attribute(what: str, key: Any) -> tuple[str, list[Callable[[], None]] | None]:
    """(owner, journal) of a registration made where no owner is set."""
    load = _calling_plugin() if _plugin_loads else None
    if load is None:
        return CORE_OWNER, _journal.get()
    if load.finished:
        raise RegistrationConflict(
            f"{what} {key!r}: backend {load.owner!r} ({_label(load.owner)}) registered it from "
            f"thread {threading.current_thread().name!r} after its load had finished; a backend "
            "registers in its tvm_* hooks or while its plugin module is imported, so that a "
            "failed load can be undone whole")
    return load.owner, load.journal


@contextlib.contextmanager
def owner_scope(owner: str) -> Iterator[None]:
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)


@contextlib.contextmanager
def core_scope() -> Iterator[None]:
    """Register as core, outside any backend's transaction (for lazily loaded core entries)."""
    token_owner = _owner.set(CORE_OWNER)
    token_journal = _journal.set(None)
    try:
        yield
    finally:
        _journal.reset(token_journal)
        _owner.reset(token_owner)


@contextlib.contextmanager
def transaction(owner: str, journal: list[Callable[[], None]] | None = None) -> Iterator[None]:
    """Run registrations as ``owner``; on an exception undo all of them and re-raise. With
    ``journal``, the undo steps are kept there, so the caller can undo a committed registration
    later (the loader does when a backend's deferred registration fails)."""
    undo: list[Callable[[], None]] = journal if journal is not None else []
    token_owner = _owner.set(owner)
    token_journal = _journal.set(undo)
    try:
        yield
    except BaseException:
        with _lock:
            for step in reversed(undo):
                step()
            undo.clear()
        raise
    finally:
        _journal.reset(token_journal)
        _owner.reset(token_owner)


@contextlib.contextmanager
def allow_overrides(keys: frozenset[str] | set[str] | tuple[str, ...]) -> Iterator[None]:
    """Treat ``register(key, ...)`` as ``override=True`` for the listed entries.

    The plugin loader wraps a backend's registration in this with the backend's declared
    ``BackendInfo.overrides``, so entries registered by code the backend does not call
    directly with ``override=True`` (ops, namespaces) can still be replaced on purpose.
    """
    token = _allowed_overrides.set(frozenset(keys))
    try:
        yield
    finally:
        _allowed_overrides.reset(token)


@dataclass(eq=False)  # identity: one handed-in registration
class _Deferred:
    owner: str
    run: Callable[[], object]
    overrides: frozenset[str]
    on_error: Callable[[BaseException], None]


# Registrations a backend hands in while it loads but that run on first use: its dispatch
# variants, whose modules cost tens of milliseconds that `import tvm` should not pay.
_deferred: list[_Deferred] = []
_deferred_lock = threading.RLock()
_deferred_running = threading.local()


def defer(owner: str, run: Callable[[], object], *,
          on_error: Callable[[BaseException], None]) -> None:
    """Have :func:`run_deferred` call ``run`` as ``owner`` (in a transaction of its own, with
    the overrides allowed now); ``on_error(exc)`` if it raises. Inside a transaction, the
    deferral is undone with it."""
    item = _Deferred(owner, run, _allowed_overrides.get(), on_error)
    with _deferred_lock:
        _deferred.append(item)

    def discard() -> None:
        with _deferred_lock:
            if item in _deferred:
                _deferred.remove(item)

    record_undo(discard)


def run_deferred() -> None:
    """Run the deferred registrations, in the order they were handed in (once each). Readers
    of a registry that deferred registrations fill (the dispatcher) call this first. The
    ``on_error`` callbacks run after the lock is released (they take the loader's)."""
    if not _deferred:
        return
    failed: list[tuple[_Deferred, BaseException]] = []
    with _deferred_lock:
        if getattr(_deferred_running, "active", False):
            return  # a deferred registration reading the registry it is filling
        _deferred_running.active = True
        try:
            while _deferred:
                item = _deferred.pop(0)
                try:
                    with transaction(item.owner), allow_overrides(item.overrides):
                        item.run()
                except KeyboardInterrupt:
                    _deferred.insert(0, item)  # undone by its transaction; runs next time
                    raise
                except BaseException as err:
                    failed.append((item, err))
        finally:
            _deferred_running.active = False
    for item, error in failed:
        item.on_error(error)


# Called when a lookup misses, while a backend waits for the import of its plugin module to
# finish (the loader's, see tvm.backend._loader._load_waiting); True when it registered
# something, so the lookup tries once more. None (the rule) costs a miss nothing.
_miss_handler: Callable[[], bool] | None = None


def set_miss_handler(handler: Callable[[], bool] | None) -> None:
    """Install (or with None remove) the function a registry lookup calls when it misses."""
    global _miss_handler
    _miss_handler = handler


def _retry_after_miss() -> bool:
    handler = _miss_handler
    return handler is not None and handler()


def snapshot_all() -> Callable[[], None]:
    """Capture every registry's entries; the returned function restores them (for tests)."""
    with _lock:
        saved = [(reg, dict(reg._entries)) for reg in Registry._all]
    with _deferred_lock:
        saved_deferred = list(_deferred)

    def restore() -> None:
        with _deferred_lock:
            _deferred[:] = saved_deferred
        with _lock:
            for reg, entries in saved:
                reg._entries.clear()
                reg._entries.update(entries)
            # Registries created after the snapshot are emptied, not dropped: modules hold them.
            known = {id(reg) for reg, _ in saved}
            for reg in Registry._all:
                if id(reg) not in known:
                    reg._entries.clear()

    return restore


def record_undo(step: Callable[[], None]) -> None:
    """Inside a :func:`transaction`, remember how to undo a change made outside a Registry."""
    journal = _journal.get()
    if journal is not None:
        journal.append(step)


def _label(owner: str) -> str:
    return owner_labels.get(owner, owner)


@dataclass
class Entry(Generic[V]):
    value: V
    owner: str
    overrides: str | None = None  # owner of the entry this one replaced


class Registry(Generic[K, V]):
    """A named mapping whose entries remember their owner.

    ``what`` names one entry in messages ("target kind", "script namespace", ...).
    """

    _all: list[Registry[Any, Any]] = []

    def __init__(self, what: str, *, warn_on_override: bool = False) -> None:
        """``warn_on_override``: a backend replacing another owner's entry warns (an error
        under ``TVM_BACKENDS_STRICT=1``) even when it asked to (builders, kinds, tags)."""
        self.what = what
        self.warn_on_override = warn_on_override
        self._entries: dict[K, Entry[V]] = {}
        Registry._all.append(self)

    # -- writing ---------------------------------------------------------------------------
    def register(self, key: K, value: V, *, override: bool = False, owner: str | None = None) -> V:
        journal = _journal.get()
        if owner is None:
            owner = _owner.get()
            if not owner:
                owner, journal = _attribute(self.what, key)
        with _lock:
            old = self._entries.get(key)
            if old is not None and not override and not self._override_allowed(key):
                if old.owner == owner and old.value is value:
                    return value
                raise RegistrationConflict(
                    f"{self.what} {key!r} is registered twice: by {_label(old.owner)} and by "
                    f"{_label(owner)}; to replace it on purpose, {_label(owner)} passes "
                    f"override=True or lists {self.what + ':' + str(key)!r} in its "
                    f"BackendInfo.overrides"
                )
            if old is not None and self.warn_on_override:
                self._check_override(key, old.owner, owner)
            self._entries[key] = Entry(value, owner, old.owner if old is not None else None)
            self._record_undo(key, old, journal)
        return value

    def _check_override(self, key: K, old_owner: str, owner: str) -> None:
        """A backend replaces another owner's entry: warn, or refuse when strict."""
        if owner == CORE_OWNER or old_owner == owner:
            return  # the user's own script, or a backend replacing its own entry
        message = (f"{_label(owner)} replaces the {self.what} {key!r} of {_label(old_owner)}; "
                   f"every use of {key!r} now gets {_label(owner)}'s")
        if strict_backends():
            raise RegistrationConflict(message + " (refused: TVM_BACKENDS_STRICT=1)")
        warn(f"tvm: {message}; TVM_BACKENDS_STRICT=1 makes this an error", BackendWarning)

    def _override_allowed(self, key: K) -> bool:
        allowed = _allowed_overrides.get()
        return bool(allowed) and (f"{self.what}:{key}" in allowed or str(key) in allowed)

    def unregister(self, key: K) -> None:
        with _lock:
            old = self._entries.pop(key, None)
            if old is not None:
                journal = _journal.get()
                if journal is not None:
                    journal.append(lambda: self._entries.__setitem__(key, old))

    def _record_undo(self, key: K, old: Entry[V] | None,
                     journal: list[Callable[[], None]] | None) -> None:
        if journal is None:
            return

        def undo() -> None:
            if old is None:
                self._entries.pop(key, None)
            else:
                self._entries[key] = old

        journal.append(undo)

    # -- reading ---------------------------------------------------------------------------
    def get(self, key: K, default: Any = None) -> Any:
        entry = self._entries.get(key)
        if entry is None and _miss_handler is not None and _retry_after_miss():
            entry = self._entries.get(key)
        return default if entry is None else entry.value

    def __getitem__(self, key: K) -> V:
        entry = self._entries.get(key)
        if entry is None and _miss_handler is not None and _retry_after_miss():
            entry = self._entries.get(key)
        if entry is None:
            raise KeyError(key)
        return entry.value

    def __contains__(self, key: object) -> bool:
        if key in self._entries:
            return True
        return _miss_handler is not None and _retry_after_miss() and key in self._entries

    def _snapshot(self) -> list[tuple[K, Entry[V]]]:
        """The entries now, copied under the lock: readers iterate this, never the live dict
        another thread may be registering into."""
        with _lock:
            return list(self._entries.items())

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[K]:
        return [k for k, _ in self._snapshot()]

    def values(self) -> list[V]:
        return [e.value for _, e in self._snapshot()]

    def items(self) -> list[tuple[K, V]]:
        return [(k, e.value) for k, e in self._snapshot()]

    def owner_of(self, key: K) -> str | None:
        entry = self._entries.get(key)
        return None if entry is None else entry.owner

    def overridden_owner(self, key: K) -> str | None:
        entry = self._entries.get(key)
        return None if entry is None else entry.overrides

    def keys_owned_by(self, owner: str) -> list[K]:
        return [k for k, e in self._snapshot() if e.owner == owner]

    def __repr__(self) -> str:
        return f"<Registry {self.what}: {len(self._entries)} entries>"
