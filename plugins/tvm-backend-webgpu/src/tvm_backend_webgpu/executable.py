"""WebGPU's build contract and executable: lowered IR -> WGSL + launch plans -> WebGPU device.

>>> ex = tvm.compile(vadd, target="webgpu")
>>> print(ex.inspect_source())       # the WGSL, one module per kernel
>>> ex(a, b, c)                      # numpy arrays, through wgpu-native (lavapipe on a CPU)

:class:`WebGPUBuilder` is what the plugin's ``tvm_builders`` hook names for kind ``webgpu``:
``codegen`` prints every kernel as WGSL (:mod:`.codegen`) and turns every host function into
core's :class:`~tvm.runtime.launch_plan.LaunchPlan`; ``compile`` packages (and with
``check=True`` validates) the WGSL (:mod:`.compiler`); ``load`` makes the
:class:`WebGPUExecutable` (core's :class:`~tvm.shader.executable.ShaderExecutable`), whose
launches run in one submission (:mod:`.runtime`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule

from . import runtime
from .codegen import KernelLayout, generate_wgsl, split_modules
from .compiler import check_wgsl, package_wgsl
from .tags import KIND

__all__ = ["WebGPUBuilder", "WebGPUExecutable", "WebGPUFunction", "WebGPUOptions"]


@dataclass(frozen=True)
class WebGPUOptions(sdk.Options):
    """Compile options of target kind ``webgpu`` (``tvm.compile(f, "webgpu", check=True)``)."""

    check: bool = sdk.option(False, "validate every WGSL module with wgpu-native at build time "
                                "(needs a WebGPU adapter)")


class WebGPUFunction(sdk.ShaderFunction):
    """One entry function; calling it checks the arguments and runs its kernels."""


class WebGPUExecutable(sdk.ShaderExecutable):
    """The WGSL of a module's kernels (the binary) and the launch plans of its functions."""

    backend = "webgpu"
    layout_type = KernelLayout
    function_type = WebGPUFunction

    def __init__(self, target: Any, binary: sdk.Binary, metadata: Mapping[str, Any]) -> None:
        super().__init__(target, binary, metadata)
        self.source = binary.data.decode("utf-8")
        self.modules = split_modules(self.source)

    @property
    def kernel_names(self) -> list[str]:
        return list(self.modules)

    def inspect_source(self, kind: str = "") -> str:
        return self.source

    def check_wgsl(self) -> None:
        """Validate every WGSL module with wgpu-native (raises CompileError)."""
        check_wgsl(self.source)

    def launch(self, bound: sdk.BoundLaunch) -> runtime.Launch:
        name = bound.step.kernel
        return runtime.Launch(self.modules[name], self.layouts[name], bound.grid, bound.block,
                              list(bound.args))

    def run(self, launches: list[Any]) -> None:
        runtime.run(launches)


class WebGPUBuilder(sdk.Builder):
    """Kind ``webgpu``: WGSL printed by :class:`~tvm_backend_webgpu.codegen.WGSLCodegen`,
    compiled by the WebGPU implementation when a pipeline is made (core caches nothing)."""

    kind = KIND
    options_type = WebGPUOptions
    language = "wgsl"
    binary_suffix = "wgsl"
    cached = False
    executable_type = WebGPUExecutable

    def codegen(self, mod: IRModule, target: Any, options: WebGPUOptions) -> sdk.Artifact:
        return sdk.plan_artifact(mod, target, KIND, *generate_wgsl(mod, target))

    def compile(self, artifact: sdk.Artifact, options: WebGPUOptions) -> bytes:
        return package_wgsl(artifact.source, check=options.check)
