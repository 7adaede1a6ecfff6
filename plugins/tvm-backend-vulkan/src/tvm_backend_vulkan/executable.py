"""Vulkan's build contract and executable: lowered IR -> GLSL -> SPIR-V + launch plans -> device.

>>> ex = tvm.compile(vadd, target="vulkan")
>>> print(ex.inspect_source())       # the GLSL, one shader per kernel
>>> ex.spirv("vadd_kernel")          # a kernel's SPIR-V module (validated by spirv-val)
>>> ex(a, b, c)                      # numpy arrays, on the Vulkan device (lavapipe on a CPU)

:class:`VulkanBuilder` is what the plugin's ``tvm_builders`` hook names for kind ``vulkan``:
``codegen`` prints every kernel as a GLSL compute shader (:mod:`.codegen`) and turns every host
function into core's :class:`~tvm.runtime.launch_plan.LaunchPlan`; ``compile`` makes and
validates the SPIR-V (:mod:`.compiler`; core caches it); ``load`` makes the
:class:`VulkanExecutable`. A call checks the arguments with core's checker
(:meth:`LaunchPlan.bind`), evaluates the launch sizes and runs the launches in one submission
(:mod:`.runtime`): arrays bound as storage buffers in order, scalars as push constants, the
block as the shader's workgroup size (specialization constants).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tvm.backend.contract import Artifact, Binary, Builder, Options, option
from tvm.error import CodegenError
from tvm.ir.function import IRModule
from tvm.runtime.executable import Executable
from tvm.runtime.launch_plan import PARAM, LaunchPlan
from tvm.tirx.transform.signature import launch_plans

from . import runtime
from .codegen import KernelLayout, generate_glsl
from .compiler import compile_glsl, spirv_modules, tool_versions
from .tags import KIND

__all__ = ["VulkanBuilder", "VulkanExecutable", "VulkanFunction", "VulkanOptions"]


@dataclass(frozen=True)
class VulkanOptions(Options):
    """Compile options of target kind ``vulkan`` (``tvm.compile(f, "vulkan", validate=False)``)."""

    validate: bool = option(True, "check every SPIR-V module with spirv-val")
    target_env: str = option("vulkan1.1", "the Vulkan environment glslang and spirv-val target")


class VulkanBuilder(Builder):
    """Kind ``vulkan``: GLSL printed by :class:`~tvm_backend_vulkan.codegen.GLSLCodegen`,
    compiled to SPIR-V by glslangValidator and checked by spirv-val."""

    kind = KIND
    options_type = VulkanOptions
    language = "comp"
    binary_suffix = "spv"
    format = 1

    def codegen(self, mod: IRModule, target: Any, options: VulkanOptions) -> Artifact:
        source, layouts = generate_glsl(mod, target)
        # The arrays are host (numpy) arrays, copied to and from Vulkan buffers: device "cpu".
        plans = launch_plans(mod, "cpu", target_name=KIND)
        for plan in plans:
            _check_plan(plan, target)
        return Artifact(source, {"plans": [p.to_dict() for p in plans],
                                 "layouts": [layout.to_dict() for layout in layouts]})

    def compile(self, artifact: Artifact, options: VulkanOptions) -> tuple[bytes, dict[str, Any]]:
        return compile_glsl(artifact.source, target_env=options.target_env,
                            validate=options.validate)

    def compile_key(self, artifact: Artifact, options: VulkanOptions) -> Any:
        return tool_versions()

    def load(self, binary: Binary, metadata: Mapping[str, Any], target: Any) -> VulkanExecutable:
        return VulkanExecutable(target, binary, metadata)


def _check_plan(plan: LaunchPlan, target: Any) -> None:
    limit = target.attrs.get("max_threads_per_block", 256)
    for step in plan.steps:
        for ref in step.args:
            if ref[0] == PARAM and ref[2] == "handle":
                param = plan.signature.params[ref[1]].name
                raise CodegenError(f"target 'vulkan': `{plan.name}` passes the handle {param!r} "
                                   f"to kernel `{step.kernel}`: only buffers and scalars can "
                                   "cross to a Vulkan kernel")
        if all(isinstance(b, int) for b in step.block):
            threads = step.block[0] * step.block[1] * step.block[2]  # type: ignore[operator]
            if threads > limit:
                raise CodegenError(f"target 'vulkan': kernel `{step.kernel}` runs {threads} "
                                   f"threads per workgroup; the target allows {limit} "
                                   "(max_threads_per_block)")


class VulkanFunction:
    """One entry function; calling it checks the arguments and runs its kernels."""

    def __init__(self, exe: VulkanExecutable, plan: LaunchPlan) -> None:
        self._exe = exe
        self.plan = plan
        self._check = plan.checker()

    @property
    def name(self) -> str:
        return self.plan.name

    def launches(self, args: Sequence[Any]) -> list[runtime.Launch]:
        """Every launch with its sizes evaluated and its arguments bound (nothing runs)."""
        out = []
        for bound in self.plan.bind(args, self._check):
            name = bound.step.kernel
            out.append(runtime.Launch(self._exe.spirv(name), self._exe.layouts[name],
                                      bound.grid, bound.block, list(bound.args)))
        return out

    def __call__(self, *args: Any) -> None:
        launches = self.launches(args)
        runtime.run(launches)

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}" for p in self.plan.signature.params)
        return f"<VulkanFunction {self.name}({params})>"


class VulkanExecutable(Executable):
    """The SPIR-V of a module's kernels (the binary), their GLSL, and the launch plans."""

    backend = "vulkan"

    def __init__(self, target: Any, binary: Binary, metadata: Mapping[str, Any]) -> None:
        plans = [LaunchPlan.from_dict(p) for p in metadata["plans"]]
        super().__init__(target, [p.name for p in plans], binary=binary, metadata=metadata)
        self.plans = {p.name: p for p in plans}
        self.layouts = {d["name"]: KernelLayout.from_dict(d) for d in metadata["layouts"]}
        self._modules = spirv_modules(binary.data, metadata)
        self._functions: dict[str, VulkanFunction] = {}

    def get_function(self, name: str) -> VulkanFunction:
        func = self._functions.get(name)
        if func is None:
            plan = self.plans.get(name)
            if plan is None:
                raise self._no_function(name)
            func = self._functions[name] = VulkanFunction(self, plan)
        return func

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
