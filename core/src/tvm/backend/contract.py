"""The build contract: what a backend provides so that ``tvm.compile`` can build for its targets.

A backend declares one :class:`Builder` per target kind it compiles for, named by its
``tvm_builders`` hook (``{"mydev": "my_backend.executable:MyBuilder"}``: a ``module:Class``
reference, imported on the first build for that kind, so that ``import tvm`` stays light; a
Builder instance works too). A builder is three stages and an options type::

    class MyBuilder(Builder):
        kind = "mydev"                      # the target kind it builds
        options_type = MyOptions            # frozen dataclass, subclass of Options
        language = "c"                      # the source stage's language (dump file suffix)
        executable_type = MyExecutable      # what load() makes of a binary and its metadata

        def codegen(self, mod, target, options) -> Artifact:   # lowered IR -> source (+ metadata)
        def compile(self, artifact, options) -> bytes:        # source -> binary bytes
        def load(self, binary, metadata, target) -> Executable # (default: executable_type(...))

Core owns everything around the stages, once for every backend (:func:`build`, :func:`load`):

* options: ``tvm.compile(f, target, **options)`` is parsed by :meth:`Options.parse` into the
  builder's options type (one "unknown option" error, type checks, defaults taken from target
  attributes of the same name);
* the compile cache: :meth:`Builder.compile` runs only when the cache has no binary for
  ``(builder, format, source, target, options, compile_key())``; ``TVM_CACHE=0`` and
  ``TVM_CACHE_DIR`` / ``XDG_CACHE_HOME`` apply to every backend alike;
* ``TVM_DUMP_DIR``: every stage (the source, the binary, the metadata) is written there;
* export and load: ``Executable.export_library`` writes the binary and the metadata;
  ``tvm.runtime.load_module`` hands them back to the builder of the file's target kind.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .._registry import Registry
from .._suggest import did_you_mean
from ..error import BackendError, BackendNotInstalledError, CompileError, OptionError, TVMError
from ..runtime import executable as _executable
from ..runtime.cache import cache_key, compile_cache
from . import _loader  # _loader imports this module: its names are read at call time

if TYPE_CHECKING:
    from ..ir.function import IRModule
    from ..runtime.executable import Executable
    from ..target import Target

__all__ = [
    "BUILDERS",
    "Artifact",
    "Binary",
    "Builder",
    "Options",
    "build",
    "find_builder",
    "get_builder",
    "load",
    "register_builder",
]

O = TypeVar("O", bound="Options")  # noqa: E741 - the conventional type-variable name

#: target kind -> the builder of that kind, or its ``"module:Class"`` reference until the first
#: build imports it (entries remember the backend that registered them)
BUILDERS: Registry[str, Builder | str] = Registry("builder", warn_on_override=True)
_RESOLVED: dict[tuple[str, str], Builder] = {}


# =============================================================================================
# Options
# =============================================================================================


def option(default: Any, doc: str, *, key: bool = True) -> Any:
    """A documented option field: ``opt_level: int = option(2, "-O<n> of the C compiler")``.

    ``key=False`` keeps the field out of the cache key (it does not change the binary).
    """
    if isinstance(default, (list, dict, set)):
        raise TypeError("option defaults must be immutable (use a tuple)")
    return field(default=default, metadata={"doc": doc, "key": key})


@dataclass(frozen=True)
class Options:
    """Base of every backend's compile options: a frozen dataclass of documented fields.

    Subclasses add fields with :func:`option`. Every backend has ``cache`` (use the compile
    cache) and ``bounds_check`` (run-time bounds checks, ``tvm.codegen.bounds``).
    """

    cache: bool = option(True, "use the compile cache", key=False)
    bounds_check: bool | None = option(
        None, "check every buffer access (and integer division) at run time: a "
              "BoundsCheckError instead of undefined behaviour. None: TVM_BOUNDS_CHECK or "
              "pass_config={'tir.bounds_check': True} decide")

    @classmethod
    def parse(cls: type[O], target: Target, options: Mapping[str, Any]) -> O:
        """The options of one build: ``options`` (what ``tvm.compile`` got), else the target's
        attribute of the same name, else the field's default. Unknown names and values of the
        wrong type raise :class:`~tvm.error.OptionError`."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - set(fields))
        if unknown:
            close = "; ".join(f"{name!r}: {hint}" for name in unknown
                              if (hint := did_you_mean(name, fields)))
            raise OptionError(
                f"unknown compile option(s) {unknown} for target {target.kind.name!r}; "
                f"known: {', '.join(sorted(fields))} (help: {cls.__module__}."
                f"{cls.__qualname__})" + (f"; {close}" if close else ""))
        hints = _type_hints(cls)
        values: dict[str, Any] = {}
        for name in fields:
            if name in options:
                value = options[name]
            elif name in target.attrs:
                value = target.attrs[name]
            else:
                continue
            values[name] = _convert(hints.get(name, Any), value, name, target.kind.name)
        return cls(**values)

    def key(self) -> dict[str, Any]:
        """The fields that change the binary, as JSON-able data (part of the cache key)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.metadata.get("key", True)}

    @classmethod
    def describe(cls) -> list[tuple[str, str, Any, str]]:
        """``(name, type, default, doc)`` of every option, for help texts and the docs."""
        hints = _type_hints(cls)
        return [(f.name, _type_name(hints.get(f.name, Any)), f.default, f.metadata.get("doc", ""))
                for f in dataclasses.fields(cls)]


def _type_hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _convert(tp: Any, value: Any, name: str, kind: str) -> Any:
    """Check ``value`` against the field type ``tp`` (``int``, ``str | None``, ``tuple[str,
    ...]``, ...); lists become tuples."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        errors = []
        for arm in typing.get_args(tp):
            try:
                return _convert(arm, value, name, kind)
            except OptionError as err:
                errors.append(err)
        raise errors[-1]
    if tp is type(None):
        if value is None:
            return None
        raise _bad(name, kind, "None", value)
    if origin is tuple or tp is tuple:
        if isinstance(value, (list, tuple)):
            return tuple(value)
        raise _bad(name, kind, "a list or tuple", value)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp is int and isinstance(value, bool):
        raise _bad(name, kind, "int", value)
    if isinstance(tp, type) and not isinstance(value, tp):
        raise _bad(name, kind, tp.__name__, value)
    return value


