"""Hexagon's build contract and executable: lowered IR -> C for the DSP -> ELF object.

>>> ex = tvm.compile(f, target="qcom/hexagon-v68")
>>> print(ex.inspect_source())     # the C
>>> ex.object_file[:4]             # b'\\x7fELF': a Hexagon relocatable object

:class:`HexagonBuilder` is what the plugin's ``tvm_builders`` hook names for kind ``hexagon``:
``codegen`` prints C (:mod:`.codegen`) and derives each function's argument signature;
``compile`` makes the object file (:mod:`.compiler`; core caches it); ``load`` makes the
:class:`HexagonExecutable`, which keeps the object and the source and, called, says what running
on a DSP needs (:mod:`.runtime`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule

from . import runtime
from .codegen import generate_c
from .compiler import compile_object, find_compiler, flags
from .tags import KIND

__all__ = ["HexagonBuilder", "HexagonExecutable", "HexagonOptions"]


@dataclass(frozen=True)
class HexagonOptions(sdk.Options):
    """Compile options of kind ``hexagon`` (``tvm.compile(f, "qcom/hexagon-v68", opt_level=3)``)."""

    opt_level: int = sdk.option(2, "the compiler's -O<n>")


class HexagonExecutable(sdk.Executable):
    """A Hexagon object file, its C source and the argument signatures of its functions."""

    backend = "hexagon"

    def __init__(self, target: Any, binary: sdk.Binary, metadata: Mapping[str, Any]) -> None:
        infos = [sdk.FunctionInfo.from_dict(d) for d in metadata["functions"]]
        super().__init__(target, [f.name for f in infos], binary=binary, metadata=metadata)
        self.source = str(metadata["source"])
        self.functions = {f.name: f for f in infos}
        self.signatures = {name: sdk.Signature.from_dict(s)
                           for name, s in metadata["arguments"].items()}

    @property
    def object_file(self) -> bytes:
        """The Hexagon ELF relocatable object the compiler produced."""
        return self.binary.data

    def get_function(self, name: str) -> Any:
        if name not in self.functions:
            raise self._no_function(name)

        def run(*args: Any) -> None:
            raise runtime.HexagonRuntimeUnavailable(
                f"cannot run {name!r} on {self.target.attrs['mcpu']}: {runtime.REASON}. The C is "
                "in ex.inspect_source() and the object file in ex.object_file")

        return run


class HexagonBuilder(sdk.Builder):
    """Kind ``hexagon``: C from :mod:`.codegen`, an object file from a Hexagon compiler."""

    kind = KIND
    options_type = HexagonOptions
    language = "c"
    binary_suffix = "o"
    executable_type = HexagonExecutable

    def codegen(self, mod: IRModule, target: Any, options: HexagonOptions) -> sdk.Artifact:
        source, functions = generate_c(mod, target)
        attrs = target.attrs
        return sdk.Artifact(source, {
            "functions": [f.to_dict() for f in functions],
            "arguments": {n: s.to_dict()
                          for n, s in sdk.exported_signatures(mod, functions, KIND).items()},
            "arch": {"mcpu": attrs["mcpu"], "mattr": list(attrs["mattr"]),
                     "llvm_options": list(attrs["llvm-options"])},
        })

    def compile_key(self, artifact: sdk.Artifact, options: HexagonOptions) -> Any:
        compiler = find_compiler()
        if compiler is None:
            return None
        arch = artifact.metadata["arch"]
        return {"compiler": [compiler.path, compiler.version],
                "flags": flags(compiler, arch["mcpu"], arch["mattr"], arch["llvm_options"],
                               options.opt_level)}

    def compile(self, artifact: sdk.Artifact, options: HexagonOptions
                ) -> tuple[bytes, dict[str, Any]]:
        arch = artifact.metadata["arch"]
        names = ", ".join(f["name"] for f in artifact.metadata["functions"]) or "the module"
        binary = compile_object(artifact.source, mcpu=arch["mcpu"], mattr=arch["mattr"],
                                llvm_options=arch["llvm_options"], opt_level=options.opt_level,
                                what=f"the C of {names}")
        return binary, {"compiler": self.compile_key(artifact, options)}
