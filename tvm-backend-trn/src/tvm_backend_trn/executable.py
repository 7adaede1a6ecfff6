"""Trainium's build contract and executable: lowered IR -> NKI source + instruction form ->
the simulator.

:class:`TrnBuilder` is what the plugin's ``tvm_builders`` hook returns for kind ``trn``:
``codegen`` lowers every function to the instruction form (:mod:`.codegen`) and prints it as
NKI source in the ``dialect`` option's dialect; ``compile`` serialises the instruction form
(:mod:`.compiler`, JSON); ``load`` makes the :class:`TrnExecutable`. Core parses the options,
dumps the stages and writes/reads exported files.

``ex(*arrays)`` takes one array per kernel parameter, checked first by core's
:class:`~tvm.runtime.arguments.ArgumentChecker` against the function's
:class:`~tvm.runtime.arguments.Signature` (derived from the IR at build time and kept in the
metadata, so a loaded executable checks exactly as a fresh one): numpy arrays or other CPU
arrays (DLPack), contiguous, with the parameter's shape and dtype. The kernel runs in the
simulator (:mod:`.runtime`) and its outputs are written back into the arrays given for them.
``inspect_source()`` is the NKI source (the build's dialect, or ``inspect_source("legacy")``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tvm.backend import sdk
from tvm.error import OptionError, TVMError
from tvm.ir.function import IRModule

from . import isa
from .codegen import generate_kernels, render_source
from .compiler import decode_kernels, encode_kernels
from .runtime import run_kernel
from .tags import KIND

__all__ = ["DIALECTS", "TrnArtifact", "TrnBuilder", "TrnExecutable", "TrnFunction",
           "TrnOptions"]

DIALECTS = ("nki", "legacy")


@dataclass(frozen=True)
class TrnOptions(sdk.Options):
    """Compile options of target kind ``trn`` (``tvm.compile(f, "aws/trn1/trn1.2xlarge",
    dialect="legacy")``)."""

    dialect: str = sdk.option("nki", "the NKI dialect of the source: 'nki' (current) or 'legacy'",
                              key=False)

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise OptionError(f"compile option 'dialect' for target 'trn' must be 'nki' or "
                              f"'legacy', got {self.dialect!r}")


@dataclass
class TrnArtifact(sdk.Artifact):
    """The source stage of a Trainium build, with the instruction form it was printed from."""

    kernels: dict[str, isa.Kernel] = field(default_factory=dict)


class TrnBuilder(sdk.Builder):
    """Kind ``trn``: NKI source for the reader, the instruction form for the simulator."""

    kind = KIND
    options_type = TrnOptions
    language = "py"
    binary_suffix = "json"
    format = 3  # 3: the build contract (JSON instruction form, signatures in the metadata)
    cached = False  # serialising the instruction form costs less than a cache look-up

    def codegen(self, mod: IRModule, target: Any, options: TrnOptions) -> TrnArtifact:
        kernels = generate_kernels(mod)
        by_symbol = {str(f.attrs.get("global_symbol", n)): f for n, f in mod.functions.items()}
        # the simulator runs on host arrays: the device is the CPU
        arguments = {n: sdk.signature_from_func(by_symbol[n], "cpu", name=n).to_dict()
                     for n in kernels}
        return TrnArtifact(render_source(kernels, options.dialect),
                           {"arguments": arguments, "dialect": options.dialect,
                            "kernels": list(kernels), "bounds_check": sdk.bounds_check_enabled()},
                           kernels=kernels)

    def compile(self, artifact: sdk.Artifact, options: TrnOptions) -> bytes:
        if not isinstance(artifact, TrnArtifact):
            raise TypeError("TrnBuilder.compile needs the TrnArtifact of TrnBuilder.codegen")
        return encode_kernels(artifact.kernels)

    def load(self, binary: sdk.Binary, metadata: Mapping[str, Any], target: Any) -> TrnExecutable:
        return TrnExecutable(target, binary, metadata)


class TrnFunction:
    """One kernel, callable on arrays (simulated)."""

    def __init__(self, kernel: isa.Kernel, target: Any, signature: sdk.Signature,
                 bounds_check: bool | None = None) -> None:
        self.kernel = kernel
        self.target = target
        self.signature = signature
        self.bounds_check = bounds_check  # None: TVM_BOUNDS_CHECK at run time decides
        self._check = sdk.ArgumentChecker(signature)
        self.stats: dict[str, int] = {}

    @property
    def name(self) -> str:
        return self.kernel.name

    def __call__(self, *args: Any) -> None:
        self._check(args)
        self.stats = {}
        run_kernel(self.kernel, args, target=self.target, stats=self.stats,
                   bounds_check=self.bounds_check)

    def __repr__(self) -> str:
        params = ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in self.kernel.tensors)
        return f"<TrnFunction {self.name}({params})>"


class TrnExecutable(sdk.Executable):
    """What ``tvm.compile(..., target="aws/trn1/...")`` returns."""

    backend = "trn"

    def __init__(self, target: Any, binary: sdk.Binary, metadata: Mapping[str, Any]) -> None:
        kernels = decode_kernels(binary.data)
        arguments = metadata.get("arguments") or {}
        missing = sorted(set(kernels) - set(arguments))
        if missing:
            raise TVMError(f"no argument signature for kernel(s) {missing}")
        super().__init__(target, list(kernels), binary=binary, metadata=metadata)
        self.kernels = kernels
        self.signatures = {n: sdk.Signature.from_dict(arguments[n]) for n in kernels}
        self.dialect = str(metadata.get("dialect", "nki"))
        self._functions: dict[str, TrnFunction] = {}

    def get_function(self, name: str) -> TrnFunction:
        if name not in self.kernels:
            raise self._no_function(name)
        if name not in self._functions:
            self._functions[name] = TrnFunction(self.kernels[name], self.target,
                                                self.signatures[name],
                                                self.metadata.get("bounds_check") or None)
        return self._functions[name]

    def inspect_source(self, kind: str = "") -> str:
        dialect = kind or self.dialect
        if dialect == self.dialect and "source" in self.metadata:
            return str(self.metadata["source"])
        if dialect not in DIALECTS:
            raise ValueError(f"the NKI source comes in the dialects {DIALECTS}, not {kind!r}")
        return render_source(self.kernels, dialect)
