"""The host backend's build contract and executable: C source -> shared object -> ctypes.

:class:`HostBuilder` is what the plugin's ``tvm_builders`` hook returns for kind ``c``:
``codegen`` prints C (:mod:`.codegen`) and derives the argument signatures, ``compile`` runs the
system C compiler (:mod:`.compiler`), ``load`` opens the shared object (:mod:`.runtime`). Core
caches the shared objects, dumps the stages and writes/reads exported files.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..backend.contract import Artifact, Binary, Builder, Options, option
from ..backend.signatures import exported_signatures
from ..codegen.c_style import FunctionInfo
from ..error import TVMError
from ..ir.function import IRModule
from ..runtime.arguments import Signature
from ..runtime.executable import Executable
from .codegen import generate_c
from .compiler import get_toolchain, missing_cpu_features
from .runtime import HostFunction, load_library

__all__ = ["HostBuilder", "HostExecutable", "HostOptions", "LlvmBuilder", "LlvmOptions"]


@dataclass(frozen=True)
class HostOptions(Options):
    """Compile options of target kind ``c`` (``tvm.compile(f, "c", opt_level=3)``); the target's
    attributes of the same names are the defaults."""

    opt_level: int = option(3, "optimisation level of the C compiler (-O<n>)")
    cc: str | None = option(None, "the C compiler command (default: $CC, else cc)")
    mcpu: str | None = option(None, "passed as -march=<mcpu> (e.g. native, x86-64-v3); default: "
                                    "the best x86-64 level this CPU and compiler support")
    num_threads: int | None = option(None, "OpenMP threads of parallel loops (default: "
                                           "OpenMP's choice)")
    extra_flags: tuple[str, ...] = option((), "extra compiler flags")


class HostBuilder(Builder):
    """Kind ``c``: C printed by :class:`~tvm.host.codegen.HostCodegen`, compiled by the system
    C compiler into a shared object, called through ctypes."""

    kind = "c"
    options_type = HostOptions
    language = "c"
    binary_suffix = "so"
    format = 2

    def codegen(self, mod: IRModule, target: Any, options: HostOptions) -> Artifact:
        toolchain = get_toolchain(options.cc)
        source, functions, uses_openmp = generate_c(
            mod, target, openmp=toolchain.has_openmp, float16=toolchain.has_float16,
            num_threads=options.num_threads)
        flags = toolchain.flags(opt_level=options.opt_level, openmp=uses_openmp,
                                mcpu=options.mcpu, extra=options.extra_flags)
        compiler = {"command": toolchain.display, "version": toolchain.version, "flags": flags}
        return Artifact(source, {
            "functions": {f.name: f.to_dict() for f in functions},
            "arguments": {n: s.to_dict()
                          for n, s in exported_signatures(mod, functions, "cpu").items()},
            "compiler": compiler,
            # the CPU features the binary may use: loading refuses a CPU without them
            "isa": toolchain.isa_for(options.mcpu).to_dict(),
        })

    def compile_key(self, artifact: Artifact, options: HostOptions) -> Any:
        return artifact.metadata["compiler"]

    def compile(self, artifact: Artifact, options: HostOptions) -> bytes:
        compiler = artifact.metadata["compiler"]
        toolchain = get_toolchain(options.cc)
        return toolchain.compile_shared(artifact.source, compiler["flags"],
                                        what=_describe(list(artifact.metadata["functions"])))

    def load(self, binary: Binary, metadata: Mapping[str, Any], target: Any) -> HostExecutable:
        return HostExecutable(target, binary, metadata)


@dataclass(frozen=True)
class LlvmOptions(HostOptions):
    """Options of kind ``llvm``: those of ``c``; ``mcpu`` is an LLVM CPU name, recorded only
    (it is not a ``-march`` value)."""

    mcpu: str | None = option(None, "LLVM CPU name (recorded; not passed to the C compiler)")


class LlvmBuilder(HostBuilder):
    """Kind ``llvm`` (Apache TVM's CPU kind): built as C for this machine, like ``c``; a target
    triple of another architecture is refused."""

    kind = "llvm"
    options_type = LlvmOptions

    def codegen(self, mod: IRModule, target: Any, options: HostOptions) -> Artifact:
        _check_native(target)
        return super().codegen(mod, target, dataclasses.replace(options, mcpu=None))


def _check_native(target: Any) -> None:
    """An ``llvm`` target builds only for this machine: refuse another triple's architecture."""
    triple = target.attrs.get("mtriple")
    if not triple:
        return
    arch = triple.split("-", 1)[0]
    here = platform.machine().lower()
    same = {"x86_64": {"x86_64", "amd64"}, "aarch64": {"aarch64", "arm64"},
            "arm64": {"aarch64", "arm64"}}.get(arch, {arch})
    if here not in same:
        raise TVMError(f"target {target}: cannot build for {triple!r} on this {here} machine; "
                       f"the llvm kind compiles C for the machine it runs on (drop -mtriple, or "
                       f"build on a {arch} machine)")


class HostExecutable(Executable):
    """A compiled shared object of the host target ``c``."""

    backend = "c"

    def __init__(self, target: Any, binary: Binary, metadata: Mapping[str, Any]) -> None:
        functions = [FunctionInfo.from_dict(d) for d in metadata["functions"].values()]
        super().__init__(target, [f.name for f in functions], binary=binary, metadata=metadata)
        arguments = metadata.get("arguments") or {}
        missing = [f.name for f in functions if f.name not in arguments]
        if missing:
            raise TVMError(f"no argument signature for {missing}")
        self.functions = {f.name: f for f in functions}
        self.signatures = {n: Signature.from_dict(arguments[n]) for n in self.functions}
        self.compiler = dict(metadata.get("compiler") or {})
        self.isa = dict(metadata.get("isa") or {})
        _check_isa(self.isa)
        self.lib_path = str(binary.file())
        self._lib = load_library(self.lib_path)
        self._loaded: dict[str, HostFunction] = {}
        self._entry_call: Any = None

    def __call__(self, *args: Any) -> Any:
        # the per-call path: the entry function's C caller straight away (see runtime.py)
        call = self._entry_call
        if call is None:
            call = self._entry_call = self.get_function(self.entry_name).fast_call
        return call(*args)

    @property
    def source(self) -> str:
        return self.inspect_source()

    def get_function(self, name: str) -> HostFunction:
        func = self._loaded.get(name)
        if func is not None:
            return func
        info = self.functions.get(name)
        if info is None:
            raise self._no_function(name)
        func = self._loaded[name] = HostFunction(self._lib, info, self.signatures[name])
        return func


def _check_isa(isa: Mapping[str, Any]) -> None:
    """Refuse, before dlopen, a binary that needs CPU features this machine lacks (it would
    die of an illegal instruction on its first vector instruction)."""
    missing = missing_cpu_features(list(isa.get("features") or ()))
    if not missing:
        return
    flags = " ".join(isa.get("flags") or ()) or "its default flags"
    raise TVMError(
        f"this executable was compiled for {isa.get('name', 'another CPU')} ({flags}) and needs "
        f"CPU features this machine lacks: {', '.join(missing)}; compile it again here "
        f"(tvm.compile), or on the other machine with the target's mcpu set to a level both "
        f"CPUs have (e.g. Target({{'kind': 'c', 'mcpu': 'x86-64-v2'}}))")


def _describe(names: Sequence[str]) -> str:
    return f"the C source of {', '.join(names) or 'an empty module'}"
