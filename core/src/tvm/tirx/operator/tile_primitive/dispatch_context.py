"""``DispatchContext``: what a dispatch variant knows about the call it lowers.

The context carries the target, the call's execution scope (``scope_kind``), the threads of
every scope around the call (computed from the kernel form's ``ScopeIdDef``s that enclose it;
host-form code has one thread everywhere), and callbacks through which a variant asks for
allocations and init statements. It also knows how to synchronise the threads of a scope on the
target: backends fill a table with :func:`register_scope_barrier`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...._registry import Registry
from ....error import DispatchFail
from ....ir import (
    EXEC_SCOPES,
    Buffer,
    IntImm,
    PrimExpr,
    Range,
    ScopeIdDef,
    Stmt,
    TilePrimitiveCall,
    Var,
    const,
)
from ....ir._attr_is import AttrIs
from ....ir.stmt import resolve_scope_ids
from .common import fold_add, fold_mul

__all__ = [
    "SCOPE_BARRIER_REGISTRY", "SERIAL", "DispatchCallbacks", "DispatchContext", "ThreadInfo",
    "register_scope_barrier",
]

WARP_SIZE = 32
WARPGROUP_SIZE = 128

# the seed's callback names, for variants ported from it
kPrivateAlloc = "private_alloc"
kDeviceInitStmt = "device_init_stmt"
kHostInitStmt = "host_init_stmt"


class _Serial:
    """Marker: the threads of a scope run one after another (the host C target)."""

    def __repr__(self) -> str:
        return "SERIAL"


SERIAL: Any = _Serial()
"""Pass as the barrier of :func:`register_scope_barrier` for a target whose threads run one
after another: no barrier is needed, and a scope's collective op is done by its thread 0."""

BarrierFn = Callable[["DispatchContext", str], Stmt]
SCOPE_BARRIER_REGISTRY: Registry[tuple[str, str], Any] = Registry("scope barrier")


def register_scope_barrier(target_kind: str, scope: str, barrier: BarrierFn | Any, *,
                           override: bool = False) -> Any:
    """Say how the threads of ``scope`` synchronise on ``target_kind``.

    ``barrier(sctx, scope) -> Stmt`` builds the barrier statement (``__syncthreads()`` for a CTA
    on CUDA, a named barrier for a warpgroup, ...), or ``barrier`` is :data:`SERIAL` for targets
    whose threads run one after another. ``scope`` may be ``"*"`` for every scope. The generic
    fallback variants put the barrier after a collective op whose scope has several threads.
    """
    if scope != "*" and scope not in EXEC_SCOPES:
        raise ValueError(f"unknown execution scope {scope!r}; expected one of {EXEC_SCOPES} or '*'")
    if barrier is not SERIAL and not callable(barrier):
        raise TypeError("barrier must be a callable (sctx, scope) -> Stmt or tvm's SERIAL marker")
    return SCOPE_BARRIER_REGISTRY.register((target_kind, scope), barrier, override=override)


