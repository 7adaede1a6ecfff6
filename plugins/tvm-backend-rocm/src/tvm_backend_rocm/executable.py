"""ROCm's build contract and executable: lowered IR -> HIP C++ + launch plans -> code object.

>>> ex = tvm.compile(vadd, target="amd/instinct-mi250x")
>>> print(ex.inspect_source())       # the HIP C++
>>> ex.code_object[:4]               # b'\\x7fELF': the AMD GPU code object hipcc made

:class:`RocmBuilder` is what the plugin's ``tvm_builders`` hook names for kind ``rocm``:
``codegen`` prints the kernels as HIP (:mod:`.codegen`) and turns every host function into core's
:class:`~tvm.runtime.launch_plan.LaunchPlan`; ``compile`` runs hipcc for the target's
architecture (:mod:`.compiler`; core caches the code object); ``load`` makes the
:class:`RocmExecutable`. Calling it raises :class:`~.runtime.RocmRuntimeUnavailable`: this
version has no launcher (:mod:`.runtime`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule

from . import runtime
from .codegen import generate_hip
from .compiler import compile_hip, find_hipcc, flags
from .tags import KIND

__all__ = ["RocmBuilder", "RocmExecutable", "RocmOptions"]


@dataclass(frozen=True)
class RocmOptions(sdk.Options):
    """Compile options of kind ``rocm`` (``tvm.compile(f, "rocm", opt_level=2)``)."""

    opt_level: int = sdk.option(3, "hipcc's -O<n>")
    hipcc_flags: tuple[str, ...] = sdk.option((), "more hipcc options, e.g. ('-ffast-math',)")


class RocmExecutable(sdk.Executable):
    """The code object of a module's kernels and the launch plans of its functions."""

    backend = "rocm"

    def __init__(self, target: Any, binary: sdk.Binary, metadata: Mapping[str, Any]) -> None:
        plans = [sdk.LaunchPlan.from_dict(p) for p in metadata["plans"]]
        super().__init__(target, [p.name for p in plans], binary=binary, metadata=metadata)
        self.source = str(metadata["source"])
        self.plans = {p.name: p for p in plans}
        self.kernel_names = list(metadata.get("kernels", []))

    @property
    def code_object(self) -> bytes:
        """The AMD GPU code object (an ELF file) hipcc produced."""
        return self.binary.data

    def get_function(self, name: str) -> Any:
        if name not in self.plans:
            raise self._no_function(name)

        def run(*args: Any) -> None:
            raise runtime.RocmRuntimeUnavailable(
                f"cannot run {name!r} for {self.target.attrs['mcpu']}: "
                f"{runtime.unavailable_reason()}. The HIP is in ex.inspect_source() and the code "
                "object in ex.code_object")

        return run


class RocmBuilder(sdk.Builder):
    """Kind ``rocm``: HIP from :class:`~tvm_backend_rocm.codegen.HipCodegen`, a code object from
    hipcc for the target's ``mcpu``."""

    kind = KIND
    options_type = RocmOptions
    language = "hip"
    binary_suffix = "hsaco"
    executable_type = RocmExecutable

    def codegen(self, mod: IRModule, target: Any, options: RocmOptions) -> sdk.Artifact:
        source, kernels = generate_hip(mod, target)
        plans = sdk.launch_plans(mod, "rocm", target_name=KIND)
        attrs = target.attrs
        return sdk.Artifact(source, {
            "plans": [p.to_dict() for p in plans],
            "kernels": [k.symbol for k in kernels],
            "arch": {"mcpu": attrs["mcpu"], "mattr": list(attrs["mattr"])},
        })

    def compile_key(self, artifact: sdk.Artifact, options: RocmOptions) -> Any:
        hipcc = find_hipcc()
        arch = artifact.metadata["arch"]
        return {"hipcc": hipcc.version if hipcc else None,
                "flags": flags(arch["mcpu"], arch["mattr"], options.opt_level)}

    def compile(self, artifact: sdk.Artifact, options: RocmOptions) -> tuple[bytes, dict[str, Any]]:
        arch = artifact.metadata["arch"]
        names = ", ".join(p["signature"]["name"] for p in artifact.metadata["plans"])
        binary = compile_hip(artifact.source, mcpu=arch["mcpu"], mattr=arch["mattr"],
                             opt_level=options.opt_level,
                             extra=options.hipcc_flags, what=f"the HIP of {names or 'the module'}")
        return binary, {"hipcc": self.compile_key(artifact, options)["hipcc"]}
