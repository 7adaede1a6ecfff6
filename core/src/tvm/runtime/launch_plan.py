"""The launch plan: the host side of a device function as plain data, and its one evaluator.

After ``SplitHostDevice`` the host part of a function for a GPU-like target is a sequence of
``tirx.launch_kernel`` calls. At build time :func:`tvm.codegen.signature.launch_plans` turns each
such function into a :class:`LaunchPlan`: the function's argument :class:`Signature` and, per
launch, the kernel's name, its grid, block and dynamic shared memory, and where each kernel
argument comes from. Sizes are expression trees over the signature's variable names
(:func:`~tvm.runtime.arguments.evaluate_tree`), so a plan is JSON and an exported executable
launches exactly as a fresh one.

At call time :meth:`LaunchPlan.bind` checks the arguments (core's
:class:`~tvm.runtime.arguments.ArgumentChecker`), evaluates the sizes and returns the
:class:`BoundLaunch` list that a backend's runtime executes. Plans whose sizes are all constant
have them evaluated once (:attr:`LaunchStep.static`), which backends use for their fast paths.

A kernel argument is one of ``("array", i)`` (the i-th argument, an array), ``("param", i,
dtype)`` (the i-th argument passed on as it is: a scalar parameter, an opaque handle, a tensor
map; ``dtype`` is the kernel parameter's), ``("scalar", tree, dtype)`` (a value computed from
the bound variables) or ``("derived", i, kind, params)`` (a value the backend's runtime
computes from the i-th argument, an array: ``kind`` ``"cuda.tensor_map"`` is the TMA descriptor
of that array, :class:`tvm.tirx.op.HostDerived`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..error import TVMError
from .arguments import ArgumentChecker, Dim, Signature, evaluate_tree

__all__ = ["ARRAY", "DERIVED", "PARAM", "SCALAR", "BoundLaunch", "LaunchPlan", "LaunchStep"]

ARRAY, PARAM, SCALAR, DERIVED = "array", "param", "scalar", "derived"


@dataclass(frozen=True)
class LaunchStep:
    """One kernel launch. ``grid`` (blocks), ``block`` (threads per block) and ``smem``
    (dynamic shared memory bytes) are dimensions: ints or expression trees."""

    kernel: str
    args: tuple[tuple[Any, ...], ...]
    grid: tuple[Dim, Dim, Dim]
    block: tuple[Dim, Dim, Dim]
    smem: Dim = 0

    @property
    def static(self) -> bool:
        """Whether grid, block and shared memory are constants."""
        return all(isinstance(d, int) for d in (*self.grid, *self.block, self.smem))

    def to_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "args": [list(a) for a in self.args],
                "grid": list(self.grid), "block": list(self.block), "smem": self.smem}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> LaunchStep:
        grid, block = list(d["grid"]), list(d["block"])
        if len(grid) != 3 or len(block) != 3:
            raise ValueError(f"launch of {d.get('kernel')!r}: grid and block need 3 dimensions")
        for a in d["args"]:
            if not a or a[0] not in (ARRAY, PARAM, SCALAR, DERIVED):
                raise ValueError(f"launch of {d.get('kernel')!r}: bad argument reference {a!r}")
        return LaunchStep(str(d["kernel"]), tuple(tuple(a) for a in d["args"]),
                          (grid[0], grid[1], grid[2]), (block[0], block[1], block[2]),
                          d.get("smem", 0))


class BoundLaunch(NamedTuple):
    """A launch with its sizes evaluated and its arguments picked (arrays as given)."""

    step: LaunchStep
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem: int
    args: list[Any]


@dataclass(frozen=True)
class LaunchPlan:
    """The host side of one function: what it expects of its arguments and its launches."""

    signature: Signature
    steps: tuple[LaunchStep, ...]

    @property
    def name(self) -> str:
        return self.signature.name

    @property
    def kernels(self) -> list[str]:
        return list(dict.fromkeys(s.kernel for s in self.steps))

    def checker(self) -> ArgumentChecker:
        """The argument checker of this plan (build it once per executable function)."""
        return ArgumentChecker(self.signature)

    def bind(self, args: Sequence[Any], checker: ArgumentChecker | None = None, *,
             derive: Callable[[str, Any, Sequence[Any]], Any] | None = None
             ) -> list[BoundLaunch]:
        """Check ``args`` and evaluate every launch (nothing runs). ``derive(kind, array,
        params)`` computes the ``("derived", ...)`` arguments; a plan with one and no ``derive``
        is a :class:`~tvm.error.TVMError`. Raises the checker's ``TypeError``/``ValueError``
        naming the parameter, or a ``ValueError`` for an empty grid."""
        values = (checker or self.checker())(args)
        return [self._bind_step(step, args, values, derive) for step in self.steps]

    def _bind_step(self, step: LaunchStep, args: Sequence[Any], values: Mapping[str, Any],
                   derive: Callable[[str, Any, Sequence[Any]], Any] | None = None
                   ) -> BoundLaunch:
        grid = _dims(step.grid, values)
        block = _dims(step.block, values)
        smem = int(evaluate_tree(step.smem, values))
        if any(g <= 0 for g in grid):
            raise ValueError(f"{self.name}: kernel {step.kernel}: the grid {grid} from these "
                             "arguments is empty")
        picked = [args[ref[1]] if ref[0] in (ARRAY, PARAM) else
                  _derive(derive, ref, args, step) if ref[0] == DERIVED else
                  evaluate_tree(ref[1], values)
                  for ref in step.args]
        return BoundLaunch(step, grid, block, smem, picked)

    def to_dict(self) -> dict[str, Any]:
        return {"signature": self.signature.to_dict(), "steps": [s.to_dict() for s in self.steps]}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> LaunchPlan:
        return LaunchPlan(Signature.from_dict(d["signature"]),
                          tuple(LaunchStep.from_dict(s) for s in d["steps"]))


def _derive(derive: Callable[[str, Any, Sequence[Any]], Any] | None, ref: Sequence[Any],
            args: Sequence[Any], step: LaunchStep) -> Any:
    if derive is None:
        raise TVMError(f"kernel {step.kernel} takes a {ref[2]} derived from argument #{ref[1]}, "
                       "which this runtime does not compute")
    return derive(str(ref[2]), args[ref[1]], list(ref[3]))


def _dims(dims: Sequence[Dim], values: Mapping[str, Any]) -> tuple[int, int, int]:
    a, b, c = (int(evaluate_tree(d, values)) for d in dims)
    return a, b, c
