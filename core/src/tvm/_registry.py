"""Registries that record who registered each entry, with transactional rollback.

Every registry of the project (ops, script namespaces, target kinds and tags, pipelines,
dispatch variants, module aliases) is a :class:`Registry`. Each entry remembers its *owner*: the
backend whose registration added it ("core" for core itself). The plugin loader runs each
backend's registration inside :func:`transaction`; if any hook raises, every entry that backend
added is removed again and any entry it overrode is restored.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .error import RegistrationConflict

__all__ = [
    "CORE_OWNER",
    "Registry",
    "allow_overrides",
    "current_owner",
    "defer",
    "owner_scope",
    "run_deferred",
    "set_miss_handler",
    "snapshot_all",
    "transaction",
]

K = TypeVar("K")
V = TypeVar("V")
CORE_OWNER = "core"

_owner: contextvars.ContextVar[str] = contextvars.ContextVar("tvm_registry_owner", default=CORE_OWNER)
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
    return _owner.get()


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

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[K, Entry[V]] = {}
        Registry._all.append(self)

    # -- writing ---------------------------------------------------------------------------
    def register(self, key: K, value: V, *, override: bool = False, owner: str | None = None) -> V:
        owner = owner or current_owner()
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
            self._entries[key] = Entry(value, owner, old.owner if old is not None else None)
            self._record_undo(key, old)
        return value

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

    def _record_undo(self, key: K, old: Entry[V] | None) -> None:
        journal = _journal.get()
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

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[K]:
        return list(self._entries)

    def values(self) -> list[V]:
        return [e.value for e in self._entries.values()]

    def items(self) -> list[tuple[K, V]]:
        return [(k, e.value) for k, e in self._entries.items()]

    def owner_of(self, key: K) -> str | None:
        entry = self._entries.get(key)
        return None if entry is None else entry.owner

    def overridden_owner(self, key: K) -> str | None:
        entry = self._entries.get(key)
        return None if entry is None else entry.overrides

    def keys_owned_by(self, owner: str) -> list[K]:
        return [k for k, e in self._entries.items() if e.owner == owner]

    def __repr__(self) -> str:
        return f"<Registry {self.what}: {len(self._entries)} entries>"
