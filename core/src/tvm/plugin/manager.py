"""The process-wide pluggy plugin manager of project "tvm"."""

from __future__ import annotations

import inspect
import threading
from typing import Any

import pluggy

from . import hookspec as _hookspec

__all__ = ["TVMPluginManager", "get_plugin_manager", "hook_names", "unknown_hooks"]

_PREFIX = "tvm_"
_lock = threading.Lock()
_pm: TVMPluginManager | None = None


class TVMPluginManager(pluggy.PluginManager):
    """A pluggy manager that also accepts unmarked ``tvm_*`` functions as hook implementations.

    Forgetting ``@hookimpl`` on a correctly named function should not silently drop the hook
    (pytest does the same for ``pytest_*``).
    """

    def __init__(self) -> None:
        super().__init__(_hookspec.PROJECT_NAME)
        self.add_hookspecs(_hookspec)

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(_PREFIX) and inspect.isroutine(getattr(plugin, name)):
            return {}
        return opts


def get_plugin_manager() -> TVMPluginManager:
    """The plugin manager holding every loaded backend (created on first use)."""
    global _pm
    if _pm is None:
        with _lock:
            if _pm is None:
                _pm = TVMPluginManager()
    return _pm


def _reset_plugin_manager() -> TVMPluginManager:
    """Replace the manager with an empty one (tests); returns the new one."""
    global _pm
    with _lock:
        _pm = TVMPluginManager()
    return _pm


def hook_names() -> list[str]:
    """The names of every hook spec, in declaration order."""
    return [n for n in vars(_hookspec) if n.startswith(_PREFIX)]


def unknown_hooks(plugin: Any) -> list[str]:
    """Names of ``tvm_*`` routines of ``plugin`` that match no hook spec (likely typos).

    Functions marked ``@hookimpl(optionalhook=True)`` are allowed: they target a hook that a
    newer core may define.
    """
    known = set(hook_names())
    out = []
    for name in dir(plugin):
        fn = getattr(plugin, name, None)
        if not name.startswith(_PREFIX) or name in known or not inspect.isroutine(fn):
            continue
        opts = getattr(fn, f"{_hookspec.PROJECT_NAME}_impl", None) or {}
        if not opts.get("optionalhook"):
            out.append(name)
    return sorted(out)
