"""Loading backends: import, check, register transactionally, publish; and autoload.

One lock serialises every load, so a backend that many threads load at once registers once.
A load is a transaction (``tvm._registry.transaction``): if any hook raises, everything the
backend registered is removed again, its aliases are withdrawn, it leaves the plugin manager
and it is recorded as failed with the reason.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .. import _hints, _logging, _registry, error
from ..error import BackendError, BackendNotInstalledError
from ..plugin import PLUGIN_API_VERSION, BackendInfo, api_range_allows
from ..plugin import _spec as _plugin_spec
from ..plugin import manager as _manager
from . import _aliases, _discovery
from ._hooks import _call_own, _hook_names_of, _publish, _run_registration_hooks
from ._loader_state import _LOCK as _LOCK
from ._loader_state import (
    AVAILABLE,
    BUILTIN_BACKENDS,
    CORE_DISTRIBUTION,
    DISABLED,
    FAILED,
    INCOMPATIBLE,
    LOADED,
    BackendState,
    _core_version,
    _describe,
    _exc,
    _fail,
    _reraise_interrupt,
    _state,
    builtin_distribution,
    discovered,
)

# names read through this module (by _status, contract and the tests)
from ._loader_state import NOT_INSTALLED as NOT_INSTALLED
from ._loader_state import _Loader as _Loader
from ._loader_state import _set_loader as _set_loader
from ._loader_state import loaded_names as loaded_names
from ._selection import Selection, parse_selection

__all__ = [
    "BackendState",
    "builtin_distribution",
    "discovered",
    "ensure_builtin_backends",
    "install_hint_for_backend",
    "is_loaded",
    "load",
    "load_all",
    "load_or_register",
    "register_plugin",
]


# -- public API -------------------------------------------------------------------------------


def is_loaded(name: str) -> bool:
    """Whether backend ``name`` is loaded."""
    backend = discovered().get(name)
    return (backend is not None and backend.state == LOADED) or name in _SEED_PACKAGES


#: backends loaded through the seed's contract (a ``tvm.backend.<name>`` package already in
#: ``sys.modules`` with a ``register_backend()``): name -> that package
_SEED_PACKAGES: dict[str, ModuleType] = {}


def _load_seed_package(name: str) -> None:
    """The seed's load contract for a name no entry point provides: the package
    ``tvm.backend.<name>`` in ``sys.modules`` is published as ``tvm.tirx.<name>`` (with its
    submodules) before its ``register_backend()`` runs, once. If the hook raises, what it
    registered and the publication are undone. Returns None, as the seed's ``load`` does."""
    if name in _SEED_PACKAGES:
        return None
    module_name = f"tvm.backend.{name}"
    module = sys.modules.get(module_name)
    if module is None or _aliases.ALIASES.get(name) is not None:
        raise BackendNotInstalledError(
            f"Cannot load TVM backend {name!r}: expected Python package {module_name!r}. "
            f"Install the backend package or check the backend name: "
            f"{_not_installed_message(name)}")
    register = getattr(module, "register_backend", None)
    if register is None:
        raise AttributeError(f"Backend package {module_name!r} has no register_backend()")
    own = {k: v for k, v in sys.modules.items()
           if k == module_name or k.startswith(module_name + ".")}
    with _registry.core_scope():
        _aliases.ALIASES.register(name, module_name)
    _aliases.publish(name, module)
    _SEED_PACKAGES[name] = module
    try:
        with _registry.transaction(name):
            register()
        for key, sub in list(sys.modules.items()):  # its submodules under tvm.tirx too
            if key.startswith(module_name + "."):
                sys.modules["tvm.tirx." + key[len("tvm.backend."):]] = sub
                # the seed's alias is a proxy naming the module it stands for; ours is the
                # module itself, which names itself
                if "__tvm_backend_module__" not in vars(sub):
                    sub.__tvm_backend_module__ = sub  # type: ignore[attr-defined]
    except BaseException:
        del _SEED_PACKAGES[name]
        _aliases.unpublish(name, module)
        sys.modules.update(own)  # the package itself stays importable, as it was
        with _registry.core_scope():
            _aliases.ALIASES.unregister(name)
        raise
    return None


