"""What ``tvm.compile(f, target="apple/m1-gpu")`` returns: the MSL of the kernels and a plan of
the launches, run on an Apple GPU (macOS) or, on request, on the CPU emulator.

>>> ex = tvm.compile(vadd, target="apple/m1-gpu")
>>> print(ex.inspect_source())       # the MSL
>>> ex(a, b, c)                      # on macOS with pyobjc-framework-Metal; else a clear error
>>> ex.emulate(a, b, c)              # anywhere with g++: the same kernels on the CPU
>>> ex.check_msl()                   # the C++-shim syntax check of the MSL

The host side of a function (``tirx.is_host`` after ``SplitHostDevice``) is a sequence of
``tirx.launch_kernel`` calls; it is turned into a :class:`LaunchPlan` at build time and
interpreted here: arguments are checked by core's :class:`~tvm.runtime.arguments.ArgumentChecker`
against the function's :class:`~tvm.runtime.arguments.Signature`, launch sizes are evaluated
from the values it binds, and every kernel is dispatched with its arguments bound to
``[[buffer(0)]]``, ``[[buffer(1)]]``, ... in order (scalars as ``constant T&``).

A plan is plain data (the signature and launch sizes as expression trees over its variable
names), so ``export_library`` writes it as JSON and a loaded executable checks and launches
exactly as a freshly compiled one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tvm.error import TVMError
from tvm.runtime.arguments import ArgumentChecker, Dim, Signature, evaluate_tree
from tvm.runtime.executable import Executable, read_container

__all__ = ["LaunchPlan", "LaunchStep", "MetalExecutable", "MetalFunction", "build_module",
           "load_executable"]

BUILD_OPTIONS = {
    "check": "run the C++-shim syntax check (check_msl) on the MSL at build time (default False)",
}
_FORMAT = 2  # bump when the payload layout changes (2: JSON plans with a Signature)


@dataclass(frozen=True)
class LaunchStep:
    """One kernel launch: ``args`` are ``("array", param index)`` or ``("scalar", tree,
    dtype)``; ``grid`` (threadgroups) and ``block`` (threads per threadgroup) are expression
    trees (:func:`tvm.runtime.arguments.evaluate_tree`) over the signature's variables."""

    kernel: str
    args: tuple[tuple[Any, ...], ...]
    grid: tuple[Dim, Dim, Dim]
    block: tuple[Dim, Dim, Dim]

    def to_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "args": [list(a) for a in self.args],
                "grid": list(self.grid), "block": list(self.block)}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> LaunchStep:
        grid, block = d["grid"], d["block"]
        return LaunchStep(d["kernel"], tuple(tuple(a) for a in d["args"]),
                          (grid[0], grid[1], grid[2]), (block[0], block[1], block[2]))


@dataclass(frozen=True)
class LaunchPlan:
    """The host side of one function: what it expects of its arguments and its launches."""

    signature: Signature
    steps: tuple[LaunchStep, ...]

    @property
    def name(self) -> str:
        return self.signature.name

    def to_dict(self) -> dict[str, Any]:
        return {"signature": self.signature.to_dict(), "steps": [s.to_dict() for s in self.steps]}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> LaunchPlan:
        return LaunchPlan(Signature.from_dict(d["signature"]),
                          tuple(LaunchStep.from_dict(s) for s in d["steps"]))


Launcher = Callable[[str, tuple[int, int, int], tuple[int, int, int], list[Any]], None]