def _bad(name: str, kind: str, expected: str, value: Any) -> OptionError:
    return OptionError(f"compile option {name!r} for target {kind!r} must be {expected}, "
                       f"got {type(value).__name__} {value!r}")


# =============================================================================================
# Stages
# =============================================================================================


@dataclass
class Artifact:
    """What :meth:`Builder.codegen` returns: the generated source and the plain data (JSON-able)
    the executable needs besides the binary: argument signatures, launch plans, kernel
    parameter types. ``extra_stages`` are more named texts to dump (``{"nki-legacy": ...}``)."""

    source: str
    metadata: dict[str, Any] = field(default_factory=dict)
    extra_stages: dict[str, str] = field(default_factory=dict)


class Binary:
    """A compiled binary: its bytes, and a file holding them once one is needed (``dlopen``).

    Builders get one in :meth:`Builder.load`; the bytes are read lazily when it came from the
    cache.
    """

    __slots__ = ("_data", "_path")

    def __init__(self, data: bytes | None = None, path: str | os.PathLike[str] | None = None
                 ) -> None:
        if data is None and path is None:
            raise ValueError("a Binary needs its bytes or a file")
        self._data = data
        self._path = None if path is None else Path(path)

    @property
    def data(self) -> bytes:
        if self._data is None:
            assert self._path is not None
            self._data = self._path.read_bytes()
        return self._data

    def file(self) -> Path:
        """A file holding the bytes (written into the cache's ``loaded`` namespace if needed)."""
        if self._path is None:
            self._path = compile_cache("loaded").file_for(self.data)
        return self._path

    def __len__(self) -> int:
        return len(self.data)


