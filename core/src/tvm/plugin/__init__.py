"""The plugin API: hook specs, the ``hookimpl`` marker and what backends return.

A backend implements hooks from :mod:`tvm.plugin.hookspec`::

    from tvm.plugin import BackendInfo, hookimpl

    @hookimpl
    def tvm_backend_info():
        return BackendInfo(name="example", api_range=">=2,<3")

or declares what those hooks would return, once, as a :class:`BackendSpec`, and publishes the
hook functions made from it (``globals().update(SPEC.hookimpls())``).

Loading, selection and status live in :mod:`tvm.backend`.
"""

from __future__ import annotations

from . import hookspec  # the module: every hook spec, documented
from ._spec import BackendSpec, resolve_ref
from ._types import PLUGIN_API_VERSION, BackendInfo, DemoCase, DemoResult, api_range_allows
from .hookspec import PROJECT_NAME, hookimpl
from .manager import TVMPluginManager, get_plugin_manager, hook_names

__all__ = [
    "PLUGIN_API_VERSION",
    "PROJECT_NAME",
    "BackendInfo",
    "BackendSpec",
    "DemoCase",
    "DemoResult",
    "TVMPluginManager",
    "api_range_allows",
    "get_plugin_manager",
    "hook_names",
    "hookimpl",
    "hookspec",
    "resolve_ref",
]
