"""WebGPU's build contract and executable: lowered IR -> WGSL + launch plans -> WebGPU device.

>>> ex = tvm.compile(vadd, target="webgpu")
>>> print(ex.inspect_source())       # the WGSL, one module per kernel
>>> ex(a, b, c)                      # numpy arrays, through wgpu-native (lavapipe on a CPU)

:class:`WebGPUBuilder` is what the plugin's ``tvm_builders`` hook names for kind ``webgpu``:
``codegen`` prints every kernel as WGSL (:mod:`.codegen`) and turns every host function into
core's :class:`~tvm.runtime.launch_plan.LaunchPlan`; ``compile`` packages (and with
``check=True`` validates) the WGSL (:mod:`.compiler`); ``load`` makes the
:class:`WebGPUExecutable`. A call checks the arguments with core's checker, evaluates the
launch sizes and runs the launches in one submission (:mod:`.runtime`).
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
from .codegen import KernelLayout, generate_wgsl, split_modules
from .compiler import check_wgsl, package_wgsl
from .tags import KIND

__all__ = ["WebGPUBuilder", "WebGPUExecutable", "WebGPUFunction", "WebGPUOptions"]


@dataclass(frozen=True)
class WebGPUOptions(Options):
    """Compile options of target kind ``webgpu`` (``tvm.compile(f, "webgpu", check=True)``)."""

    check: bool = option(False, "validate every WGSL module with wgpu-native at build time "
                                "(needs a WebGPU adapter)")


class WebGPUBuilder(Builder):
    """Kind ``webgpu``: WGSL printed by :class:`~tvm_backend_webgpu.codegen.WGSLCodegen`,
    compiled by the WebGPU implementation when a pipeline is made (core caches nothing)."""

    kind = KIND
    options_type = WebGPUOptions
    language = "wgsl"
    binary_suffix = "wgsl"
    format = 1
    cached = False

    def codegen(self, mod: IRModule, target: Any, options: WebGPUOptions) -> Artifact:
        source, layouts = generate_wgsl(mod, target)
        # The arrays are host (numpy) arrays, copied to and from GPU buffers: device "cpu".
        plans = launch_plans(mod, "cpu", target_name=KIND)
        for plan in plans:
            _check_plan(plan, target)
        return Artifact(source, {"plans": [p.to_dict() for p in plans],
                                 "layouts": [layout.to_dict() for layout in layouts]})

    def compile(self, artifact: Artifact, options: WebGPUOptions) -> bytes:
        return package_wgsl(artifact.source, check=options.check)

    def load(self, binary: Binary, metadata: Mapping[str, Any], target: Any) -> WebGPUExecutable:
        return WebGPUExecutable(target, binary, metadata)


def _check_plan(plan: LaunchPlan, target: Any) -> None:
    limit = target.attrs.get("max_threads_per_block", 256)
    for step in plan.steps:
        for ref in step.args:
            if ref[0] == PARAM and ref[2] == "handle":
                param = plan.signature.params[ref[1]].name
                raise CodegenError(f"target 'webgpu': `{plan.name}` passes the handle {param!r} "
                                   f"to kernel `{step.kernel}`: only buffers and scalars can "
                                   "cross to a WebGPU kernel")
        if all(isinstance(b, int) for b in step.block):
            threads = step.block[0] * step.block[1] * step.block[2]  # type: ignore[operator]
            if threads > limit:
                raise CodegenError(f"target 'webgpu': kernel `{step.kernel}` runs {threads} "
                                   f"threads per workgroup; the target allows {limit} "
                                   "(max_threads_per_block)")


class WebGPUFunction:
    """One entry function; calling it checks the arguments and runs its kernels."""

    def __init__(self, exe: WebGPUExecutable, plan: LaunchPlan) -> None:
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
            out.append(runtime.Launch(self._exe.modules[name], self._exe.layouts[name],
                                      bound.grid, bound.block, list(bound.args)))
        return out

    def __call__(self, *args: Any) -> None:
        runtime.run(self.launches(args))

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}" for p in self.plan.signature.params)
        return f"<WebGPUFunction {self.name}({params})>"


class WebGPUExecutable(Executable):
    """The WGSL of a module's kernels (the binary) and the launch plans of its functions."""

    backend = "webgpu"

    def __init__(self, target: Any, binary: Binary, metadata: Mapping[str, Any]) -> None:
        plans = [LaunchPlan.from_dict(p) for p in metadata["plans"]]
        super().__init__(target, [p.name for p in plans], binary=binary, metadata=metadata)
        self.source = binary.data.decode("utf-8")
        self.plans = {p.name: p for p in plans}
        self.layouts = {d["name"]: KernelLayout.from_dict(d) for d in metadata["layouts"]}
        self.modules = split_modules(self.source)
        self._functions: dict[str, WebGPUFunction] = {}

    def get_function(self, name: str) -> WebGPUFunction:
        func = self._functions.get(name)
        if func is None:
            plan = self.plans.get(name)
            if plan is None:
                raise self._no_function(name)
            func = self._functions[name] = WebGPUFunction(self, plan)
        return func

    @property
    def kernel_names(self) -> list[str]:
        return list(self.modules)

    def inspect_source(self, kind: str = "") -> str:
        return self.source

    def check_wgsl(self) -> None:
        """Validate every WGSL module with wgpu-native (raises CompileError)."""
        check_wgsl(self.source)
