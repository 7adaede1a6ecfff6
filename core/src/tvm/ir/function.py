"""Functions and modules."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .buffer import Buffer
from .dtype import DataType
from .expr import Var, convert
from .node import Node
from .stmt import Stmt, fold_binds

__all__ = ["IRModule", "LaunchParams", "PrimFunc"]


class LaunchParams(Node):
    """How a kernel is launched: ``grid``, ``block``, ``cluster`` (3 expressions each, over the
    host function's scalar parameters and buffer shapes) and ``dyn_smem_bytes``."""

    _fields = ("grid", "block", "cluster", "dyn_smem_bytes")
    __script_ctor__ = "launch_params"  # prints as T.launch_params(grid=..., ...)

    def __init__(self, grid: list[Any], block: list[Any], cluster: list[Any] | None = None,
                 dyn_smem_bytes: Any = 0) -> None:
        self.grid = [convert(x) for x in grid]
        self.block = [convert(x) for x in block]
        self.cluster = [convert(x) for x in (cluster or [1, 1, 1])]
        self.dyn_smem_bytes = convert(dyn_smem_bytes)

    def __repr__(self) -> str:
        return (f"LaunchParams(grid={self.grid}, block={self.block}, cluster={self.cluster}, "
                f"dyn_smem_bytes={self.dyn_smem_bytes})")


class PrimFunc(Node):
    """A function over scalars and buffers.

    ``params`` are variables; a handle parameter bound in ``buffer_map`` is a buffer argument.
    ``attrs`` holds function attributes (``global_symbol``, ``target``, ...). ``ret_type`` is
    the data type of the value a host function returns through ``T.ret(x)`` (``def f(...) ->
    T.int32``), or None.
    """

    _fields = ("params", "buffer_map", "body", "attrs", "ret_type")
    _def_fields = frozenset({"params", "buffer_map"})

    def __init__(self, params: Sequence[Var], body: Stmt, buffer_map: Mapping[Var, Buffer] | None = None,
                 attrs: Mapping[str, Any] | None = None, name: str | None = None,
                 ret_type: DataType | str | None = None) -> None:
        self.params = list(params)
        self.body = fold_binds(body)  # the seed's flat lets (Bind) become LetStmts
        self.buffer_map = dict(buffer_map or {})
        self.attrs = dict(attrs or {})
        self.ret_type = None if ret_type is None else DataType(ret_type)
        if name is not None:
            self.attrs.setdefault("global_symbol", name)

    @property
    def name(self) -> str:
        return str(self.attrs.get("global_symbol", "main"))

    def with_attr(self, key: str, value: Any) -> PrimFunc:
        attrs = dict(self.attrs)
        attrs[key] = value
        return self.with_fields(attrs=attrs)  # type: ignore[return-value]

    def with_body(self, body: Stmt) -> PrimFunc:
        return self.with_fields(body=body)  # type: ignore[return-value]

    def buffer_params(self) -> list[tuple[Var, Buffer | None]]:
        return [(p, self.buffer_map.get(p)) for p in self.params]


class IRModule(Node):
    """Named functions, compiled together."""

    _fields = ("functions", "attrs")

    def __init__(self, functions: Mapping[str, PrimFunc] | None = None,
                 attrs: Mapping[str, Any] | None = None) -> None:
        self.functions: dict[str, PrimFunc] = dict(functions or {})
        self.attrs = dict(attrs or {})

    @staticmethod
    def from_expr(func: PrimFunc) -> IRModule:
        return IRModule({func.name: func})

    def __getitem__(self, name: str) -> PrimFunc:
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"IRModule has no function {name!r}; it has {sorted(self.functions)}") from None

    def __setitem__(self, name: str, func: PrimFunc) -> None:
        self.functions[name] = func

    def __contains__(self, name: object) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def items(self) -> list[tuple[str, PrimFunc]]:
        return list(self.functions.items())

    def with_function(self, name: str, func: PrimFunc) -> IRModule:
        funcs = dict(self.functions)
        funcs[name] = func
        return IRModule(funcs, self.attrs)