class Builder:
    """One backend's build for one target kind: options type and three stages.

    Class attributes:

    * ``kind``: the target kind built (one builder per kind);
    * ``options_type``: the frozen :class:`Options` subclass of this kind's compile options;
    * ``language``: the suffix of the source stage in dumps (``c``, ``cu``, ``metal``, ``py``);
    * ``binary_suffix``: the suffix of the binary stage in dumps (``so``, ``cubin``, ...);
    * ``format``: bump it when generated code or the binary layout changes incompatibly (it is
      part of the cache key and recorded in exported files);
    * ``cached``: whether core caches :meth:`compile`'s output (False when compiling is free);
    * ``executable_type``: the :class:`~tvm.runtime.executable.Executable` subclass that the
      default :meth:`load` makes, ``executable_type(target, binary, metadata)``.
    """

    kind: ClassVar[str] = ""
    options_type: ClassVar[type[Options]] = Options
    language: ClassVar[str] = "txt"
    binary_suffix: ClassVar[str] = "bin"
    format: ClassVar[int] = 1
    cached: ClassVar[bool] = True
    executable_type: ClassVar[type[Executable] | None] = None

    @property
    def name(self) -> str:
        """The backend that registered this builder (recorded in exported files)."""
        return BUILDERS.owner_of(self.kind) or ""

    # -- the stages (a backend overrides these three) --------------------------------------
    def codegen(self, mod: IRModule, target: Target, options: Any) -> Artifact:
        """Lowered ``mod`` -> :class:`Artifact` (source and metadata). Raise
        :class:`~tvm.error.CodegenError` for what the target cannot express."""
        raise NotImplementedError(f"{type(self).__name__}.codegen")

    def compile(self, artifact: Artifact, options: Any) -> bytes | tuple[bytes, dict[str, Any]]:
        """Source -> binary bytes, or ``(bytes, metadata)`` where compiling learns more the
        executable keeps (the exact tool options, its log): JSON-able, cached with the binary
        and merged into the metadata ``load`` gets. Tool failures raise
        :class:`~tvm.error.CompileError` with the tool's log and a command that reproduces it."""
        raise NotImplementedError(f"{type(self).__name__}.compile")

    def load(self, binary: Binary, metadata: Mapping[str, Any], target: Target) -> Executable:
        """The executable of a binary and its metadata (fresh from a build, or from a file).
        Default: ``executable_type(target, binary, metadata)``."""
        if self.executable_type is None:
            raise NotImplementedError(f"{type(self).__name__}.load")
        # a backend's Executable takes (target, binary, metadata), not the base's entry names
        make: Callable[..., Executable] = self.executable_type
        return make(target, binary, metadata)

    # -- optional ----------------------------------------------------------------------------
    def resolve_target(self, target: Target, options: Any = None) -> Target:
        """The target a build for ``target`` really is on this machine, with what the machine
        or the options decide filled in (CUDA: the arch of the GPU here, or ``arch=``), before
        lowering, so that dispatch and codegen see one target. ``options`` are the parsed
        :class:`Options` (None when only lowering). Default: ``target`` as it is."""
        return target

    def compile_key(self, artifact: Artifact, options: Any) -> Any:
        """What the binary depends on besides the source, target and options (the compiler's
        version, header versions): JSON-able; part of the cache key."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} kind={self.kind!r} backend={self.name!r}>"


def register_builder(kind: str, builder: Builder | str, *, override: bool = False
                     ) -> Builder | str:
    """Register the builder of target kind ``kind``: a :class:`Builder` or a ``"module:Class"``
    reference imported on first use (the loader does this for ``tvm_builders``)."""
    if isinstance(builder, str):
        module, _, cls = builder.partition(":")
        if not module or not cls.isidentifier():
            raise TypeError(f"builder reference {builder!r} for kind {kind!r} must be "
                            "'package.module:ClassName'")
    else:
        _check_builder(builder, kind)
    return BUILDERS.register(kind, builder, override=override)


def find_builder(kind: str) -> Builder | None:
    """The builder of target kind ``kind`` (imported on first use), or None when no loaded
    backend builds it."""
    return get_builder(kind) if BUILDERS.get(kind) is not None else None


def get_builder(kind: str) -> Builder:
    """The builder of target kind ``kind`` (imported on first use); a clear error naming what
    to install when no backend builds it."""
    entry = BUILDERS.get(kind)
    if isinstance(entry, Builder):
        return entry
    if isinstance(entry, str):
        found = _RESOLVED.get((kind, entry))
        return found if found is not None else _resolve(kind, entry)
    hint = _loader.missing_message("target kind", kind)
    raise BackendNotInstalledError(
        hint or f"no loaded backend builds target kind {kind!r}; loaded backends: "
                f"{', '.join(_loader.loaded_names()) or 'none'} (kinds with a builder: "
                f"{', '.join(sorted(BUILDERS)) or 'none'}). tvm.backend.list_backends() shows "
                "why a backend is missing")


def _resolve(kind: str, ref: str) -> Builder:
    module_name, _, cls_name = ref.partition(":")
    owner = BUILDERS.owner_of(kind) or "?"
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
        builder = cls()
    except Exception as err:
        raise BackendError(f"backend {owner!r} names builder {ref!r} for target kind {kind!r}, "
                           f"which could not be made: {type(err).__name__}: {err}") from err
    _check_builder(builder, kind)
    _RESOLVED[(kind, ref)] = builder
    return builder


def _check_builder(builder: Any, kind: str) -> None:
    if not isinstance(builder, Builder):
        raise TypeError(f"the builder of target kind {kind!r} must be a tvm.backend.contract."
                        f"Builder, got {type(builder).__name__}")
    if builder.kind != kind:
        raise TypeError(f"{type(builder).__name__} builds target kind {builder.kind!r}, but it "
                        f"is registered for {kind!r}")
    options = builder.options_type
    if not (isinstance(options, type) and issubclass(options, Options)
            and dataclasses.is_dataclass(options)):
        raise TypeError(f"{type(builder).__name__}.options_type must be a dataclass subclass of "
                        "tvm.backend.contract.Options")


# =============================================================================================
# Core's side: build and load
# =============================================================================================

def build(mod: IRModule, target: Target, options: Mapping[str, Any] | Options) -> Executable:
    """Run the stages of ``target``'s builder on lowered ``mod``, with the cache and dumps.
    ``options`` are ``tvm.compile``'s keywords, or already parsed :class:`Options`."""
    builder = get_builder(target.kind.name)
    opts = options if isinstance(options, Options) else builder.options_type.parse(target, options)
    from ..codegen import bounds, limits, source_map  # noqa: PLC0415 - tvm.codegen (the C-style printer) is not part of import tvm; a build loads it

    limits.check_device_limits(mod, target)  # before codegen: a located error, not a launch failure
    with bounds.bounds_check_scope(opts.bounds_check), source_map.collect() as printed:
        artifact = builder.codegen(mod, target, opts)
    dump = _StageDump.open(builder.kind)
    dump.write(f"source.{builder.language}", artifact.source)
    for stage, text in artifact.extra_stages.items():
        dump.write(stage, text)
    try:
        binary, compiled = _compile(builder, artifact, target, opts)
    except CompileError as err:  # at the script line the compiler's log points to, if any
        located = source_map.locate_compile_error(err, artifact.source, printed, mod)
        if located is err:
            raise
        raise located from None
    metadata = {**artifact.metadata, **compiled, "source": artifact.source,
                "function_aliases": function_aliases(mod)}
    dump.write(f"binary.{builder.binary_suffix}", binary.data)
    dump.write("metadata.json", json.dumps(_jsonable(metadata), indent=1, sort_keys=True))
    return builder.load(binary, metadata, target)


