"""A backend's hooks made from data: :class:`BackendSpec`.

Most hooks only hand over what a backend declares (its kinds, tags, builders, probes). A
backend states that once, as a ``BackendSpec`` in its ``plugin.py``, and publishes the hook
functions made from it::

    SPEC = BackendSpec(
        name="mydev", api_range=">=2,<3", version=__version__, distribution="tvm-backend-mydev",
        kinds=tags.KINDS, tags=tags.TAGS,
        register_ops=op.register_ops,
        builders={"mydev": "tvm_backend_mydev.executable:MyBuilder"},
        default_pipeline={"mydev": "default"},
        demo_cases="tvm_backend_mydev.demo:demo_cases",
    )
    register_backend = SPEC.publish(globals())

The module then has the ``tvm_*`` functions of :mod:`tvm.plugin.hookspec`, marked with
``hookimpl``, for the fields that are set, and nothing else: a backend is still a module of
hooks, and a hook the spec cannot express is written by hand beside it (``SPEC`` leaves that
field unset). A ``"module:attr"`` string names code that is imported on first use, not when
the backend loads (demo kernels, pipelines, probes that need a compiler), so ``import tvm``
stays light without an import inside a function in every backend.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeAlias

from ..error import BackendError
from ._types import BackendInfo
from .hookspec import hookimpl

__all__ = ["BackendSpec", "lazy_package", "resolve_ref"]

#: a callable, or a "module:attr" reference to one, imported when it is first called
Ref: TypeAlias = "Callable[..., Any] | str"


def resolve_ref(ref: Ref) -> Any:
    """The object ``ref`` names: ``"package.module:attr.sub"`` is imported; anything else is
    returned as it is."""
    if not isinstance(ref, str):
        return ref
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{ref!r} is not a 'module:attr' reference")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def lazy_package(package: str, submodules: Iterable[str], names: Mapping[str, str] | None = None
                 ) -> Callable[[str], Any]:
    """The ``__getattr__`` of a backend package whose ``submodules`` import on first use, and
    whose ``names`` (name -> the submodule that defines it) are read from there::

        __getattr__ = lazy_package(__name__, {"codegen", "runtime"},
                                   {"MyRuntimeUnavailable": "runtime"})
    """
    lazy, defined_in = frozenset(submodules), dict(names or {})

    def __getattr__(name: str) -> Any:
        if name in defined_in:  # defined with the submodule it is about
            return getattr(importlib.import_module(f"{package}.{defined_in[name]}"), name)
        if name in lazy:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def _lazy(ref: Ref, backend: str, field_name: str) -> Callable[..., Any]:
    """``ref`` as a callable that imports its target on the first call; a reference that does
    not import is a :class:`~tvm.error.BackendError` naming the backend and the field."""
    if not isinstance(ref, str):
        return ref

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            target = resolve_ref(ref)
        except (ImportError, AttributeError) as err:
            raise BackendError(f"backend {backend!r} names {ref!r} for {field_name}, which could "
                               f"not be imported: {type(err).__name__}: {err}") from err
        return target(*args, **kwargs)

    call.__name__ = call.__qualname__ = ref.rpartition(":")[2].rpartition(".")[2]
    call.__doc__ = f"Imports and calls {ref}."
    return call


def _check_ref(ref: Any, backend: str, field_name: str) -> None:
    """A string reference must read ``module:attr`` (checked when the spec is made; whether it
    imports is found out when it is first used)."""
    if isinstance(ref, str):
        module_name, sep, attr = ref.partition(":")
        if not sep or not module_name or not attr:
            raise ValueError(f"backend {backend!r}: {field_name} {ref!r} is not a 'module:attr' "
                             "reference (e.g. 'tvm_backend_x.demo:demo_cases')")
    elif not callable(ref):
        raise TypeError(f"backend {backend!r}: {field_name} must be a function or a "
                        f"'module:attr' string, not {type(ref).__name__}")


@dataclass(frozen=True)
class BackendSpec:
    """What a backend declares, from which :meth:`hookimpls` makes its hook functions.

    Identity (``tvm_backend_info``): ``name``, ``api_range``, ``version``, ``distribution``,
    ``description``, ``requires``, ``overrides``, as in :class:`~tvm.plugin.BackendInfo`.
    Every other field makes one hook when it is set (``None``, or empty for ``kinds``, makes
    none):

    ======================  ==================================================================
    ``aliases``             ``tvm_module_aliases``: ``{"mydev": "tvm_backend_mydev"}``, plus
                            module paths as data (``{"mydev.target_tags": "..tags"}``)
    ``kinds``               ``tvm_target_kinds``: the :class:`~tvm.target.TargetKind` objects
    ``tags``                ``tvm_target_tags``: ``{"vendor/device": {attrs}}``
    ``script_namespaces``   ``tvm_script_namespaces``: name -> namespace class (made per call)
    ``layout_names``        ``tvm_layout_names``: a function returning the names
    ``register_ops``        ``tvm_register_ops``: the function that registers the ops
    ``register_dispatch``   ``tvm_register_dispatch``: the function (or reference) that
                            registers the dispatch variants
    ``builders``            ``tvm_builders``: kind -> ``"module:Class"`` (or a Builder)
    ``pipelines``           ``tvm_tir_pipelines``: name -> factory (or reference)
    ``default_pipeline``    ``tvm_default_pipeline``: kind -> pipeline name, or a function of
                            the target returning a name or ``None``
    ``device_probes``       ``tvm_device_probes``: pytest marker -> probe (or reference)
    ``device_memory``       ``tvm_device_memory``: device kind -> its memory (or reference)
    ``demo_cases``          ``tvm_demo_cases``: the function (or reference) returning them
    ======================  ==================================================================

    ``delegates`` makes no hook: it names the files of the backend layout
    (:mod:`tvm.testing.layout`) whose stage another backend does, each with that backend
    (``{"codegen.py": "opencl"}``); the layout check accepts them absent.
    """

    name: str
    api_range: str
    version: str = ""
    distribution: str = ""
    description: str = ""
    requires: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    aliases: Mapping[str, str | tuple[str, ...]] | None = None
    kinds: Sequence[Any] = ()
    tags: Mapping[str, Mapping[str, Any]] | None = None
    script_namespaces: Mapping[str, Callable[[], object]] | None = None
    layout_names: Callable[[], dict[str, Any]] | None = None
    register_ops: Callable[[], object] | None = None
    register_dispatch: Ref | None = None
    builders: Mapping[str, Any] | None = None
    pipelines: Mapping[str, Ref] | None = None
    default_pipeline: Mapping[str, str] | Callable[[Any], str | None] | None = None
    device_probes: Mapping[str, Ref] | None = None
    device_memory: Mapping[str, Any] | None = None
    demo_cases: Ref | None = None
    delegates: Mapping[str, str] | None = None
    #: the BackendInfo made from the identity fields (checked when the spec is made)
    info: BackendInfo = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        refs = [("register_dispatch", self.register_dispatch), ("demo_cases", self.demo_cases),
                *((f"pipelines[{k!r}]", v) for k, v in (self.pipelines or {}).items()),
                *((f"device_probes[{k!r}]", v) for k, v in (self.device_probes or {}).items())]
        for field_name, ref in refs:
            if ref is not None:
                _check_ref(ref, self.name, field_name)
        for stage, other in (self.delegates or {}).items():
            if stage in ("plugin.py", "tags.py") or not stage.endswith(".py"):
                raise ValueError(f"backend {self.name!r}: delegates[{stage!r}]: only a stage file "
                                 "of the layout (codegen.py, compiler.py, ...) can be delegated")
            if other not in self.requires:
                raise ValueError(f"backend {self.name!r}: delegates[{stage!r}] names {other!r}, "
                                 f"which is not in requires {self.requires}")
        object.__setattr__(self, "info", BackendInfo(
            name=self.name, version=self.version, api_range=self.api_range,
            requires=tuple(self.requires), distribution=self.distribution,
            overrides=tuple(self.overrides), description=self.description))

    def hookimpls(self) -> dict[str, Callable[..., Any]]:
        """The hook functions this spec makes, by hook name, each marked with ``hookimpl``
        (``globals().update(SPEC.hookimpls())`` in ``plugin.py`` publishes them)."""
        hooks: dict[str, Callable[..., Any]] = {"tvm_backend_info": lambda: self.info}
        if self.aliases is not None:
            hooks["tvm_module_aliases"] = lambda: dict(self.aliases or {})
        if self.kinds:
            hooks["tvm_target_kinds"] = lambda: list(self.kinds)
        if self.tags is not None:
            hooks["tvm_target_tags"] = lambda: dict(self.tags or {})
        if self.script_namespaces is not None:
            namespaces = self.script_namespaces
            hooks["tvm_script_namespaces"] = lambda: {k: make() for k, make in namespaces.items()}
        if self.layout_names is not None:
            hooks["tvm_layout_names"] = self.layout_names
        if self.register_ops is not None:
            hooks["tvm_register_ops"] = self.register_ops
        if self.register_dispatch is not None:
            hooks["tvm_register_dispatch"] = _lazy(self.register_dispatch, self.name,
                                                   "register_dispatch")
        if self.builders is not None:
            hooks["tvm_builders"] = lambda: dict(self.builders or {})
        if self.pipelines is not None:
            factories = {k: _lazy(v, self.name, f"pipelines[{k!r}]")
                         for k, v in self.pipelines.items()}
            hooks["tvm_tir_pipelines"] = lambda: dict(factories)
        if self.default_pipeline is not None:
            hooks["tvm_default_pipeline"] = _default_pipeline(self.default_pipeline)
        if self.device_probes is not None:
            probes = {k: _lazy(v, self.name, f"device_probes[{k!r}]")
                      for k, v in self.device_probes.items()}
            hooks["tvm_device_probes"] = lambda: dict(probes)
        if self.device_memory is not None:
            hooks["tvm_device_memory"] = lambda: dict(self.device_memory or {})
        if self.demo_cases is not None:
            hooks["tvm_demo_cases"] = _lazy(self.demo_cases, self.name, "demo_cases")
        return {name: _as_hook(name, fn, self.name) for name, fn in hooks.items()}

    def publish(self, namespace: dict[str, Any]) -> Callable[[], ModuleType | None]:
        """Put :meth:`hookimpls` into the hooks module whose globals are ``namespace`` and
        return its ``register_backend()`` (the seed's contract)::

            register_backend = SPEC.publish(globals())

        ``register_backend()`` loads the backend (idempotent): through its entry point when
        ``distribution`` is installed, else (a source checkout on ``PYTHONPATH``) as an
        in-process plugin, after the backends it ``requires``.
        """
        namespace.update(self.hookimpls())
        module = str(namespace["__name__"])

        def register_backend() -> ModuleType | None:
            if _LOADER is None:  # tvm.backend installs it; `import tvm` always imports that
                raise BackendError(f"backend {self.name!r}: register_backend() needs tvm's "
                                   "backend loader; import tvm first")
            return _LOADER(self.name, sys.modules[module],
                           distribution=self.distribution, requires=self.requires)

        register_backend.__doc__ = (f"Load backend {self.name!r} (idempotent; the seed's "
                                    "contract): see BackendSpec.publish.")
        return register_backend


#: the backend loader's ``load_or_register`` (a layer above this one): set by tvm.backend when
#: it is imported, so that the plugin layer never imports the loader
_LOADER: Callable[..., ModuleType | None] | None = None


def set_loader(load_or_register: Callable[..., ModuleType | None]) -> None:
    """Install the loader that ``register_backend()`` of :meth:`BackendSpec.publish` calls."""
    global _LOADER
    _LOADER = load_or_register


def _default_pipeline(rule: Mapping[str, str] | Callable[[Any], str | None]
                      ) -> Callable[[Any], str | None]:
    if callable(rule):
        return rule
    by_kind = dict(rule)
    # Broadcast to every backend: a kind that is not ours gets None.
    return lambda target: by_kind.get(target.kind.name)


def _as_hook(name: str, fn: Callable[..., Any], backend: str) -> Callable[..., Any]:
    """A fresh function named ``name`` that calls ``fn``, marked as a hook implementation (a
    fresh one, so that marking it never touches the backend's own function)."""
    hook: Callable[..., Any]
    if name == "tvm_default_pipeline":
        def hook_of_target(target: Any) -> Any:
            return fn(target)
        hook = hook_of_target
    else:
        def hook_of_nothing() -> Any:
            return fn()
        hook = hook_of_nothing
    hook.__name__ = hook.__qualname__ = name
    hook.__doc__ = f"The {name} hook of backend {backend!r}, made from its BackendSpec."
    return hookimpl(hook)