@dataclass
class ThreadInfo:
    """The threads around a call, from the kernel form's index definitions.

    ``tid`` is the linear thread index inside the CTA, ``cta_threads`` the CTA's thread count;
    ``cta_in_cluster`` / ``cluster_ctas`` place the CTA in its cluster. ``named`` holds the
    derived ids the kernel defined itself (``lane_id``, ``warp_id``, ``thread_id_in_wg``, ...),
    preferred over arithmetic on ``tid``. ``var_ranges`` gives every index variable's range.
    """

    tid: PrimExpr = field(default_factory=lambda: const(0, "int32"))
    cta_threads: PrimExpr = field(default_factory=lambda: const(1, "int32"))
    cta_in_cluster: PrimExpr = field(default_factory=lambda: const(0, "int32"))
    cluster_ctas: PrimExpr = field(default_factory=lambda: const(1, "int32"))
    named: dict[str, PrimExpr] = field(default_factory=dict)
    var_ranges: dict[Var, Range] = field(default_factory=dict)
    in_kernel: bool = False
    #: the kernel's resolved index definitions in scope (innermost last)
    defs: tuple[ScopeIdDef, ...] = ()
    #: the conditions of the ``if`` statements whose then-branch holds the call, outermost first
    guards: tuple[PrimExpr, ...] = ()
    #: the loops (not thread-bound) around the call, outermost first: a variant whose scratch
    #: memory is reused when the call runs again needs to know whether it can run again
    loops: tuple[Var, ...] = ()

    @staticmethod
    def from_defs(defs: Sequence[ScopeIdDef], in_kernel: bool = False) -> ThreadInfo:
        """Thread information from the ``ScopeIdDef``s in scope (innermost last)."""
        info = ThreadInfo(in_kernel=in_kernel or bool(defs))
        defs, _ = resolve_scope_ids(defs)  # T.thread_id(): the extent the others imply
        info.defs = tuple(defs)
        by_kind: dict[str, ScopeIdDef] = {}
        for d in defs:
            by_kind[d.kind] = d
        for d in defs:
            for v, e in zip(d.vars, d.extents):
                info.var_ranges[v] = Range(const(0, e.dtype), e)
        for kind in ("lane_id", "warp_id", "thread_id_in_wg", "warpgroup_id", "warp_id_in_wg"):
            if kind in by_kind and len(by_kind[kind].vars) == 1:
                info.named[kind] = by_kind[kind].vars[0]
        tid = _linear_tid(by_kind)
        if tid is not None:
            info.tid, info.cta_threads = tid
        if "cta_id_in_cluster" in by_kind:
            d = by_kind["cta_id_in_cluster"]
            info.cta_in_cluster, info.cluster_ctas = _linearize(d.vars, d.extents)
        return info


def _linearize(vars_: Sequence[PrimExpr], extents: Sequence[PrimExpr]) -> tuple[PrimExpr, PrimExpr]:
    """``x + y*X + z*X*Y`` and ``X*Y*Z`` (the first variable is the fastest, like threadIdx.x)."""
    index: PrimExpr = const(0, "int32")
    stride: PrimExpr = const(1, "int32")
    for v, e in zip(vars_, extents):
        index = fold_add(index, fold_mul(v, stride))
        stride = fold_mul(stride, e)
    return index, stride


def _linear_tid(by_kind: dict[str, ScopeIdDef]) -> tuple[PrimExpr, PrimExpr] | None:
    if "thread_id" in by_kind:
        d = by_kind["thread_id"]
        return _linearize(d.vars, d.extents)
    # Only derived ids: rebuild the thread index from the finest set that covers the CTA.
    for outer, inner, size in (("warp_id", "lane_id", WARP_SIZE),
                               ("warpgroup_id", "thread_id_in_wg", WARPGROUP_SIZE)):
        if outer in by_kind and inner in by_kind:
            o, i = by_kind[outer], by_kind[inner]
            return (fold_add(fold_mul(o.vars[0], size), i.vars[0]),
                    fold_mul(o.extents[0], size))
    if {"warpgroup_id", "warp_id_in_wg", "lane_id"} <= set(by_kind):
        g, w, lane = by_kind["warpgroup_id"], by_kind["warp_id_in_wg"], by_kind["lane_id"]
        tid = fold_add(fold_add(fold_mul(g.vars[0], WARPGROUP_SIZE), fold_mul(w.vars[0], WARP_SIZE)),
                       lane.vars[0])
        warps = w.extents[0]
        if isinstance(g.extents[0], IntImm) and g.extents[0].value == 1 and \
                isinstance(warps, IntImm) and warps.value < WARPGROUP_SIZE // WARP_SIZE:
            # one warpgroup of fewer warps (T.warp_id_in_wg([1])): the CTA is those warps
            return tid, fold_mul(warps, WARP_SIZE)
        return tid, fold_mul(g.extents[0], WARPGROUP_SIZE)
    if {"warp_id_in_wg", "lane_id"} <= set(by_kind):  # one warpgroup, of these warps
        w, lane = by_kind["warp_id_in_wg"], by_kind["lane_id"]
        return (fold_add(fold_mul(w.vars[0], WARP_SIZE), lane.vars[0]),
                fold_mul(w.extents[0], WARP_SIZE))
    for kind in ("lane_id", "thread_id_in_wg"):
        if kind in by_kind:
            d = by_kind[kind]
            return d.vars[0], d.extents[0]
    return None


