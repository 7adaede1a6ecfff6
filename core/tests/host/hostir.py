"""Hand-built lowered IR (flat buffers, loops, loads and stores) for the host backend tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tvm.ir import Buffer, For, ForKind, PrimFunc, Var


def make_func(name: str, buffers: Sequence[Buffer], body: Any,
              scalars: Sequence[Var] = ()) -> PrimFunc:
    """A PrimFunc whose parameters are ``buffers`` (by handle) then ``scalars``."""
    handles = [Var(b.name.lower() + "_h", "handle") for b in buffers]
    return PrimFunc([*handles, *scalars], body, dict(zip(handles, buffers)), name=name)


def loop(extent: Any, body_fn: Callable[[Var], Any], kind: ForKind = ForKind.SERIAL,
         name: str = "i", dtype: str = "int32", **kw: Any) -> For:
    v = Var(name, dtype)
    return For(v, 0, extent, kind, body_fn(v), **kw)


def identity(mod: Any) -> Any:
    return mod
