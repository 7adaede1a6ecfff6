"""Calling one backend's registration hooks: what each returns goes into its registry (target
kinds and tags, script namespaces, layout names, builders, pipelines), and its module aliases
are published. The loader calls these inside the backend's registration transaction."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from ..error import BackendError
from ..ir.layout import SCOPE_LAYOUTS, Axis, ScopeLayout
from ..plugin import manager as _manager
from . import _aliases, contract
from ._loader_state import BackendState, _reraise_interrupt


def _call_own(pm: Any, plugin: Any, hook: str) -> list[Any]:
    """Call ``hook`` on ``plugin`` only (registration hooks are never broadcast)."""
    others = [p for p in pm.get_plugins() if p is not plugin]
    return pm.subset_hook_caller(hook, remove_plugins=others)()


def _run_registration_hooks(pm: Any, plugin: Any) -> None:
    # The registries below live in modules that are not part of `import tvm`: each is imported
    # when the first backend registers something in it.
    for result in _call_own(pm, plugin, "tvm_target_kinds"):
        for kind in _expect(result, (list, tuple), "tvm_target_kinds", "a list of TargetKind"):
            _targets().register_target_kind(kind)
    for result in _call_own(pm, plugin, "tvm_target_tags"):
        for tag, config in _expect(
            result, dict, "tvm_target_tags", "a dict name -> config"
        ).items():
            _targets().register_tag(tag, config)
    for result in _call_own(pm, plugin, "tvm_script_namespaces"):
        namespaces = _expect(result, dict, "tvm_script_namespaces", "a dict name -> namespace")
        if namespaces:
            from ..script.namespace import register_script_namespace  # noqa: PLC0415 - tvm.script (parser, printer, tile primitives: ~30 ms) is not part of import tvm

            for ns_name, namespace in namespaces.items():
                register_script_namespace(ns_name, namespace)
    for result in _call_own(pm, plugin, "tvm_layout_names"):
        _register_layout_names(_expect(result, dict, "tvm_layout_names", "a dict name -> value"))
    _call_own(pm, plugin, "tvm_register_ops")
    for result in _call_own(pm, plugin, "tvm_builders"):
        builders = _expect(result, dict, "tvm_builders", "a dict kind -> Builder or 'module:Class'")
        for kind, builder in builders.items():
            contract.register_builder(kind, builder)
    for result in _call_own(pm, plugin, "tvm_tir_pipelines"):
        pipelines = _expect(result, dict, "tvm_tir_pipelines", "a dict name -> factory")
        if pipelines:
            from ..tirx.compilation_pipeline import register_tir_pipeline  # noqa: PLC0415 - tvm.tirx (it registers the builtin ops) and tvm.target are not part of import tvm

            for pipe_name, factory in pipelines.items():
                register_tir_pipeline(pipe_name, factory)


def _targets() -> ModuleType:
    """``tvm.target``, where backends' target kinds and tags are registered."""
    from .. import target  # noqa: PLC0415 - tvm.target (4 modules, ~3 ms) is not part of import tvm in a source checkout

    return target


def _register_layout_names(names: dict[str, Any]) -> None:
    functions = {}
    for name, value in names.items():
        if isinstance(value, ScopeLayout):  # what a layout string means in a scope
            SCOPE_LAYOUTS.register(value.scope, value.make)
        elif isinstance(value, Axis):
            if value.name != name:
                raise BackendError(f"tvm_layout_names: axis {value.name!r} is listed as {name!r}")
            Axis.register(name, value.kind, scope=value.scope, subscope=value.subscope,
                          fusions=value.fusions, splits=value.splits)
        else:
            functions[name] = value
    if functions:
        from ..tirx.layout import register_layout_name  # noqa: PLC0415 - tvm.tirx (it registers the builtin ops) and tvm.target are not part of import tvm

        for name, value in functions.items():
            register_layout_name(name, value)


def _publish(backend: BackendState, results: list[Any]) -> None:
    """Publish the backend's aliases (hook results, or the default alias)."""
    if results:
        mapping = _expect(results[0], dict, "tvm_module_aliases", "a dict alias -> module name")
    else:
        mapping = {backend.name: _default_package(backend)}
    paths = {alias: value for alias, value in mapping.items() if "." in alias}
    for alias, module_name in mapping.items():
        if alias in paths:
            continue
        package = importlib.import_module(module_name)
        _aliases.check_free(alias, package.__name__)
        _aliases.ALIASES.register(alias, package.__name__)
        _aliases.publish(alias, package)
        backend.aliases[alias] = package.__name__
        if alias == backend.name or backend.package is None:
            backend.package = package
    for path, value in paths.items():  # module paths as data, imported when first asked for
        head = path.partition(".")[0]
        targets = (value,) if isinstance(value, str) else tuple(value)
        if path.startswith(_aliases.CORE_PATH):  # a path in core's namespace (tvm.tirx.lang.x)
            _aliases.check_path_free(path)
            _aliases.SUBMODULES.register(path, targets)
            backend.module_paths.append(path)
            continue
        if head not in backend.aliases:
            raise BackendError(f"tvm_module_aliases: the module path {path!r} is under "
                               f"{head!r}, which is not one of this backend's aliases "
                               f"({', '.join(backend.aliases)}) nor a path in core's "
                               f"namespace ({_aliases.CORE_PATH}...)")
        _aliases.SUBMODULES.register(path, targets)


def _default_package(backend: BackendState) -> str:
    plugin = backend.plugin
    module_name = getattr(plugin, "__name__", None) if isinstance(plugin, ModuleType) else None
    if module_name is None:
        module_name = backend.entry.module_name
    module = sys.modules.get(module_name)
    if module is not None and hasattr(module, "__path__"):
        return module_name
    return module_name.rpartition(".")[0] or module_name


def _expect(value: Any, types: Any, hook: str, what: str) -> Any:
    if value is None:
        return {} if types is dict else []
    if not isinstance(value, types):
        raise TypeError(f"{hook} returned {type(value).__name__}; it must return {what}")
    return value


def _hook_names_of(plugin: Any) -> list[str]:
    pm = _manager.get_plugin_manager()
    names = []
    for attr in dir(plugin):
        if not attr.startswith("tvm_"):
            continue
        try:
            if pm.parse_hookimpl_opts(plugin, attr) is not None:
                names.append(attr)
        except BaseException as err:
            _reraise_interrupt(err)
            continue
    return names