def load(name: str) -> ModuleType | None:
    """Load backend ``name`` (and the backends it requires first); idempotent and thread-safe.

    Returns the backend's package (what ``tvm.backend.<name>`` names), or None while the
    backend's plugin module is still being imported further up the stack (it then loads once
    that import has finished: :func:`_wait_for_import`). Raises
    :class:`~tvm.error.BackendNotInstalledError` (an ImportError) naming the pip distribution
    when it is not installed, and :class:`~tvm.error.BackendError` when it failed to load or is
    incompatible (the same error again on later calls).
    """
    with _LOCK:
        backend = discovered().get(name)
        if backend is None:
            _load_seed_package(name)
            return None
        if backend.state not in (AVAILABLE, DISABLED):
            return _result_of(backend)
        if name in _state().loading:
            cycle = " -> ".join([*_state().loading[_state().loading.index(name) :], name])
            raise BackendError(f"backends require each other in a cycle: {cycle}")
        _state().loading.append(name)
        try:
            _load_one(backend)
        finally:
            _state().loading.remove(name)
        if name in _state().waiting:
            return None  # its plugin module is mid-import: it loads when that has finished
        return _result_of(backend)


#: the host backend's entry point as tvm-core's ``pyproject.toml`` declares it (group
#: ``tvm.backends``): a source checkout has no installed metadata to read it from, so
#: :func:`ensure_builtin_backends` loads this copy, the way every backend is loaded (the loader
#: names no backend module in its code: ``tvm.host`` is a layer above ``tvm.backend``)
HOST_ENTRY_POINT = _discovery.EntryPointInfo("c", "tvm.host.plugin", "tvm-core", "")


def ensure_builtin_backends() -> None:
    """Make sure the host backend is loaded (a source checkout has no entry point for it)."""
    if is_loaded("c"):
        return
    HOST_ENTRY_POINT.load().register_backend()


def load_all() -> list[str]:
    """Load every installed backend whatever ``TVM_BACKENDS`` says; return the names that failed.

    Failures do not raise here (``load(name)`` does); each one warns, as at ``import tvm``.
    """
    failed = []
    for name in _load_order(discovered()):
        try:
            load(name)
        except (BackendError, ImportError) as err:
            failed.append(name)
            _warn(discovered()[name], err)
    return failed


def register_plugin(plugin: Any, name: str, *, distribution: str = "") -> ModuleType | None:
    """Load an in-process plugin object (a module or any object with hooks) as backend ``name``.

    For notebooks and tests: it goes through exactly the path of an installed backend.
    """
    dist = distribution or f"<in-process plugin {name}>"
    if name in BUILTIN_BACKENDS and dist != CORE_DISTRIBUTION:
        raise BackendError(f"backend name {name!r} belongs to tvm-core's built-in backend; "
                           "choose another name")
    ep = _discovery.EntryPointInfo(name, getattr(plugin, "__name__", name), dist, "", obj=plugin)
    with _LOCK:
        backends = discovered()
        existing = backends.get(name)
        if existing is not None and existing.entry.obj is not plugin:
            raise BackendError(
                f"backend {name!r} is already provided by {existing.distribution}; "
                "choose another name"
            )
        if existing is None:
            backends[name] = BackendState(name, ep)
    return load(name)


def load_or_register(name: str, plugin: ModuleType, *, distribution: str,
                     requires: tuple[str, ...] = ()) -> ModuleType | None:
    """The body of every backend's ``register_backend()`` (the seed's contract; idempotent).

    Loads backend ``name`` through its entry point when its distribution is installed, else (a
    source checkout on ``PYTHONPATH``) registers its hooks module ``plugin`` in-process; the
    backends it ``requires`` load first, each through its entry point, which for one not
    installed is read from its checkout's ``pyproject.toml``. Returns the backend's package.
    """
    if name in discovered():  # installed, or registered in-process already
        result = load(name)
    else:
        for dep in requires:  # installed, or declared by its checkout: load its entry point
            if dep not in discovered() and (ep := _discovery.source_entry_point(dep)):
                discovered().setdefault(dep, BackendState(dep, ep))
            load(dep)
        result = register_plugin(plugin, name, distribution=distribution)
    return result if result is not None else sys.modules.get(plugin.__package__ or "")


