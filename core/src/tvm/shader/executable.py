"""The executable of a shader-style backend: lowered IR -> shaders + launch plans -> device.

A backend's builder prints one shader per kernel with a layout saying how the kernel's
parameters are bound, and turns every host function into core's
:class:`~tvm.runtime.launch_plan.LaunchPlan` (:func:`plan_artifact`, which also refuses what a
shader cannot take: handles; workgroups over the target's limit are refused before codegen by
:mod:`tvm.codegen.limits`). Its executable subclasses
:class:`ShaderExecutable`, saying how a bound launch becomes the runtime's launch
(:meth:`~ShaderExecutable.launch`) and how launches run (:meth:`~ShaderExecutable.run`); a
call checks the arguments with core's checker (:meth:`LaunchPlan.bind`), evaluates the launch
sizes and runs the launches in one submission.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..backend.contract import Artifact, Binary
from ..codegen.signature import launch_plans
from ..ir.function import IRModule
from ..runtime.launch_plan import BoundLaunch
from ..runtime.plan_executable import PlanExecutable, PlanFunction

__all__ = ["ShaderExecutable", "ShaderFunction", "plan_artifact"]


def plan_artifact(mod: IRModule, target: Any, kind: str, source: str,
                  layouts: Sequence[Any]) -> Artifact:
    """The codegen stage's artifact: ``source`` (every kernel's shader), the launch plans of
    ``mod``'s host functions and each kernel's parameter layout (anything with ``to_dict()``)."""
    # The arrays are host (numpy) arrays, copied to and from GPU buffers: device "cpu"; a
    # kernel binds buffers and scalars only (handles=False refuses an opaque handle).
    plans = launch_plans(mod, "cpu", target_name=kind, handles=False)
    return Artifact(source, {"plans": [p.to_dict() for p in plans],
                             "layouts": [layout.to_dict() for layout in layouts]})


class ShaderFunction(PlanFunction):
    """One entry function; calling it checks the arguments and runs its kernels."""

    _exe: ShaderExecutable

    def launches(self, args: Sequence[Any]) -> list[Any]:
        """Every launch with its sizes evaluated and its arguments bound (nothing runs)."""
        return [self._exe.launch(bound) for bound in self.bind(args)]

    def __call__(self, *args: Any) -> None:
        self._exe.run(self.launches(args))


class ShaderExecutable(PlanExecutable[ShaderFunction]):
    """A module's shaders (the binary), each kernel's parameter layout and the launch plans of
    its functions. Subclasses set ``backend``, ``layout_type`` (the layout class, with
    ``from_dict``) and ``function_type``, and define :meth:`launch` and :meth:`run`."""

    layout_type: ClassVar[Any]
    function_type = ShaderFunction

    def __init__(self, target: Any, binary: Binary, metadata: Mapping[str, Any]) -> None:
        super().__init__(target, binary, metadata)
        self.layouts = {d["name"]: self.layout_type.from_dict(d) for d in metadata["layouts"]}

    def launch(self, bound: BoundLaunch) -> Any:
        """The runtime's launch of one bound launch step (its kernel's shader and layout)."""
        raise NotImplementedError

    def run(self, launches: list[Any]) -> None:
        """Run ``launches`` in order, in one submission; arrays are updated in place."""
        raise NotImplementedError
