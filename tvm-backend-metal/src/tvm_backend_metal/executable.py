"""Metal's build contract and executable: lowered IR -> MSL + launch plans -> Apple GPU or emulator.

>>> ex = tvm.compile(vadd, target="apple/m1-gpu")
>>> print(ex.inspect_source())       # the MSL
>>> ex(a, b, c)                      # on macOS with pyobjc-framework-Metal; else a clear error
>>> ex.emulate(a, b, c)              # anywhere with g++: the same kernels on the CPU
>>> ex.check_msl()                   # the C++-shim syntax check of the MSL

:class:`MetalBuilder` is what the plugin's ``tvm_builders`` hook returns for kind ``metal``:
``codegen`` prints the kernels as MSL (:mod:`.codegen`) and turns every host function into
core's :class:`~tvm.runtime.launch_plan.LaunchPlan`; ``compile`` checks and packages the MSL
(:mod:`.compiler`); ``load`` makes the :class:`MetalExecutable`. Core parses the options, dumps
the stages and writes/reads exported files.

A call checks the arguments (core's :class:`~tvm.runtime.arguments.ArgumentChecker`, through
:meth:`LaunchPlan.bind`), evaluates the launch sizes and dispatches every kernel with its
arguments bound to ``[[buffer(0)]]``, ``[[buffer(1)]]``, ... in order (arrays as they are,
scalars as one-element arrays for ``constant T&``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule

from . import runtime
from .codegen import generate_msl
from .compiler import package_msl
from .emulator import compile_msl
from .msl_check import check_msl
from .tags import KIND

__all__ = ["MetalBuilder", "MetalExecutable", "MetalFunction", "MetalOptions"]

Launcher = Callable[[str, tuple[int, int, int], tuple[int, int, int], list[Any]], None]


@dataclass(frozen=True)
class MetalOptions(sdk.Options):
    """Compile options of target kind ``metal`` (``tvm.compile(f, "apple/m1-gpu", check=True)``)."""

    check: bool = sdk.option(False, "run the C++-shim syntax check (check_msl) on the MSL at build "
                                "time")


class MetalFunction(sdk.PlanFunction):
    """One entry function; calling it checks the arguments and launches its kernels."""

    _exe: MetalExecutable

    def __call__(self, *args: Any) -> None:
        self.run(args, self._exe._gpu_launcher())

    def emulate(self, *args: Any) -> None:
        """Run on the CPU emulator (:mod:`tvm_backend_metal.emulator`)."""
        self.run(args, self._exe._emulator_launcher())

    def run(self, args: Sequence[Any], launch: Launcher) -> None:
        for step, grid, block, buffers in self.launches(args):
            launch(step.kernel, grid, block, buffers)

    def launches(self, args: Sequence[Any]
                 ) -> list[tuple[sdk.LaunchStep, tuple[int, int, int], tuple[int, int, int],
                                 list[Any]]]:
        """Every launch with its evaluated sizes and bound buffers (nothing runs): arrays as
        given, scalars as one-element arrays of the kernel parameter's dtype."""
        import numpy as np

        out = []
        for bound in self.bind(args):
            buffers = [value if ref[0] == sdk.ARRAY else np.array([value], dtype=_np_dtype(ref[-1]))
                       for ref, value in zip(bound.step.args, bound.args)]
            out.append((bound.step, bound.grid, bound.block, buffers))
        return out


class MetalExecutable(sdk.PlanExecutable[MetalFunction]):
    """The MSL of a module's kernels (the binary) and the launch plans of its functions."""

    backend = "metal"
    function_type = MetalFunction

    def __init__(self, target: Any, binary: sdk.Binary, metadata: Mapping[str, Any]) -> None:
        super().__init__(target, binary, metadata)
        self.source = binary.data.decode("utf-8")
        self._gpu_kernels: dict[str, Any] = {}

    def emulate(self, *args: Any) -> None:
        """Run the entry function on the CPU emulator instead of a GPU (any OS with g++)."""
        self.get_function(self.entry_name).emulate(*args)

    @property
    def kernel_names(self) -> list[str]:
        return sorted({k for p in self.plans.values() for k in p.kernels})

    def inspect_source(self, kind: str = "") -> str:
        return self.source

    def check_msl(self, **kwargs: Any) -> None:
        """Syntax-check the MSL with the C++ shim (raises CompileError)."""
        name = self.entry_names[0] if self.entry_names else "mod"
        check_msl(self.source, filename=f"{name}.metal", **kwargs)

    # -- launchers ------------------------------------------------------------------------
    def _gpu_launcher(self) -> Launcher:
        reason = runtime.unavailable_reason()
        if reason is not None:
            raise runtime.MetalRuntimeUnavailable(
                f"cannot run {self.entry_names} on an Apple GPU here: {reason}. The MSL is in "
                "ex.inspect_source(); ex.emulate(*args) runs it on the CPU emulator")

        def launch(kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int],
                   buffers: list[Any]) -> None:
            compiled = self._gpu_kernels.get(kernel)
            if compiled is None:
                compiled = self._gpu_kernels[kernel] = runtime.compile(self.source, kernel)
            compiled(grid, block, buffers)

        return launch

    def _emulator_launcher(self) -> Launcher:
        def launch(kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int],
                   buffers: list[Any]) -> None:
            compile_msl(self.source, kernel, filename=f"{kernel}.metal")(grid, block, buffers)

        return launch


class MetalBuilder(sdk.Builder):
    """Kind ``metal``: MSL printed by :class:`~tvm_backend_metal.codegen.MetalCodegen`, compiled
    by the Metal driver when it first runs (so core caches nothing at the compile stage)."""

    kind = KIND
    options_type = MetalOptions
    language = "metal"
    binary_suffix = "metal"
    format = 3  # 3: the build contract (core's launch plans in the metadata, MSL as the binary)
    cached = False
    executable_type = MetalExecutable

    def codegen(self, mod: IRModule, target: Any, options: MetalOptions) -> sdk.Artifact:
        source, _ = generate_msl(mod, target)
        # The arrays are host (numpy) arrays, copied to and from Metal buffers: device "cpu".
        plans = sdk.launch_plans(mod, "cpu", target_name=KIND, handles=False)
        kernels = sorted({s.kernel for p in plans for s in p.steps})
        return sdk.Artifact(source, {"plans": [p.to_dict() for p in plans], "kernels": kernels})

    def compile(self, artifact: sdk.Artifact, options: MetalOptions) -> bytes:
        names = [p["signature"]["name"] for p in artifact.metadata["plans"]]
        return package_msl(artifact.source, check=options.check, name=names[0] if names else
                           "mod")


def _np_dtype(name: str) -> Any:
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return name
