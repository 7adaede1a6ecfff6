"""OpenCL's build contract and executable: lowered IR -> OpenCL C + launch plans -> device.

>>> ex = tvm.compile(vadd, target="opencl")
>>> print(ex.inspect_source())       # the OpenCL C
>>> ex(a, b, c)                      # numpy arrays; on a GPU, or on the CPU through PoCL

:class:`OpenCLBuilder` is what the plugin's ``tvm_builders`` hook names for kind ``opencl``:
``codegen`` prints the kernels as OpenCL C (:mod:`.codegen`) and turns every host function into
core's :class:`~tvm.runtime.launch_plan.LaunchPlan`; ``compile`` builds the program once on the
device when there is one and packages the source (:mod:`.compiler`); ``load`` makes the
:class:`OpenCLExecutable`. Core parses the options, dumps the stages and writes/reads exported
files.

A call checks the arguments (core's :class:`~tvm.runtime.arguments.ArgumentChecker`, through
:meth:`LaunchPlan.bind`) before anything touches the device, copies the arrays to device
buffers, enqueues every kernel (global size = grid x work-group, local size = work-group) and
copies the arrays back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tvm.backend import sdk
from tvm.ir.function import IRModule

from . import runtime
from .codegen import generate_opencl
from .compiler import check_build, package_source
from .tags import KIND

__all__ = ["OpenCLBuilder", "OpenCLExecutable", "OpenCLFunction", "OpenCLOptions"]


@dataclass(frozen=True)
class OpenCLOptions(sdk.Options):
    """Compile options of kind ``opencl`` (``tvm.compile(f, "opencl", build_options="...")``)."""

    build_options: str = sdk.option("", "options for clBuildProgram (e.g. -cl-fast-relaxed-math)")
    check: bool = sdk.option(True, "build the program on this machine's device at compile time, "
                               "when there is one", key=False)


class OpenCLFunction(sdk.PlanFunction):
    """One entry function; calling it checks the arguments and launches its kernels."""

    _exe: OpenCLExecutable

    def __call__(self, *args: Any) -> None:
        bound = self.bind(args)  # bad arguments fail before the device is used
        device = self._exe.device()
        program = self._exe.program(device)
        arrays: list[Any] = []
        slots: dict[int, int] = {}
        launches = []
        for launch in bound:
            self._check_work_group(device, program, launch)
            values = [self._argument(ref, value, arrays, slots)
                      for ref, value in zip(launch.step.args, launch.args)]
            if self._exe.kernels.get(launch.step.kernel, {}).get("dyn_smem"):
                values.append(device.local_memory(launch.smem))
            global_size = tuple(g * b for g, b in zip(launch.grid, launch.block))
            launches.append((launch.step.kernel, global_size, launch.block, values))
        device.run(program, launches, arrays)

    @staticmethod
    def _argument(ref: Sequence[Any], value: Any, arrays: list[Any], slots: dict[int, int]
                  ) -> Any:
        import numpy as np

        if ref[0] == sdk.ARRAY:  # one device buffer per array, however often it is passed
            slot = slots.get(id(value))
            if slot is None:
                slot = slots[id(value)] = len(arrays)
                arrays.append(value)
            return ("array", slot)
        dtype = "uint8" if ref[-1] == "bool" else ref[-1]
        return np.array(value, dtype=dtype)[()]

    def _check_work_group(self, device: Any, program: Any, launch: sdk.BoundLaunch) -> None:
        size = launch.block[0] * launch.block[1] * launch.block[2]
        limit = device.kernel_work_group_limit(program, launch.step.kernel)
        if size > limit:
            raise runtime.OpenCLRuntimeUnavailable(
                f"{self.name}: kernel {launch.step.kernel} needs work-groups of {size} "
                f"work-items {launch.block}, and {device.name} runs it with at most {limit}; "
                "compile it with fewer threads per CTA")
        if launch.smem > device.local_mem_size:
            raise runtime.OpenCLRuntimeUnavailable(
                f"{self.name}: kernel {launch.step.kernel} needs {launch.smem} bytes of dynamic "
                f"__local memory, and {device.name} has {device.local_mem_size}")


class OpenCLExecutable(sdk.PlanExecutable[OpenCLFunction]):
    """The OpenCL C of a module's kernels (the binary) and the launch plans of its functions."""

    backend = "opencl"
    function_type = OpenCLFunction

    def __init__(self, target: Any, binary: sdk.Binary, metadata: Mapping[str, Any]) -> None:
        super().__init__(target, binary, metadata)
        self.source = binary.data.decode("utf-8")
        self.kernels: dict[str, dict[str, Any]] = dict(metadata.get("kernels", {}))
        self.build_options = str(metadata.get("build_options", ""))

    @property
    def kernel_names(self) -> list[str]:
        return sorted(self.kernels)

    def inspect_source(self, kind: str = "") -> str:
        return self.source

    def device(self) -> runtime.Device:
        """The device this executable runs on (the target's ``device_type`` and ``platform``);
        :class:`~tvm_backend_opencl.runtime.OpenCLRuntimeUnavailable` when there is none."""
        attrs = self.target.attrs
        try:
            return runtime.device_for(attrs["device_type"], attrs["platform"])
        except runtime.OpenCLRuntimeUnavailable as err:
            raise runtime.OpenCLRuntimeUnavailable(
                f"cannot run {self.entry_names} here: {err}. The OpenCL C is in "
                "ex.inspect_source()") from None

    def program(self, device: runtime.Device) -> Any:
        return device.program(self.source, self.build_options,
                              what=f"the OpenCL C of {', '.join(self.entry_names)}")


class OpenCLBuilder(sdk.Builder):
    """Kind ``opencl``: OpenCL C from :class:`~tvm_backend_opencl.codegen.OpenCLCodegen`,
    built by the driver for the device it runs on (so core caches nothing)."""

    kind = KIND
    options_type = OpenCLOptions
    language = "cl"
    binary_suffix = "cl"
    cached = False
    executable_type = OpenCLExecutable

    def codegen(self, mod: IRModule, target: Any, options: OpenCLOptions) -> sdk.Artifact:
        # The arrays are host (numpy) arrays, copied to and from device buffers: device "cpu".
        plans = sdk.launch_plans(mod, "cpu", target_name=KIND, handles=False)
        source, kernels = generate_opencl(mod, target)
        return sdk.Artifact(source, {
            "plans": [p.to_dict() for p in plans],
            "kernels": {k.name: {"dyn_smem": k.dyn_smem} for k in kernels},
            "build_options": options.build_options,
            # where compile() checks the build: the device the target runs on
            "device": {"device_type": target.attrs["device_type"],
                       "platform": target.attrs["platform"]},
        })

    def compile(self, artifact: sdk.Artifact, options: OpenCLOptions) -> tuple[bytes, dict[str, Any]]:
        built_on = None
        if options.check:
            target = artifact.metadata.get("device", {})
            names = ", ".join(p["signature"]["name"] for p in artifact.metadata["plans"])
            built_on = check_build(artifact.source, device_type=target.get("device_type", "all"),
                                   platform=target.get("platform", ""),
                                   options=options.build_options,
                                   what=f"the OpenCL C of {names or 'the module'}")
        return package_source(artifact.source), {"checked_on": built_on}