class MetalFunction:
    """One entry function; calling it checks the arguments and launches its kernels."""

    def __init__(self, exe: MetalExecutable, plan: LaunchPlan) -> None:
        self._exe = exe
        self.plan = plan
        self._check = ArgumentChecker(plan.signature)

    @property
    def name(self) -> str:
        return self.plan.name

    def __call__(self, *args: Any) -> None:
        self.run(args, self._exe._gpu_launcher())

    def emulate(self, *args: Any) -> None:
        """Run on the CPU emulator (:mod:`tvm_backend_metal.emulator`)."""
        self.run(args, self._exe._emulator_launcher())

    def run(self, args: Sequence[Any], launch: Launcher) -> None:
        for step, grid, block, buffers in self.launches(args):
            launch(step.kernel, grid, block, buffers)

    def launches(self, args: Sequence[Any]) -> list[tuple[LaunchStep, tuple, tuple, list[Any]]]:
        """Every launch with its evaluated sizes and bound buffers (nothing runs)."""
        import numpy as np

        values = self._check(args)
        out = []
        for step in self.plan.steps:
            grid = tuple(int(evaluate_tree(g, values)) for g in step.grid)
            block = tuple(int(evaluate_tree(b, values)) for b in step.block)
            buffers: list[Any] = []
            for ref in step.args:
                if ref[0] == "array":
                    buffers.append(args[ref[1]])
                else:
                    buffers.append(np.array([evaluate_tree(ref[1], values)],
                                            dtype=_np_dtype(ref[2])))
            out.append((step, grid, block, buffers))
        return out

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}" for p in self.plan.signature.params)
        return f"<MetalFunction {self.name}({params})>"


class MetalExecutable(Executable):
    """The MSL of a module's kernels and the launch plans of its functions."""

    backend = "metal"

    def __init__(self, target: Any, source: str, plans: Sequence[LaunchPlan]) -> None:
        super().__init__(target, [p.name for p in plans])
        self.source = source
        self.plans = {p.name: p for p in plans}
        self._functions: dict[str, MetalFunction] = {}
        self._gpu_kernels: dict[str, Any] = {}

    # -- functions ------------------------------------------------------------------------
    def get_function(self, name: str) -> MetalFunction:
        func = self._functions.get(name)
        if func is not None:
            return func
        plan = self.plans.get(name)
        if plan is None:
            raise KeyError(f"this executable has no function {name!r}; it has {sorted(self.plans)}")
        func = self._functions[name] = MetalFunction(self, plan)
        return func

    def emulate(self, *args: Any) -> None:
        """Run the entry function on the CPU emulator instead of a GPU (any OS with g++)."""
        self.get_function(self.entry_name).emulate(*args)

    @property
    def kernel_names(self) -> list[str]:
        return sorted({s.kernel for p in self.plans.values() for s in p.steps})

    def inspect_source(self, kind: str = "") -> str:
        return self.source

    def check_msl(self, **kwargs: Any) -> None:
        """Syntax-check the MSL with the C++ shim (raises CompileError)."""
        from .msl_check import check_msl

        check_msl(self.source, filename=f"{self.entry_names[0] if self.entry_names else 'mod'}"
                                        ".metal", **kwargs)

    # -- launchers ------------------------------------------------------------------------
    def _gpu_launcher(self) -> Launcher:
        from . import runtime

        reason = runtime.unavailable_reason()
        if reason is not None:
            raise runtime.MetalRuntimeUnavailable(
                f"cannot run {self.entry_names} on an Apple GPU here: {reason}. The MSL is in "
                "ex.inspect_source(); ex.emulate(*args) runs it on the CPU emulator")

        def launch(kernel: str, grid: tuple, block: tuple, buffers: list[Any]) -> None:
            compiled = self._gpu_kernels.get(kernel)
            if compiled is None:
                compiled = self._gpu_kernels[kernel] = runtime.compile(self.source, kernel)
            compiled(grid, block, buffers)

        return launch

    def _emulator_launcher(self) -> Launcher:
        from .emulator import compile_msl

        def launch(kernel: str, grid: tuple, block: tuple, buffers: list[Any]) -> None:
            compile_msl(self.source, kernel, filename=f"{kernel}.metal")(grid, block, buffers)

        return launch

    # -- saving ---------------------------------------------------------------------------
    def export_header(self) -> dict[str, Any]:
        return {"kernels": self.kernel_names, "metal_format": _FORMAT}

    def export_payload(self) -> bytes:
        plans = [p.to_dict() for p in self.plans.values()]
        return json.dumps({"source": self.source, "plans": plans}).encode("utf-8")


# -- building -----------------------------------------------------------------------------


