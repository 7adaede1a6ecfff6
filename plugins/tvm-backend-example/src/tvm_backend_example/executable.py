"""The example backend's build contract and its Executable.

``tvm.compile(f, target="example")`` runs core's pipeline, then the three stages of
:class:`ExampleBuilder` (returned by the plugin's ``tvm_builders`` hook):

1. ``codegen``: lowered IR -> C (:mod:`.codegen`), and the plain data the executable needs:
   the exported functions and their argument signatures (core derives those from the IR);
2. ``compile``: C -> shared object (:mod:`.compiler`); core caches the result under
   ``$TVM_CACHE_DIR/example`` (``TVM_CACHE=0`` turns it off) and dumps every stage into
   ``TVM_DUMP_DIR`` (``example-01-source.c``, ``example-02-binary.so``, ...);
3. ``load``: shared object + metadata -> :class:`ExampleExecutable`, fresh from a build or read
   back by ``tvm.runtime.load_module`` from a file that ``export_library`` wrote.

Options are a frozen dataclass (:class:`ExampleOptions`): core parses ``tvm.compile``'s
keywords into it, takes defaults from target attributes of the same name, and rejects unknown
names with one error listing the known ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule

from .codegen import generate_c
from .compiler import compile_c, compiler_info, toolchain
from .tags import KIND

__all__ = ["ExampleBuilder", "ExampleExecutable", "ExampleOptions"]


@dataclass(frozen=True)
class ExampleOptions(sdk.Options):
    """Compile options of kind ``example``: ``tvm.compile(f, "example", opt_level=3)``."""

    opt_level: int = sdk.option(2, "optimisation level of the C compiler (-O<n>)")
    cc: str | None = sdk.option(None, "the C compiler command (default: $CC, else cc)")


class ExampleExecutable(sdk.Executable):
    """A shared object of kind ``example``; ``ex(*args)`` or ``ex["name"](*args)`` calls it."""

    backend = "example"

    def __init__(self, target: Any, binary: sdk.Binary, metadata: Mapping[str, Any]) -> None:
        infos = [sdk.FunctionInfo.from_dict(d) for d in metadata["functions"]]
        super().__init__(target, [f.name for f in infos], binary=binary, metadata=metadata)
        library = sdk.load_library(str(binary.file()))  # dlopen needs a file: core provides one
        self.functions = {
            f.name: sdk.HostFunction(library, f, sdk.Signature.from_dict(metadata["arguments"][f.name]))
            for f in infos
        }

    def get_function(self, name: str) -> sdk.HostFunction:
        if name not in self.functions:
            raise self._no_function(name)
        return self.functions[name]


class ExampleBuilder(sdk.Builder):
    """Kind ``example``: C from :mod:`.codegen`, a shared object from the system C compiler."""

    kind = KIND
    options_type = ExampleOptions
    language = "c"
    binary_suffix = "so"
    format = 1  # bump when the generated code or the metadata changes incompatibly
    executable_type = ExampleExecutable  # what load() makes of the binary and its metadata

    def codegen(self, mod: IRModule, target: Any, options: ExampleOptions) -> sdk.Artifact:
        source, functions = generate_c(mod, target, float16=toolchain(options.cc).has_float16)
        return sdk.Artifact(source, {
            "functions": [f.to_dict() for f in functions],
            "arguments": {n: s.to_dict()
                          for n, s in sdk.exported_signatures(mod, functions, "cpu").items()},
            "compiler": compiler_info(options.cc, options.opt_level),
        })

    def compile_key(self, artifact: sdk.Artifact, options: ExampleOptions) -> Any:
        return artifact.metadata["compiler"]  # a new compiler version means a new binary

    def compile(self, artifact: sdk.Artifact, options: ExampleOptions) -> bytes:
        names = ", ".join(f["name"] for f in artifact.metadata["functions"]) or "no function"
        return compile_c(artifact.source, options.cc, artifact.metadata["compiler"]["flags"],
                         what=f"the C of {names}")
