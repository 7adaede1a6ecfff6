"""Passes: module passes, per-function passes and ``Sequential``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, overload

from ..ir import IRModule, PrimFunc
from ._context import PassContext, PassInfo

__all__ = [
    "ModulePass",
    "Pass",
    "PrimFuncPass",
    "Sequential",
    "module_pass",
    "prim_func_pass",
]


class Pass:
    """A transformation of an :class:`~tvm.ir.IRModule`.

    Subclasses set ``name`` (defaults to the class name) and ``opt_level`` and implement
    :meth:`transform_module`. Typed options are the fields of a frozen dataclass: declare the
    subclass with ``@dataclasses.dataclass(frozen=True)`` and its fields are the options,
    shown by ``repr`` and :meth:`options`.

    Calling a pass runs it under :meth:`PassContext.current` (skip rules, instruments, dumps).
    A :class:`~tvm.ir.PrimFunc` argument is wrapped in a one-function module.
    """

    name: ClassVar[str] = ""
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()
    # A composite pass (Sequential) is not dumped itself: its stages are.
    is_composite: ClassVar[bool] = False

    @property
    def pass_name(self) -> str:
        return type(self).name or type(self).__name__

    @property
    def info(self) -> PassInfo:
        return PassInfo(self.pass_name, self.opt_level, self.required)

    def options(self) -> dict[str, Any]:
        """The pass's options (its dataclass fields)."""
        if dataclasses.is_dataclass(self):
            return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {}

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise NotImplementedError(f"pass {self.pass_name} does not implement transform_module")

    def __call__(self, mod: IRModule | PrimFunc) -> IRModule:
        if isinstance(mod, PrimFunc):
            mod = IRModule.from_expr(mod)
        if not isinstance(mod, IRModule):
            raise TypeError(f"pass {self.pass_name} expects an IRModule or PrimFunc, "
                            f"got {type(mod).__name__}")
        return PassContext.current().run(self, mod)

    def __str__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{self.pass_name}({opts})"

    __repr__ = __str__  # dataclass subclasses generate their own repr; str stays this form


class ModulePass(Pass):
    """A pass over the whole module."""


class PrimFuncPass(Pass):
    """A pass applied to every :class:`~tvm.ir.PrimFunc` of the module, one at a time.

    :meth:`transform_function` returns the new function, or None to remove it.
    """

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc | None:
        raise NotImplementedError(f"pass {self.pass_name} does not implement transform_function")

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        changed = False
        funcs: dict[str, PrimFunc] = {}
        for gv, func in mod.items():
            new = self.transform_function(func, mod, ctx)
            changed = changed or new is not func
            if new is not None:
                funcs[gv] = new
        return IRModule(funcs, mod.attrs) if changed else mod


class _Identified(Pass):
    """A pass whose name, opt level and requirements belong to the instance (``Sequential`` and
    the passes made from functions), not to its class."""

    def __init__(self, name: str, opt_level: int, required: Sequence[str]) -> None:
        self._name = name
        self._opt_level = opt_level
        self._required = tuple(required)

    @property
    def pass_name(self) -> str:
        return self._name

    @property
    def info(self) -> PassInfo:
        return PassInfo(self._name, self._opt_level, self._required)

    def __str__(self) -> str:
        return f"{self._name}()"

    __repr__ = __str__


class Sequential(_Identified, ModulePass):
    """Passes run in order; printable, and dumped stage by stage (one file per inner pass)."""

    is_composite = True

    def __init__(self, passes: Sequence[Pass] = (), name: str = "sequential",
                 opt_level: int = 0, required: Sequence[str] = ()) -> None:
        for p in passes:
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential {name!r}: {p!r} is not a Pass")
        super().__init__(name, opt_level, required)
        self.passes = list(passes)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        for p in self.passes:
            mod = ctx.run(p, mod)
        return mod

    def __iter__(self) -> Iterator[Pass]:
        return iter(self.passes)

    def __len__(self) -> int:
        return len(self.passes)

    def __getitem__(self, index: int) -> Pass:
        return self.passes[index]

    def __str__(self) -> str:
        if not self.passes:
            return f"Sequential({self._name!r}, [])"
        lines = [f"Sequential({self._name!r}, ["]
        for p in self.passes:
            inner = str(p).replace("\n", "\n  ")
            lines.append(f"  {inner},")
        lines.append("])")
        return "\n".join(lines)

    __repr__ = __str__


# -- function-built passes ---------------------------------------------------------------------
class _FunctionModulePass(_Identified, ModulePass):
    def __init__(self, fn: Callable[[IRModule, PassContext], IRModule], name: str,
                 opt_level: int, required: Sequence[str]) -> None:
        super().__init__(name, opt_level, required)
        self._fn = fn

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        out = self._fn(mod, ctx)
        if not isinstance(out, IRModule):
            raise TypeError(f"module pass {self._name} returned {type(out).__name__}, not an IRModule")
        return out


class _FunctionPrimFuncPass(_Identified, PrimFuncPass):
    def __init__(self, fn: Callable[[PrimFunc, IRModule, PassContext], PrimFunc | None],
                 name: str, opt_level: int, required: Sequence[str]) -> None:
        super().__init__(name, opt_level, required)
        self._fn = fn

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc | None:
        out = self._fn(func, mod, ctx)
        if out is not None and not isinstance(out, PrimFunc):
            raise TypeError(f"prim_func pass {self._name} returned {type(out).__name__}, not a PrimFunc")
        return out


@overload
def module_pass(fn: Callable[[IRModule, PassContext], IRModule], *, opt_level: int = 0,
                name: str | None = None, required: Sequence[str] = ()) -> ModulePass: ...
@overload
def module_pass(fn: None = None, *, opt_level: int = 0, name: str | None = None,
                required: Sequence[str] = ()) -> Callable[[Callable[..., IRModule]], ModulePass]: ...
def module_pass(fn: Any = None, *, opt_level: int = 0, name: str | None = None,
                required: Sequence[str] = ()) -> Any:
    """Make a module pass from ``fn(mod, ctx) -> IRModule``; usable as ``@module_pass`` or
    ``@module_pass(opt_level=0, name="x")``."""

    def make(f: Callable[[IRModule, PassContext], IRModule]) -> ModulePass:
        return _FunctionModulePass(f, name or f.__name__, opt_level, required)

    return make(fn) if fn is not None else make


@overload
def prim_func_pass(fn: Callable[[PrimFunc, IRModule, PassContext], PrimFunc | None], *,
                   opt_level: int = 0, name: str | None = None,
                   required: Sequence[str] = ()) -> PrimFuncPass: ...
@overload
def prim_func_pass(fn: None = None, *, opt_level: int = 0, name: str | None = None,
                   required: Sequence[str] = ()) -> Callable[[Callable[..., Any]], PrimFuncPass]: ...
def prim_func_pass(fn: Any = None, *, opt_level: int = 0, name: str | None = None,
                   required: Sequence[str] = ()) -> Any:
    """Make a per-function pass from ``fn(func, mod, ctx) -> PrimFunc | None``; usable as a
    decorator with or without arguments."""

    def make(f: Callable[[PrimFunc, IRModule, PassContext], PrimFunc | None]) -> PrimFuncPass:
        return _FunctionPrimFuncPass(f, name or f.__name__, opt_level, required)

    return make(fn) if fn is not None else make
