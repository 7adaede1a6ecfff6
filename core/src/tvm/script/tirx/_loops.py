"""Loop and kernel-form builders of ``T``: ``T.serial`` / ``parallel`` / ``vectorized`` /
``unroll`` / ``thread_binding``, typed immediates, ``T.launch_thread``, ``T.grid`` and the kernel
ids (``T.cta_id``, ``T.thread_id``, ...). Statement builders return specs the parser turns into
statements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...ir import expr as _E
from ...ir import stmt as _S
from ...ir.dtype import DataType


@dataclass
class LoopSpec:
    """``T.serial(...)`` and friends: the iterator of a ``for`` statement."""

    kind: _S.ForKind
    start: Any
    stop: Any
    thread: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)


def _loop(kind: _S.ForKind) -> Callable[..., LoopSpec]:
    def make(start: Any, stop: Any = None, *, annotations: dict[str, Any] | None = None) -> LoopSpec:
        if stop is None:
            start, stop = 0, start
        return LoopSpec(kind, start, stop, None, dict(annotations or {}))

    make.__name__ = make.__qualname__ = kind.value
    make.__doc__ = f"``for i in T.{kind.value}(extent)`` or ``(start, stop)``: a {kind.value} loop."
    return make


def serial(start: Any, stop: Any = None, *, annotations: dict[str, Any] | None = None,
           unroll: bool | None = None) -> LoopSpec:
    """``for i in T.serial(n)`` or ``(start, stop)``: a serial loop. ``unroll=True`` keeps the
    loop and asks the compiler to unroll it (annotation ``pragma_unroll``: CUDA's ``#pragma
    unroll``); ``unroll=False`` forbids unrolling (``disable_unroll``), as in the seed."""
    ann = dict(annotations or {})
    if unroll is not None:
        ann["pragma_unroll" if unroll else "disable_unroll"] = True
    if stop is None:
        start, stop = 0, start
    return LoopSpec(_S.ForKind.SERIAL, start, stop, None, ann)


parallel = _loop(_S.ForKind.PARALLEL)
vectorized = _loop(_S.ForKind.VECTORIZED)
unroll = _loop(_S.ForKind.UNROLLED)


def thread_binding(start: Any, stop: Any = None, *, thread: str,
                   annotations: dict[str, Any] | None = None) -> LoopSpec:
    """``for tx in T.thread_binding(128, thread="threadIdx.x")``: a loop bound to a thread axis."""
    if stop is None:
        start, stop = 0, start
    return LoopSpec(_S.ForKind.THREAD_BINDING, start, stop, thread, dict(annotations or {}))


def IntImm(dtype: str | DataType, value: Any) -> _E.IntImm:  # noqa: N802 - the seed's name
    """``T.IntImm("int32", 3)``: the classic immediate constructor (range-checked, as
    ``T.int32(3)``, which the printer writes)."""
    dt = DataType(str(dtype))
    if not (dt.is_integer or dt.is_bool) or dt.lanes != 1:
        raise TypeError(f"T.IntImm makes an integer or bool immediate, not a {dt} one; use "
                        f"T.FloatImm for floats")
    return _E.IntImm(dt, value)


def FloatImm(dtype: str | DataType, value: Any) -> _E.PrimExpr:  # noqa: N802 - the seed's name
    """``T.FloatImm("float16", 1.5)``: the classic float immediate constructor (a finite value
    past the type's range is an error, as for ``T.float16(...)``)."""
    dt = DataType(str(dtype))
    if not dt.is_float or dt.lanes != 1:
        raise TypeError(f"T.FloatImm makes a float immediate, not a {dt} one; use T.IntImm for "
                        f"integers")
    return _E.const(float(value), dt)


StringImm = _E.StringImm


@dataclass
class LaunchThreadSpec:
    """``x = T.launch_thread("threadIdx.x", n)``: the classic builder of a thread axis."""

    thread: str
    extent: Any


_THREAD_TAGS = tuple(f"{k}.{a}" for k in ("blockIdx", "threadIdx") for a in "xyz")


def launch_thread(thread: str, extent: Any) -> LaunchThreadSpec:
    """``bx = T.launch_thread("blockIdx.x", 4)`` (over the rest of the block) or ``with
    T.launch_thread("threadIdx.x", 128) as tx:``: the seed's classic thread-axis builder, the
    loop ``for bx in T.thread_binding(4, thread="blockIdx.x")`` here (and printed so)."""
    if thread not in _THREAD_TAGS:
        raise ValueError(f"T.launch_thread: unknown thread axis {thread!r}; expected one of "
                         f"{', '.join(_THREAD_TAGS)}")
    return LaunchThreadSpec(thread, extent)


@dataclass
class GridSpec:
    extents: tuple[Any, ...]


def grid(*extents: Any) -> GridSpec:
    """``for i, j in T.grid(4, 8)``: nested serial loops."""
    if not extents:
        raise TypeError("T.grid needs at least one extent")
    return GridSpec(tuple(extents))


# -- kernel form ------------------------------------------------------------------------------


@dataclass
class ScopeIdSpec:
    kind: str
    #: None for the deferred form ``T.thread_id()``: the extent the other ids imply
    extents: list[Any] | None


def _scope_id(kind: str) -> Callable[..., ScopeIdSpec]:
    def make(extents: Sequence[Any] | None = None) -> ScopeIdSpec:
        if extents is None:
            return ScopeIdSpec(kind, None)
        if not isinstance(extents, (list, tuple)):
            raise TypeError(f"T.{kind} expects a list of extents, e.g. T.{kind}([32])")
        if not extents:
            raise TypeError(f"T.{kind}([]) has no extents; write T.{kind}([n]), or T.{kind}() "
                            f"for the extent the kernel's other ids imply")
        return ScopeIdSpec(kind, list(extents))

    make.__name__ = make.__qualname__ = kind
    make.__doc__ = (f"``x = T.{kind}([n])`` / ``x, y = T.{kind}([n, m])``: kernel index "
                    f"variables; ``x = T.{kind}()``: one index whose extent the kernel's other "
                    f"ids imply (e.g. ``T.thread_id()`` beside ``T.warp_id([4])``).")
    return make


for _kind in _S.SCOPE_ID_KINDS:
    globals()[_kind] = _scope_id(_kind)