def _autoload() -> None:
    """Load the backends selected by ``TVM_BACKENDS``; called once at the end of ``import tvm``.

    Backends shipped in tvm-core (the host backend ``c``) always load. A backend that fails is
    skipped with one warning naming its distribution; with ``TVM_BACKENDS_STRICT=1`` the first
    problem raises :class:`~tvm.error.BackendError` instead.
    """
    strict = _strict()
    problems: list[tuple[BackendState | None, BaseException]] = []
    with _LOCK:
        if _state().autoloaded:
            return
        _state().autoloaded = True
        selection = _read_selection(problems)
        _state().selection = selection
        backends = discovered()
        for name in _load_order(backends):
            backend = backends[name]
            if not backend.builtin and not selection.selects(name):
                backend.state = DISABLED
                backend.reason = f"not selected ({selection.describe()})"
                continue
            try:
                load(name)
            except (BackendError, ImportError) as err:
                problems.append((backend, err))
        for ep, first in _state().duplicates:
            problems.append((None, BackendError(_duplicate_message(ep, first))))
        for missing in sorted(selection.names - set(backends)):
            if selection.mode == "only":
                problems.append(
                    (
                        None,
                        BackendNotInstalledError(
                            f"TVM_BACKENDS names backend {missing!r}, which is not installed: "
                            + _not_installed_message(missing)
                        ),
                    )
                )
    if strict and problems:
        raise BackendError(
            "TVM_BACKENDS_STRICT=1 and backends could not be loaded:\n"
            + "\n".join(f"  {_describe(b)}: {err}" for b, err in problems)
        ) from problems[0][1]
    for failed, problem in problems:
        _warn(failed, problem)


# -- loading one backend ----------------------------------------------------------------------


# A backend whose import and registration take longer than this is named in a warning.
SLOW_BACKEND_S = 1.0


def _load_one(backend: BackendState) -> None:
    start = time.perf_counter()
    _load_one_timed(backend)
    elapsed = time.perf_counter() - start
    _logging.log(__name__, 20, "backend %s (%s): %s in %.1f ms", backend.name,
                 _describe(backend), backend.state, elapsed * 1e3)
    if backend.import_s + backend.register_s > SLOW_BACKEND_S:
        error.warn(f"tvm: backend {backend.name!r} ({_describe(backend)}) took "
                   f"{backend.import_s + backend.register_s:.1f} s to load (import "
                   f"{backend.import_s:.1f} s, registration {backend.register_s:.1f} s), which "
                   "`import tvm` waits for; `python -m tvm backends --timings` shows every "
                   f"backend's, and TVM_BACKENDS=-{backend.name} skips it", error.BackendWarning)


def _load_one_timed(backend: BackendState) -> None:
    if backend.entry.obj is None and _still_importing(backend.entry.module_name):
        _wait_for_import(backend)
        return
    if backend.name in _state().waiting:
        _state().waiting.remove(backend.name)
    _registry.owner_labels[backend.name] = backend.entry.distribution or backend.name
    backend.undo = []
    with _registry.plugin_load(backend.name, _packages_of(backend), backend.undo):
        _import_and_register(backend)
    if backend.state != LOADED:  # what its import registered before it failed
        with _registry._lock:
            for step in reversed(backend.undo):
                step()
        backend.undo.clear()


def _packages_of(backend: BackendState) -> tuple[str, ...]:
    """The top-level package of a backend's plugin module (whose code registers as it)."""
    top = backend.entry.module_name.partition(".")[0]
    return () if top in ("", "tvm", "__main__") else (top,)


def _import_and_register(backend: BackendState) -> None:
    start = time.perf_counter()
    try:
        plugin = backend.entry.load()
    except BaseException as err:  # SystemExit and the like too: a plugin must not end tvm
        _reraise_interrupt(err)
        _fail(backend, FAILED, f"importing {backend.entry.value!r} raised {_exc(err)}", err)
        return
    finally:
        backend.import_s = time.perf_counter() - start
    backend.plugin = plugin
    has_hooks = bool(_hook_names_of(plugin))
    legacy = getattr(plugin, "register_backend", None)
    if not has_hooks and not callable(legacy):
        _fail(
            backend,
            FAILED,
            f"module {backend.entry.value!r} defines no tvm_* hooks and no register_backend()",
            None,
        )
        return
    if not _check_info(backend, plugin if has_hooks else None):
        return
    if not _load_requirements(backend):
        return
    start = time.perf_counter()
    _register(backend, plugin, None if has_hooks else legacy)
    backend.register_s = time.perf_counter() - start