def function_aliases(mod: IRModule) -> dict[str, str]:
    """The module's keys that are not the ``global_symbol`` of their function, each mapped to
    that symbol (``IRModule({"main": f})`` exports ``f``'s name; ``ex["main"]`` finds it)."""
    aliases: dict[str, str] = {}
    for key, func in mod.functions.items():
        symbol = str(func.attrs.get("global_symbol", key))
        if symbol != key and key not in aliases and not func.attrs.get("tirx.is_kernel"):
            aliases[str(key)] = symbol
    return aliases


def _compile(builder: Builder, artifact: Artifact, target: Target, opts: Options
             ) -> tuple[Binary, dict[str, Any]]:
    """(binary, what compiling added to the metadata), through the cache when it applies."""
    if not builder.cached:
        data, meta = _split(builder.compile(artifact, opts))
        return Binary(data), meta
    key = cache_key(builder.kind, builder.format, artifact.source, str(target),
                    opts.key(), builder.compile_key(artifact, opts))
    cache = compile_cache(builder.kind)
    path = cache.get_path(key) if opts.cache else None
    if path is not None:
        return Binary(path=path), cache.metadata(key)
    data, meta = _split(builder.compile(artifact, opts))
    if not opts.cache:
        return Binary(data), meta
    return Binary(data, cache.put(key, data, meta)), meta


