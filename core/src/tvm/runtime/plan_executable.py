"""Executables made of launch plans: the part every such backend shares.

A backend whose host code is core's :class:`~tvm.runtime.launch_plan.LaunchPlan` (the metadata
holds ``"plans"``, one dict per entry function) subclasses :class:`PlanExecutable` and names
its function class (a :class:`PlanFunction` subclass that launches the bound kernels); the
plans, the function cache, ``get_function`` and the argument checks are here, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from .executable import Executable
from .launch_plan import BoundLaunch, LaunchPlan

__all__ = ["PlanExecutable", "PlanFunction"]


class PlanFunction:
    """One entry function: its launch plan and core's argument checker for it. Subclasses
    define ``__call__`` (bind with :meth:`bind`, then launch)."""

    def __init__(self, exe: Any, plan: LaunchPlan) -> None:
        self._exe = exe
        self.plan = plan
        self._check = plan.checker()

    @property
    def name(self) -> str:
        return self.plan.name

    def bind(self, args: Sequence[Any]) -> list[BoundLaunch]:
        """Check ``args`` (bad arguments fail here, before any device is touched) and bind every
        launch step: its grid and block evaluated, its kernel arguments picked."""
        return self.plan.bind(args, self._check)

    def __call__(self, *args: Any) -> Any:
        """Check the arguments and run the kernels (each backend's own)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}" for p in self.plan.signature.params)
        return f"<{type(self).__name__} {self.name}({params})>"


F = TypeVar("F", bound=PlanFunction)


class PlanExecutable(Executable, Generic[F]):
    """An executable whose metadata carries the launch plans of its entry functions.
    Subclasses set ``backend`` and ``function_type``."""

    function_type: type[F]

    def __init__(self, target: Any, binary: Any, metadata: Mapping[str, Any]) -> None:
        plans = [LaunchPlan.from_dict(p) for p in metadata["plans"]]
        super().__init__(target, [p.name for p in plans], binary=binary, metadata=metadata)
        self.plans = {p.name: p for p in plans}
        self._functions: dict[str, F] = {}

    def get_function(self, name: str) -> F:
        func = self._functions.get(name)
        if func is None:
            plan = self.plans.get(name)
            if plan is None:
                raise self._no_function(name)
            func = self._functions[name] = self.function_type(self, plan)
        return func
