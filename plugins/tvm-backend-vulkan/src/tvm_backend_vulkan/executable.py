"""Vulkan's build contract and executable: lowered IR -> GLSL -> SPIR-V + launch plans -> device.

>>> ex = tvm.compile(vadd, target="vulkan")
>>> print(ex.inspect_source())       # the GLSL, one shader per kernel
>>> ex.spirv("vadd_kernel")          # a kernel's SPIR-V module (validated by spirv-val)
>>> ex(a, b, c)                      # numpy arrays, on the Vulkan device (lavapipe on a CPU)

:class:`VulkanBuilder` is what the plugin's ``tvm_builders`` hook names for kind ``vulkan``:
``codegen`` prints every kernel as a GLSL compute shader (:mod:`.codegen`) and turns every host
function into core's :class:`~tvm.runtime.launch_plan.LaunchPlan`; ``compile`` makes and
validates the SPIR-V (:mod:`.compiler`; core caches it); ``load`` makes the
:class:`VulkanExecutable` (core's :class:`~tvm.shader.executable.ShaderExecutable`), whose
launches run in one submission (:mod:`.runtime`): arrays bound as storage buffers in order,
scalars as push constants, the block as the shader's workgroup size (specialization
constants).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule

from . import runtime
from .codegen import KernelLayout, generate_glsl
from .compiler import compile_glsl, spirv_modules, tool_versions
from .tags import KIND

__all__ = ["VulkanBuilder", "VulkanExecutable", "VulkanFunction", "VulkanOptions"]


@dataclass(frozen=True)
class VulkanOptions(sdk.Options):
    """Compile options of target kind ``vulkan`` (``tvm.compile(f, "vulkan", validate=False)``)."""

    validate: bool = sdk.option(True, "check every SPIR-V module with spirv-val")
    target_env: str = sdk.option("vulkan1.1", "the Vulkan environment glslang and spirv-val target")


class VulkanFunction(sdk.ShaderFunction):
    """One entry function; calling it checks the arguments and runs its kernels."""


class VulkanExecutable(sdk.ShaderExecutable):
    """The SPIR-V of a module's kernels (the binary), their GLSL, and the launch plans."""

    backend = "vulkan"
    layout_type = KernelLayout
    function_type = VulkanFunction

    def __init__(self, target: Any, binary: sdk.Binary, metadata: Mapping[str, Any]) -> None:
        super().__init__(target, binary, metadata)
        self._modules = spirv_modules(binary.data, metadata)

    @property
    def kernel_names(self) -> list[str]:
        return list(self._modules)

    def spirv(self, kernel: str) -> bytes:
        """The SPIR-V module of ``kernel``."""
        found = self._modules.get(kernel)
        if found is None:
            raise KeyError(f"this executable has no kernel {kernel!r}; it has "
                           f"{sorted(self._modules)}")
        return found

    def launch(self, bound: sdk.BoundLaunch) -> runtime.Launch:
        name = bound.step.kernel
        return runtime.Launch(self.spirv(name), self.layouts[name], bound.grid, bound.block,
                              list(bound.args))

    def run(self, launches: list[Any]) -> None:
        runtime.run(launches)


class VulkanBuilder(sdk.Builder):
    """Kind ``vulkan``: GLSL printed by :class:`~tvm_backend_vulkan.codegen.GLSLCodegen`,
    compiled to SPIR-V by glslangValidator and checked by spirv-val."""

    kind = KIND
    options_type = VulkanOptions
    language = "comp"
    binary_suffix = "spv"
    executable_type = VulkanExecutable

    def codegen(self, mod: IRModule, target: Any, options: VulkanOptions) -> sdk.Artifact:
        return sdk.plan_artifact(mod, target, KIND, *generate_glsl(mod, target))

    def compile(self, artifact: sdk.Artifact, options: VulkanOptions) -> tuple[bytes, dict[str, Any]]:
        return compile_glsl(artifact.source, target_env=options.target_env,
                            validate=options.validate)

    def compile_key(self, artifact: sdk.Artifact, options: VulkanOptions) -> Any:
        return tool_versions()