def _still_importing(module_name: str) -> bool:
    """Whether ``module_name`` is being imported right now, lower on the stack: a backend's
    plugin module that imports tvm, imported before tvm (``from tvm_backend_cuda.plugin import
    register_backend`` as the first line, the seed's contract). Its hooks do not exist yet."""
    spec = getattr(sys.modules.get(module_name), "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _wait_for_import(backend: BackendState) -> None:
    """Leave ``backend`` available until its plugin module has finished importing: its
    ``register_backend()``, ``tvm.backend.load(name)`` or the first registry lookup that misses
    after that loads it (:func:`_load_waiting`)."""
    backend.reason = (f"its plugin module {backend.entry.module_name} was still being imported "
                      "when tvm loaded its backends; it loads once that import has finished")
    if backend.name not in _state().waiting:
        _state().waiting.append(backend.name)
    _registry.set_miss_handler(_load_waiting)


def _load_waiting() -> bool:
    """Load the waiting backends whose plugin module has finished importing; True when one
    loaded (the registry lookup that called this tries again). A failure warns (raises with
    ``TVM_BACKENDS_STRICT=1``), as at ``import tvm``."""
    with _LOCK:
        backends = discovered()
        ready = [n for n in _state().waiting
                 if not _still_importing(backends[n].entry.module_name)]
        for name in ready:
            _state().waiting.remove(name)
        if not _state().waiting:
            _registry.set_miss_handler(None)
    loaded = False
    for name in ready:
        try:
            load(name)
            loaded = True
        except (BackendError, ImportError) as err:
            if _strict():
                raise
            _warn(backends[name], err)
    return loaded


def _check_info(backend: BackendState, plugin: Any) -> bool:
    entry = backend.entry
    try:
        info = _call_info(plugin) if plugin is not None else None
        info = info or BackendInfo(name=backend.name)
        if not isinstance(info, BackendInfo):
            raise TypeError(f"tvm_backend_info returned {type(info).__name__}, not BackendInfo")
        info = dataclasses.replace(
            info,
            version=info.version or entry.version,
            distribution=info.distribution or entry.distribution,
        )
    except BaseException as err:
        _reraise_interrupt(err)
        _fail(backend, FAILED, f"tvm_backend_info raised {_exc(err)}", err)
        return False
    backend.info = info
    _registry.owner_labels[backend.name] = info.distribution or backend.name
    if info.name != backend.name:
        _fail(
            backend,
            FAILED,
            f"its entry point is named {backend.name!r} but tvm_backend_info "
            f"names it {info.name!r}; the two must match",
            None,
        )
        return False
    if not api_range_allows(info.api_range, PLUGIN_API_VERSION):
        core_version = _core_version()
        _fail(
            backend,
            INCOMPATIBLE,
            f"{info.distribution} {info.version} supports plugin API {info.api_range!r}, but "
            f"tvm-core {core_version} provides plugin API {PLUGIN_API_VERSION}; install a "
            f"version of {info.distribution} made for this tvm-core",
            None,
        )
        return False
    return True


def _call_info(plugin: Any) -> BackendInfo | None:
    # Called directly, before the plugin joins the manager: an incompatible backend never does.
    if "tvm_backend_info" in _hook_names_of(plugin):
        return plugin.tvm_backend_info()
    return None


def _load_requirements(backend: BackendState) -> bool:
    assert backend.info is not None
    for dep in backend.info.requires:
        try:
            load(dep)
        except (BackendError, ImportError) as err:
            _fail(
                backend,
                FAILED,
                f"it requires backend {dep!r}, which could not be loaded: {err}",
                err,
            )
            return False
    return True


def _register(backend: BackendState, plugin: Any, legacy: Callable[[], Any] | None) -> None:
    pm = _manager.get_plugin_manager()
    info = backend.info
    assert info is not None
    registered = False
    try:
        with _registry.transaction(backend.name, backend.undo), \
                _registry.allow_overrides(info.overrides):
            if legacy is None:
                unknown = _manager.unknown_hooks(plugin)
                if unknown:
                    raise BackendError(
                        f"it implements {', '.join(unknown)}, which no hook spec of plugin API "
                        f"{PLUGIN_API_VERSION} defines (known: {', '.join(_manager.hook_names())})"
                    )
                pm.register(plugin, name=backend.name)
                registered = True
                _publish(backend, _call_own(pm, plugin, "tvm_module_aliases"))
                _run_registration_hooks(pm, plugin)
                # Dispatch variants register on first use (their modules are the heaviest part
                # of a backend); a failure then undoes the whole backend like one now would.
                _registry.defer(backend.name,
                                lambda: _register_dispatch(backend, pm, plugin),
                                on_error=lambda err: _failed_later(backend, plugin, err))
            else:
                _publish(backend, [])
                legacy()
    except BaseException as err:
        _withdraw(backend, plugin if registered else None)
        _reraise_interrupt(err)
        _fail(backend, FAILED, f"registration raised {_exc(err)}", err)
        return
    backend.state = LOADED
    backend.reason = ""


def _register_dispatch(backend: BackendState, pm: Any, plugin: Any) -> None:
    start = time.perf_counter()
    try:
        _call_own(pm, plugin, "tvm_register_dispatch")
    finally:
        backend.dispatch_s = time.perf_counter() - start


def _failed_later(backend: BackendState, plugin: Any, err: BaseException) -> None:
    """A deferred registration of a loaded backend raised: undo everything the backend
    registered, as a failure while loading would have, and report it (an error with
    ``TVM_BACKENDS_STRICT=1``, else one warning); the caller's work goes on without it."""
    _reraise_interrupt(err)
    with _LOCK:
        steps, backend.undo = backend.undo, []
        with _registry._lock:
            for step in reversed(steps):
                step()
        _withdraw(backend, plugin if _manager.get_plugin_manager().is_registered(plugin) else None)
        _fail(backend, FAILED, f"registering its dispatch variants raised {_exc(err)}", err)
    if _strict():
        raise BackendError(f"backend {backend.name!r} ({_describe(backend)}): "
                           f"{backend.reason}") from err
    _warn(backend, err)


def _withdraw(backend: BackendState, plugin: Any) -> None:
    """Take a backend's plugin (when given) out of the manager and its aliases out of
    ``tvm.backend``/``tvm.tirx``: the part of undoing a registration no registry journals."""
    if plugin is not None:
        _manager.get_plugin_manager().unregister(plugin)
    for alias, package_name in backend.aliases.items():
        _aliases.unpublish(alias, sys.modules.get(package_name))
    backend.aliases.clear()
    _aliases.forget_paths(backend.module_paths)
    backend.module_paths.clear()
    backend.package = None


def _strict() -> bool:
    """Whether ``TVM_BACKENDS_STRICT`` turns backend problems into errors."""
    return _registry.strict_backends()


# -- failures and messages --------------------------------------------------------------------


def _duplicate_message(ep: _discovery.EntryPointInfo, first: str) -> str:
    if ep.name in BUILTIN_BACKENDS:
        return (f"{ep.distribution} offers a backend named {ep.name!r}, which is the name of "
                f"{first}'s built-in backend; {ep.distribution} is ignored (rename its "
                "tvm.backends entry point)")
    return (f"two distributions offer a backend named {ep.name!r}: {first} and "
            f"{ep.distribution}; {first} (first on sys.path) is used and {ep.distribution} is "
            "ignored. Uninstall one of them")


def _result_of(backend: BackendState) -> ModuleType | None:
    if backend.state == LOADED:
        return backend.package
    raise BackendError(
        f"backend {backend.name!r} ({_describe(backend)}) was not loaded ({backend.state}): "
        f"{backend.reason}"
    ) from backend.error


def _warn(backend: BackendState | None, err: BaseException) -> None:
    if backend is None:
        message = f"tvm: {err}"
    else:
        message = (
            f"tvm: backend {backend.name!r} from {_describe(backend)} was not loaded ({backend.state}): "
            f"{backend.reason}. TVM_BACKENDS=-{backend.name} skips it; TVM_BACKENDS_STRICT=1 makes "
            "this an error"
        )
    error.warn(message, _warning_class())  # at the user's `import tvm` (or load) line


def _warning_class() -> type[Warning]:
    return getattr(error, "BackendWarning", RuntimeWarning)


def _read_selection(problems: list[tuple[BackendState | None, BaseException]]) -> Selection:
    raw = os.environ.get("TVM_BACKENDS")
    try:
        return parse_selection(raw)
    except ValueError as err:
        problems.append((None, BackendError(f"{err}; loading all installed backends")))
        return Selection("all", raw=raw)


def _load_order(backends: dict[str, BackendState]) -> list[str]:
    # Core's own backends first, then by name: deterministic warnings and registration order.
    return sorted(backends, key=lambda n: (not backends[n].builtin, n))


def _state_of(name: str) -> _hints.BackendView | None:
    backend = discovered().get(name)
    if backend is None:
        return None
    return _hints.BackendView(backend.name, backend.state, backend.reason, _describe(backend))


def _installed() -> list[str]:
    return sorted(discovered())


_hints.set_state_source(_state_of, _installed)
missing_message = _hints.missing_message
install_hint_for_backend = _hints.install_hint_for_backend
_not_installed_message = _hints.not_installed_message

_aliases.install_finder()
_plugin_spec.set_loader(load_or_register)  # BackendSpec.publish's register_backend() calls it