def _split(result: Any) -> tuple[bytes, dict[str, Any]]:
    if isinstance(result, tuple):
        data, meta = result
        return bytes(data), dict(meta)
    return bytes(result), {}


def load(header: Mapping[str, Any], payload: bytes, *, where: str = "this file") -> Executable:
    """The executable of an exported file's header and payload, through its kind's builder."""
    from ..target import Target  # noqa: PLC0415 - tvm.target (4 modules, ~3 ms) is not part of import tvm in a source checkout

    config = header.get("target")
    target_config: Mapping[str, Any] = config if isinstance(config, Mapping) else {}
    kind = target_config.get("kind")
    if not (isinstance(kind, str) and kind in BUILDERS):
        backend = str(header.get("backend", ""))
        hint = _loader.missing_message("backend", backend) if not _loader.is_loaded(backend) else None
        raise BackendNotInstalledError(
            f"{where} was written by backend {backend!r}, and no loaded backend can load it "
            f"(target kind {kind!r})" + (f": {hint}" if hint else ""))
    if "metadata" not in header:
        raise TVMError(f"{where} has no build metadata: it was written before the build "
                       "contract (executable format 1); compile and export it again")
    builder = get_builder(kind)
    target = Target(target_config)
    written = int(header.get("builder_format", 1))
    if written != builder.format:
        raise TVMError(f"this executable was written with build format {written} of the "
                       f"{target.kind.name!r} builder, and {builder.name or 'its backend'} "
                       f"reads format {builder.format}; compile it again (or install the "
                       "version that wrote it)")
    return builder.load(Binary(payload), dict(header["metadata"] or {}), target)


def _identify(kind: str) -> tuple[str, int] | None:
    """The name and format ``export_library`` writes for target ``kind`` (None: no builder)."""
    if kind not in BUILDERS:
        return None
    builder = get_builder(kind)
    return builder.name, builder.format


def _load_file(header: Mapping[str, Any], payload: bytes, where: str) -> Executable:
    _loader.ensure_builtin_backends()
    return load(header, payload, where=where)


_executable.register_builder_contract(_identify, _load_file)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class _StageDump:
    """``TVM_DUMP_DIR`` (or the ``PassContext``'s ``dump_dir``): one file per build stage,
    ``<kind>-NN-<stage>``, beside the pass dumps of the same compile."""

    def __init__(self, folder: Path | None, kind: str) -> None:
        self.folder = folder
        self.kind = kind
        self.count = 0

    @classmethod
    def open(cls, kind: str) -> _StageDump:
        from ..transform import PassContext  # noqa: PLC0415 - tvm.transform is not part of import tvm; a build runs after lowering loaded it

        folder = PassContext.current().dump_dir
        env = os.environ.get("TVM_DUMP_DIR")
        if folder is None and env:
            folder = Path(env)
        if folder is not None:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError:
                folder = None  # an unusable dump folder never stops a build
        return cls(folder, kind)

    def write(self, stage: str, data: str | bytes) -> None:
        if self.folder is None:
            return
        self.count += 1
        path = self.folder / f"{self.kind}-{self.count:02d}-{stage}"
        try:
            if isinstance(data, str):
                path.write_text(data, encoding="utf-8")
            else:
                path.write_bytes(data)
        except OSError:
            pass  # a dump must never stop compilation
