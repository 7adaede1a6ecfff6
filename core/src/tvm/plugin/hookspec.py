# mypy: disable-error-code="empty-body"
# (hook specs are signatures with docstrings; their bodies are empty on purpose)
"""Every hook a backend can implement, grouped by phase.

A backend is a module named by an entry point in the group ``tvm.backends``::

    [project.entry-points."tvm.backends"]
    example = "tvm_backend_example.plugin"

whose functions implement some of the hooks below, marked with :data:`tvm.plugin.hookimpl`
(an unmarked module-level function whose name is a hook's name counts too). A backend
implements only the hooks it needs; it may accept fewer arguments than a spec lists. Where a
hook only hands over data, :class:`tvm.plugin.BackendSpec` makes it from a declaration.

How the hooks are called
------------------------
* **Identity and registration hooks** are called by the loader (:func:`tvm.backend.load`), once,
  on the loading backend only (never broadcast to other backends), in the order they appear here.
  They run inside one registration transaction: whatever the backend registers is recorded as
  its own, and if any of them raises, everything is removed again and the backend is marked
  failed. They must be cheap and must not import heavy SDKs (numpy, cuda.*, torch).
* **Lowering, testing and demo hooks** are broadcast through the plugin manager to every loaded
  backend (``tvm.plugin.get_plugin_manager().hook.<name>(...)``, keyword arguments only). The
  ``firstresult`` ones stop at the first implementation that returns something other than
  ``None``: a backend answers only for targets that are its own and returns ``None``
  otherwise.

Bump :data:`tvm.plugin.PLUGIN_API_VERSION` when a spec changes incompatibly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ..backend.contract import Builder
    from ..target import Target, TargetKind
    from ._types import BackendInfo, DemoCase

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

PROJECT_NAME = "tvm"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


# =============================================================================================
# Identity and publication (called first, before anything is registered)
# =============================================================================================


@hookspec(firstresult=True)
def tvm_backend_info() -> BackendInfo:
    """Describe the backend: name, version, supported plugin-API range, requirements.

    Called first when the backend loads. Returns a :class:`tvm.plugin.BackendInfo` whose
    ``name`` equals the entry-point name. If ``api_range`` excludes core's
    :data:`~tvm.plugin.PLUGIN_API_VERSION`, loading stops here (state ``incompatible``). Backends
    in ``requires`` are loaded before any registration hook of this one runs; if one of them
    cannot load, neither can this one.

    Optional: without it the backend is named by its entry point, takes its distribution's
    version, accepts every API version and requires nothing. ``firstresult``.
    """


@hookspec
def tvm_module_aliases() -> dict[str, str | tuple[str, ...]]:
    """Return the public aliases of this backend's package: ``{"cuda": "tvm_backend_cuda"}``.

    For each item, ``tvm.backend.<alias>`` and ``tvm.tirx.<alias>`` become that package after
    the load, and ``import tvm.tirx.<alias>.<sub>`` imports its submodules. Without this hook the
    backend name is aliased to the entry-point module's package (the module itself if it is a
    package or a top-level module). Return ``{}`` for no alias.

    A dotted key declares a module path under one of these aliases, as data:
    ``{"cuda.target_tags": "tvm_backend_cuda.tags"}`` makes ``tvm.backend.cuda.target_tags``,
    ``tvm.tirx.cuda.target_tags`` and ``tvm_backend_cuda.target_tags`` that module, imported when
    first asked for; a tuple of module names gives one module with all their public names. The
    seed's module paths are declared this way, without a file for each.

    Called right after :func:`tvm_backend_info` (and after the backends it requires loaded),
    before the registration hooks, so that imports through the aliases work while they run.
    """


# =============================================================================================
# Registration (called once per load, on this backend only, in this order, transactionally)
# =============================================================================================


@hookspec
def tvm_target_kinds() -> list[TargetKind]:
    """Return the target kinds this backend provides (:class:`tvm.target.TargetKind`).

    Each is registered with :func:`tvm.target.register_target_kind`. A kind another backend
    already registered is a conflict unless listed in ``BackendInfo.overrides``.
    """


@hookspec
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    """Return target tags as data: ``{"vendor/device": {"kind": ..., attrs...}}``.

    Called after :func:`tvm_target_kinds`, so tags may use this backend's kinds. Each is
    registered with :func:`tvm.target.register_tag`; a tag name already taken is a conflict
    unless listed in ``BackendInfo.overrides``.
    """


@hookspec
def tvm_script_namespaces() -> dict[str, object]:
    """Return the TVMScript namespaces this backend provides: ``{"cuda": CudaNamespace()}``.

    Each becomes ``T.<name>`` through
    :func:`tvm.script.namespace.register_script_namespace`. A namespace object's attributes
    build calls of the backend's device intrinsics (``T.cuda.atomic_add(...)``).
    """


@hookspec
def tvm_layout_names() -> dict[str, Any]:
    """Return the layout vocabulary this backend adds to :mod:`tvm.tirx.layout`.

    A value that is an :class:`tvm.ir.layout.Axis` (``Axis("TCol", "memory")``) registers that
    axis (its name is the key); any other value (a layout function such as
    ``wg_local_layout``) becomes ``tvm.tirx.layout.<name>``. A
    :class:`tvm.ir.layout.ScopeLayout` (``ScopeLayout("trn.sbuf", trainium_layout)``) says
    what a layout given as a string (``layout="PF"``) means for buffers of its storage scope;
    its key is free. Called after :func:`tvm_script_namespaces`.
    """


@hookspec
def tvm_register_ops() -> None:
    """Register this backend's ops and intrinsics and attach their codegen rules.

    Call :meth:`tvm.ir.Op.register` (``category="device_intrin"``, ``namespace=...``) and
    ``op.set_codegen(kind, rule)`` here. Returns nothing: the registry records the owner.
    """


@hookspec
def tvm_register_dispatch() -> None:
    """Register this backend's tile-primitive dispatch variants.

    Typically imports the backend's ``dispatch`` modules, whose top level calls
    ``tvm.tirx.operator.tile_primitive.register_dispatch(op, kind, variant=...)``. Returns nothing.
    Called on first use (the first dispatch, or ``tvm.backend.list_backends()``), not while the
    backend loads, so ``import tvm`` does not pay for the variant modules; if it raises, the
    whole backend is undone and reported as failed.
    """


@hookspec
def tvm_builders() -> dict[str, Builder | str]:
    """Return the builders of this backend: target kind -> its :class:`tvm.backend.contract.
    Builder`, as a ``"module:Class"`` reference (``{"cuda": "tvm_backend_cuda.executable:
    CudaBuilder"}``, imported on the first build for that kind, so registration stays cheap) or
    an instance.

    A builder declares its frozen options type and three stages (``codegen``: lowered IR to
    source, ``compile``: source to binary, ``load``: binary to executable); ``tvm.compile``
    and ``tvm.runtime.load_module`` run them, and core does the rest once for every backend:
    option parsing, the compile cache, ``TVM_DUMP_DIR`` stage dumps, export and load. Each is
    registered with :func:`tvm.backend.contract.register_builder`; a second builder for a kind
    is a conflict unless listed in ``BackendInfo.overrides``. A builder's module may import the
    backend's own modules at its top; SDKs are imported inside the stages that use them.
    """


@hookspec
def tvm_tir_pipelines() -> dict[str, Any]:
    """Return named pipeline factories: ``{"trn": trn_pipeline}``.

    Each is registered with
    :func:`tvm.tirx.compilation_pipeline.register_tir_pipeline`; a factory is called as
    ``factory(**kwargs)`` by ``get_tir_pipeline(name, **kwargs)`` and returns a
    :class:`tvm.transform.Pipeline` (the older ``(main, finalize_host, finalize_device)`` tuple
    is still read, with ``Pipeline.of``). A name already taken is a
    conflict unless listed in ``BackendInfo.overrides``.
    """


# =============================================================================================
# Lowering (broadcast to every loaded backend)
# =============================================================================================


@hookspec(firstresult=True)
def tvm_default_pipeline(target: Target) -> str | None:
    """Name the pipeline to use for ``target`` when the user names none.

    Called by :func:`tvm.tirx.compilation_pipeline.get_default_tir_pipeline`. Return a name
    registered in ``PIPELINE_MAP`` for targets this backend owns, ``None`` otherwise; with no
    answer core uses ``"default"``. ``firstresult``.
    """


# =============================================================================================
# Testing (broadcast to every loaded backend)
# =============================================================================================


@hookspec
def tvm_device_probes() -> dict[str, Any]:
    """Return the devices this backend can test on: ``{"gpu": probe}``.

    Called by tvm's pytest plugin (:mod:`tvm.testing.plugin`). Each key is a pytest marker
    (``@pytest.mark.gpu``); its probe is a callable taking no arguments that returns ``None``
    when such a device can run tests here, else the reason it cannot (a test with that marker
    is then skipped with the reason). Probes run once per test session, only when a test with
    the marker is collected; they may import the SDK. Not ``firstresult``: when several
    backends probe one marker, the device is usable when any probe says so.
    """


@hookspec
def tvm_device_memory() -> dict[str, Any]:
    """Return the device kinds this backend gives tensor memory on: ``{"cuda": memory}``.

    Called by :func:`tvm.runtime.tensor` for a device that is not the CPU (``tvm.cuda(0)``);
    the first backend naming the kind serves it. Each value (or a ``"module:attr"`` reference
    to it, imported on first use) has the methods of :class:`tvm.runtime.devices.DeviceMemory`:
    ``unavailable(index)`` (None, or why not), ``upload(host, index)`` (a device copy of a
    numpy array that the backend's executables take as an argument) and ``download(data,
    out)``. Not ``firstresult``.
    """


# =============================================================================================
# Main job (broadcast to every loaded backend)
# =============================================================================================


@hookspec
def tvm_demo_cases() -> list[DemoCase]:
    """Return the demo kernels this backend can run on this machine right now.

    Called by ``python -m tvm demo``; the results of all backends are concatenated into one
    table. Return ``[]`` when the hardware or simulator is absent (check cheaply; import SDKs
    inside ``DemoCase.run``, not here). Not ``firstresult``.
    """