def build_module(mod: Any, target: Any, options: Mapping[str, Any]) -> MetalExecutable:
    """The ``tvm_build_module`` hook for kind ``metal``: MSL of the kernels + launch plans."""
    unknown = sorted(set(options) - set(BUILD_OPTIONS))
    if unknown:
        raise TypeError(f"unknown compile option(s) {unknown} for target 'metal'; known: "
                        f"{', '.join(sorted(BUILD_OPTIONS))}")
    from .codegen import generate_msl

    source, _ = generate_msl(mod, target)
    plans = [_plan(name, func, mod) for name, func in mod.functions.items()
             if func.attrs.get("tirx.is_host")]
    ex = MetalExecutable(target, source, plans)
    if options.get("check"):
        ex.check_msl()
    return ex


def load_executable(path_or_bytes: Any, header: Mapping[str, Any]) -> MetalExecutable | None:
    if header.get("backend") != "metal":
        return None
    from tvm.target import Target

    header, payload = read_container(path_or_bytes)
    version = header.get("metal_format", 0)
    if version > _FORMAT:
        raise TVMError(f"this executable was written by a newer tvm-backend-metal (format "
                       f"{version}); upgrade tvm-backend-metal")
    if version < _FORMAT:
        raise TVMError(f"this executable has metal format {version} (pickled launch plans), "
                       f"which this tvm-backend-metal no longer reads; export it again")
    data = json.loads(payload.decode("utf-8"))
    plans = [LaunchPlan.from_dict(p) for p in data["plans"]]
    return MetalExecutable(Target(header["target"]), data["source"], plans)


def _plan(name: str, host: Any, mod: Any) -> LaunchPlan:
    from tvm.ir import expr as E
    from tvm.ir import stmt as S
    from tvm.tirx.transform import function_signature
    from tvm.tirx.transform.signature import VarNames, expr_tree, signature_from_func

    names = VarNames()
    symbol = str(host.attrs.get("global_symbol", name))
    signature = signature_from_func(host, "cpu", name=symbol, names=names)
    specs = function_signature(host)
    by_data = {id(s.data): i for i, s in enumerate(specs) if s.kind == "buffer"}
    steps = []
    for stmt in _flat(host.body):
        if isinstance(stmt, S.Evaluate) and isinstance(stmt.value, (E.IntImm, E.FloatImm)):
            continue
        call = stmt.value if isinstance(stmt, S.Evaluate) else None
        if not (isinstance(call, E.Call) and call.op.name == "tirx.launch_kernel"):
            raise TVMError(f"target 'metal': the host part of `{name}` must only launch kernels, "
                           f"found a {type(stmt).__name__}; move the computation into the kernel")
        kernel_name = call.args[0].value
        kernel = mod.functions.get(kernel_name)
        if kernel is None:
            raise TVMError(f"`{name}` launches `{kernel_name}`, which is not in the module")
        launch = kernel.attrs["tirx.launch"]
        args: list[tuple[Any, ...]] = []
        for arg, param in zip(call.args[1:], kernel.params):
            if isinstance(arg, E.Var) and id(arg) in by_data:
                args.append(("array", by_data[id(arg)]))
            elif isinstance(arg, E.PrimExpr) and not arg.dtype.is_handle:
                args.append(("scalar", expr_tree(arg, names), str(param.dtype)))
            else:
                raise TVMError(f"`{name}` passes {arg} to kernel `{kernel_name}`: only buffer "
                               "arguments and scalars can cross to a Metal kernel")
        grid = tuple(expr_tree(g, names) for g in launch.grid)
        block = tuple(expr_tree(b, names) for b in launch.block)
        steps.append(LaunchStep(kernel_name, tuple(args), (grid[0], grid[1], grid[2]),
                                (block[0], block[1], block[2])))
    return LaunchPlan(signature, tuple(steps))


def _flat(stmt: Any) -> list[Any]:
    from tvm.ir import stmt as S

    if isinstance(stmt, S.SeqStmt):
        return [x for s in stmt.seq for x in _flat(s)]
    return [stmt]


def _np_dtype(name: str) -> Any:
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return name