@dataclass
class DispatchCallbacks:
    """What the variants of one function asked for: allocations (placed at the start of the
    kernel, or of the function in host form), device init statements (after the allocations)
    and host init statements (at the start of the function, before the kernel)."""

    allocs: list[Buffer] = field(default_factory=list)
    device_init: list[Stmt] = field(default_factory=list)
    host_init: list[Stmt] = field(default_factory=list)
    cache: dict[Hashable, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.allocs or self.device_init or self.host_init)

    def get(self, name: str, default: Any = None) -> Any:
        """The seed's read by callback name: ``callbacks.get(kHostInitStmt, [])`` is
        :attr:`host_init` (``kDeviceInitStmt``: :attr:`device_init`, ``kPrivateAlloc``:
        :attr:`allocs`); ``default`` where that list is empty."""
        fields = {kHostInitStmt: "host_init", kDeviceInitStmt: "device_init",
                  kPrivateAlloc: "allocs"}
        if name not in fields:
            raise KeyError(f"no dispatch callback {name!r}; the callbacks are "
                           f"{', '.join(map(repr, fields))}")
        value = getattr(self, fields[name])
        return value if value else default


class DispatchContext:
    """The context a dispatch variant receives with the call it lowers.

    ``target`` is the :class:`~tvm.target.Target`; ``scope_kind`` the call's execution scope
    (``thread``, ``warp``, ``warpgroup``, ``cta`` or ``cluster``); ``threads`` the
    :class:`ThreadInfo` around the call.

    ``inter`` and ``intra`` describe the threads that run the call, as the kernel's ``if``
    conditions on its thread ids narrow them (:mod:`tvm.tirx.exec_context`): ``inter`` says which
    instances of the call's scope are active, ``intra`` which threads inside one instance. Each
    maps an axis (``laneid``, ``warpid``, ``cta_id`` or ``cbx``/``cby``/..., ``wgid``,
    ``wid_in_wg``) to ``(extent, offset)``, or ``(extent, offset, stride)`` for a strided range,
    in ``IntImm`` values; the offset of the lane ``T.ptx.elect_sync()`` picks is
    ``T.selector(lane_id, <condition>)``. Both are empty outside a kernel of constant thread
    count or when the scope cannot group the active threads.
    They are information only (computed when first read) and never make lowering fail.
    """

    def __init__(self, target: Any, scope_kind: str = "thread",
                 launch_params: Mapping[str, Any] | None = None,
                 var_range_map: Mapping[Var, Range] | None = None, *,
                 op_call: TilePrimitiveCall | None = None, threads: ThreadInfo | None = None,
                 callbacks: DispatchCallbacks | None = None,
                 shared_state: dict[str, Any] | None = None) -> None:
        """``DispatchContext(target, ExecScope("thread"), {}, {})`` is the seed's positional
        form: ``launch_params`` (kept as given) and ``var_range_map`` (the ranges of the index
        variables, used when ``threads`` is not given)."""
        if scope_kind not in EXEC_SCOPES:
            raise ValueError(f"unknown execution scope {scope_kind!r}; expected one of {EXEC_SCOPES}")
        self.target = target
        self.scope_kind = str(scope_kind)
        self.op_call = op_call
        self.launch_params = dict(launch_params or {})
        if threads is None:
            threads = ThreadInfo(var_ranges=dict(var_range_map or {}))
        elif var_range_map:
            raise ValueError("give the index ranges once: in threads= or as var_range_map")
        self.threads = threads
        self.callbacks = callbacks if callbacks is not None else DispatchCallbacks()
        self.shared_state = shared_state if shared_state is not None else {}
        self.alloc_only = False
        self._split: tuple[dict[str, tuple[PrimExpr, ...]], dict[str, tuple[PrimExpr, ...]]] | None
        self._split = None

    @classmethod
    def for_call(cls, target: Any, op_call: TilePrimitiveCall, **kwargs: Any) -> DispatchContext:
        return cls(target, op_call.scope, op_call=op_call, **kwargs)

    # -- target --------------------------------------------------------------------------
    @property
    def target_kind(self) -> str:
        kind = getattr(self.target, "kind", None)
        return getattr(kind, "name", str(self.target))

    def is_target(self, kind: str) -> bool:
        """True if the target is of kind ``kind`` or lists ``kind`` among its keys."""
        return kind == self.target_kind or kind in tuple(getattr(self.target, "keys", ()))

    @property
    def exec_scope(self) -> str:
        return self.scope_kind

    is_thread = AttrIs("scope_kind", "thread")
    is_warp = AttrIs("scope_kind", "warp")
    is_warpgroup = AttrIs("scope_kind", "warpgroup")
    is_cta = AttrIs("scope_kind", "cta")
    is_cluster = AttrIs("scope_kind", "cluster")

    # -- threads ---------------------------------------------------------------------------
    @property
    def var_range_map(self) -> dict[Var, Range]:
        return self.threads.var_ranges

    @property
    def inter(self) -> dict[str, tuple[PrimExpr, ...]]:
        """The active instances of the call's scope, per axis (see the class docs)."""
        return self._exec_split()[0]

    @property
    def intra(self) -> dict[str, tuple[PrimExpr, ...]]:
        """The active threads inside one instance of the call's scope, per axis."""
        return self._exec_split()[1]

    def _exec_split(self) -> tuple[dict[str, tuple[PrimExpr, ...]], dict[str, tuple[PrimExpr, ...]]]:
        if self._split is None:
            from ...exec_context import split_at_call  # noqa: PLC0415 - loads when first read

            t = self.threads
            split = split_at_call(t.defs, t.guards, self.scope_kind,
                                  t.cta_threads) if t.in_kernel else None
            self._split = ({}, {}) if split is None else (_encode(split.inter),
                                                           _encode(split.intra))
        return self._split

    def thread_extent(self, scope: str | None = None) -> PrimExpr:
        """How many threads run ``scope`` (default: the call's scope) together."""
        scope = scope or self.scope_kind
        t = self.threads
        if scope == "thread":
            return const(1, "int32")
        if scope == "warp":
            return _capped(t.cta_threads, WARP_SIZE)
        if scope == "warpgroup":
            return _capped(t.cta_threads, WARPGROUP_SIZE)
        if scope == "cta":
            return t.cta_threads
        if scope == "cluster":
            return fold_mul(t.cta_threads, t.cluster_ctas)
        raise ValueError(f"unknown execution scope {scope!r}")

    def thread_index(self, scope: str | None = None) -> PrimExpr:
        """The calling thread's index among the threads of ``scope`` (0 at thread scope)."""
        scope = scope or self.scope_kind
        t = self.threads
        if scope == "thread":
            return const(0, "int32")
        if scope == "warp":
            return _named_or(t, "lane_id", WARP_SIZE)
        if scope == "warpgroup":
            return _named_or(t, "thread_id_in_wg", WARPGROUP_SIZE)
        if scope == "cta":
            return t.tid
        if scope == "cluster":
            return fold_add(fold_mul(t.cta_in_cluster, t.cta_threads), t.tid)
        raise ValueError(f"unknown execution scope {scope!r}")

    def is_single_thread(self, scope: str | None = None) -> bool:
        ext = self.thread_extent(scope)
        return isinstance(ext, IntImm) and ext.value == 1

    # -- synchronisation -------------------------------------------------------------------
    def barrier_rule(self, scope: str | None = None) -> Any:
        """The registered barrier of ``scope`` on this target (a callable or SERIAL), or None."""
        scope = scope or self.scope_kind
        for key in ((self.target_kind, scope), (self.target_kind, "*")):
            rule = SCOPE_BARRIER_REGISTRY.get(key)
            if rule is not None:
                return rule
        return None

    def is_serial(self, scope: str | None = None) -> bool:
        """True if the target runs the threads of ``scope`` one after another."""
        return self.barrier_rule(scope) is SERIAL

    def barrier(self, scope: str | None = None) -> Stmt | None:
        """A statement that synchronises the threads of ``scope``; None when nothing is needed
        (one thread, or a serial target). Declines (DispatchFail) when the target registered no
        barrier for a scope of several threads."""
        scope = scope or self.scope_kind
        if scope == "thread" or self.is_single_thread(scope):
            return None
        rule = self.barrier_rule(scope)
        if rule is SERIAL:
            return None
        if rule is None:
            raise DispatchFail(
                f"no barrier for scope '{scope}' on target '{self.target_kind}'; the backend "
                f"registers one with register_scope_barrier('{self.target_kind}', '{scope}', fn)"
            )
        return rule(self, scope)

    # -- callbacks -------------------------------------------------------------------------
    def add_alloc_buffer(self, buffer: Buffer) -> None:
        """Allocate ``buffer`` at the start of the kernel (once, however often it is asked)."""
        if not any(b is buffer for b in self.callbacks.allocs):
            self.callbacks.allocs.append(buffer)

    def add_init_stmt(self, stmt: Stmt, host: bool = False) -> None:
        """Run ``stmt`` once at the start of the kernel (after the allocations), or with
        ``host=True`` at the start of the host function, before the kernel."""
        (self.callbacks.host_init if host else self.callbacks.device_init).append(stmt)

    def cache_get(self, key: Hashable, default: Any = None) -> Any:
        """A value a variant stored for the function being lowered (shared by all calls)."""
        return self.callbacks.cache.get(key, default)

    def cache_set(self, key: Hashable, value: Any) -> None:
        self.callbacks.cache[key] = value

    def __repr__(self) -> str:
        return (f"DispatchContext(target={self.target_kind}, scope={self.scope_kind}, "
                f"threads={self.thread_extent()})")


def _capped(cta_threads: PrimExpr, size: int) -> PrimExpr:
    if isinstance(cta_threads, IntImm) and cta_threads.value < size:
        return cta_threads
    return const(size, "int32")


def _named_or(t: ThreadInfo, kind: str, size: int) -> PrimExpr:
    named = t.named.get(kind)
    return named if named is not None else _mod_capped(t.tid, t.cta_threads, size)


def _mod_capped(tid: PrimExpr, cta_threads: PrimExpr, size: int) -> PrimExpr:
    if isinstance(cta_threads, IntImm) and cta_threads.value <= size:
        return tid
    return tid % size



def _encode(side: dict[str, Any]) -> dict[str, tuple[PrimExpr, ...]]:
    """The seed's form of one side of a split: ``(extent, offset)``, the stride only if not 1;
    a lane chosen at run time has its ``T.selector(...)`` for the offset."""
    out: dict[str, tuple[PrimExpr, ...]] = {}
    for axis, r in side.items():
        offset = r.selector if r.selector is not None else IntImm("int32", r.offset)
        out[axis] = (IntImm("int32", r.extent), offset)
        if r.stride != 1:
            out[axis] += (IntImm("int32", r.stride),)
    return out
