"""``LowerKernelForm``: kernel-form ids become thread-bound loops and lets (lowering.md section 3).

``T.device_entry()`` marks where the kernel starts; the ``ScopeIdDef`` statements after it
(``T.cta_id``, ``T.thread_id``, ``T.warp_id``, ...) define the kernel's ids. The rest of that
block becomes the body of ``For(kind=THREAD_BINDING)`` loops: ``blockIdx.x/y/z`` over the CTA
ids, ``threadIdx.x/y/z`` over the thread ids; derived ids are ``LetStmt`` over ``threadIdx.x``.
The block size comes from ``thread_id`` extents, or ``warp_id * 32``, or ``warpgroup_id * 128``
(they must agree). Cluster ids (``cluster_id``, ``cta_id_in_cluster``) split ``blockIdx`` and
record the cluster shape as the ``tirx.cluster_extent`` annotation of the ``blockIdx`` loops.
``T.cta_id_in_pair()`` (Blackwell CTA pairs: the CTAs of cluster ranks ``2k`` and ``2k + 1``)
is the CTA's rank in its cluster modulo 2; it needs clusters of an even number of CTAs and a
target whose ``cta_pairs`` attribute is set (CUDA from ``sm_100a``).

Attribute statements (``T.attr({...})``) and lets (``x: T.let = ...``) may stand before or
between the ids at the top of the kernel: the ids are taken out of their bodies (a let whose
variable an id's extent uses is an error). Ids inside loops or branches stay an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ...arith import Analyzer
from ...error import KernelFormError, ScopeIdExtentError
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import IRModule, PrimFunc
from ...ir.visitor import Mutator, substitute
from ...transform import PassContext, PrimFuncPass
from ._util import contains, flatten_seq, target_of
from .lower_host_encodes import lower_host_encodes

__all__ = ["CLUSTER_EXTENT", "KernelFormError", "LowerKernelForm", "check_kernel_ids"]

CLUSTER_EXTENT = "tirx.cluster_extent"
_AXES = ("x", "y", "z")
_WARP, _WG = 32, 128


@dataclasses.dataclass(frozen=True)
class LowerKernelForm(PrimFuncPass):
    """Lower ``T.device_entry()`` and kernel ids to thread-bound loops (see the module doc)."""

    name = "LowerKernelForm"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        func = lower_host_encodes(func)  # host-filled tensor maps: values the launch derives
        if not contains(func.body, _is_kernel_marker):
            return func
        body = _Lowerer(func.name, target_of(func, ctx)).visit(func.body)
        if contains(body, lambda n: isinstance(n, S.ScopeIdDef)):
            raise KernelFormError(
                f"function {func.name}: kernel ids (T.cta_id, T.thread_id, ...) must be at the top "
                f"level of the kernel, right after T.device_entry(), not inside loops or branches")
        return func.with_body(body)


def check_kernel_ids(func: PrimFunc, target: Any = None, *, allow_deferred: bool = False) -> None:
    """Raise :class:`KernelFormError` (:class:`ScopeIdExtentError` where extents disagree) if
    ``func``'s kernel ids cannot be lowered: the checks :class:`LowerKernelForm` makes, without
    keeping its result. ``allow_deferred``: an id without extents that nothing implies is
    left out (the seed's well-formed check tolerates it until lowering) rather than an error."""
    if contains(func.body, _is_kernel_marker):
        _Lowerer(func.name, target, allow_deferred=allow_deferred).visit(func.body)


def _is_device_entry(n: object) -> bool:
    return (isinstance(n, S.Evaluate) and isinstance(n.value, E.Call)
            and n.value.op.name == "tirx.device_entry")


def _is_kernel_marker(n: object) -> bool:
    return _is_device_entry(n) or isinstance(n, S.ScopeIdDef)


class _Lowerer(Mutator):
    def __init__(self, func_name: str, target: Any = None, *, allow_deferred: bool = False) -> None:
        self.func_name = func_name
        self.target = target
        self.allow_deferred = allow_deferred

    def visit_SeqStmt(self, s: S.SeqStmt) -> S.Stmt:
        start = next((k for k, x in enumerate(s.seq) if _is_kernel_marker(x)), None)
        if start is None:
            return super().generic_visit(s)  # type: ignore[return-value]
        head = [self.visit(x) for x in s.seq[:start]]
        body = [x for x in s.seq[start:] if not _is_device_entry(x)]
        rest, defs = _take_ids(body, self.func_name, ())
        merged = _MergeIds(self.func_name, defs)
        kernel_body = merged.apply(flatten_seq(rest))
        kernel = _Kernel(self.func_name, merged.defs, self.target,
                         allow_deferred=self.allow_deferred).wrap(kernel_body)
        return flatten_seq([*head, kernel])


class _MergeIds(Mutator):
    """One definition per id kind. As in the seed, an id may be defined again (``tid =
    T.thread_id([256])`` twice, or in a branch or loop) with the same extents: the later
    definition names the same index. A kind first defined inside a branch or loop is defined
    for the whole kernel (its extents may not use what the kernel binds)."""

    def __init__(self, func_name: str, top: Sequence[S.ScopeIdDef]) -> None:
        self.func_name = func_name
        self.ana = Analyzer()
        self.defs: list[S.ScopeIdDef] = []
        self.vmap: dict[int, E.Var] = {}
        self.bound: list[E.Var] = []
        for d in top:
            self._add(d)

    def apply(self, body: S.Stmt) -> S.Stmt:
        body = self.visit(body)
        if not self.vmap:
            return body
        table = self.vmap
        out: S.Stmt = substitute(body, lambda v: table.get(id(v)))
        return out

    def _add(self, d: S.ScopeIdDef) -> None:
        first = next((x for x in self.defs if x.kind == d.kind), None)
        if first is None:
            self.defs.append(d)
            return
        if first.deferred or d.deferred:
            # T.thread_id() and T.thread_id([n]): one index, of the given extent
            if len(first.vars) != len(d.vars):
                raise KernelFormError(
                    f"function {self.func_name}: T.{d.kind} is defined with {_exts(first)} and "
                    f"with {_exts(d)}; an id without extents defines one index, so its other "
                    f"definitions must have one extent")
            if first.deferred and not d.deferred:
                kept = S.ScopeIdDef(d.kind, first.vars, d.extents)
                kept.span = d.span
                self.defs[self.defs.index(first)] = kept
            for new, old in zip(d.vars, first.vars):
                self.vmap[id(new)] = old
            return
        same = len(first.extents) == len(d.extents) and all(
            self.ana.can_prove_equal(a, b) for a, b in zip(first.extents, d.extents))
        if not same:
            raise ScopeIdExtentError(
                f"function {self.func_name}: T.{d.kind} is defined twice with different extents "
                f"({_exts(first)} and {_exts(d)}); a kernel has one {d.kind}. For the index "
                f"of a thread within a warpgroup or a warp use T.thread_id_in_wg([128]) or "
                f"T.lane_id([32])")
        for new, old in zip(d.vars, first.vars):
            self.vmap[id(new)] = old

    def visit_ScopeIdDef(self, d: S.ScopeIdDef) -> S.Stmt:
        inner = [v.name for v in self.bound if any(contains(e, lambda n, v=v: n is v)
                                                   for e in d.extents)]
        if inner:
            raise KernelFormError(
                f"function {self.func_name}: the extent of T.{d.kind} uses {inner[0]!r}, which "
                f"the kernel binds; kernel ids hold for the whole kernel, so their extents may "
                f"use only parameters and values known before T.device_entry()")
        self._add(d)
        return _REMOVED

    def visit_For(self, s: S.For) -> S.Stmt:
        return self._binding(s.loop_var, s)

    def visit_LetStmt(self, s: S.LetStmt) -> S.Stmt:
        return self._binding(s.var, s)

    def _binding(self, var: E.Var, s: S.Stmt) -> S.Stmt:
        self.bound.append(var)
        try:
            out: S.Stmt = super().generic_visit(s)  # type: ignore[assignment]  # a statement visits to a statement
            return out
        finally:
            self.bound.pop()

    def visit_SeqStmt(self, s: S.SeqStmt) -> S.Stmt:
        out = [self.visit(x) for x in s.seq]
        return flatten_seq([x for x in out if x is not _REMOVED])


#: what a merged definition leaves in its sequence (dropped there)
_REMOVED = S.SeqStmt([])


def _exts(d: S.ScopeIdDef) -> str:
    if d.deferred:
        return "no extents"
    return "[" + ", ".join(str(e) for e in d.extents) + "]"


def _take_ids(stmts: Sequence[S.Stmt], func_name: str,
              bound: tuple[E.Var, ...]) -> tuple[list[S.Stmt], list[S.ScopeIdDef]]:
    """The kernel ids at the top of ``stmts`` (also inside the bodies of attribute statements
    and lets there), and the statements without them."""
    rest: list[S.Stmt] = []
    ids: list[S.ScopeIdDef] = []
    for x in stmts:
        if isinstance(x, S.ScopeIdDef):
            _check_not_bound(x, bound, func_name)
            ids.append(x)
            continue
        if isinstance(x, (S.AttrStmt, S.LetStmt)):
            inner_bound = (*bound, x.var) if isinstance(x, S.LetStmt) else bound
            body, inner = _take_ids(_stmts_of(x.body), func_name, inner_bound)
            if inner:
                x = x.with_fields(body=flatten_seq(body))  # type: ignore[assignment]
                ids.extend(inner)
        rest.append(x)
    return rest, ids


def _stmts_of(s: S.Stmt) -> list[S.Stmt]:
    return list(s.seq) if isinstance(s, S.SeqStmt) else [s]


def _check_not_bound(d: S.ScopeIdDef, bound: tuple[E.Var, ...], func_name: str) -> None:
    used = [v.name for v in bound if any(contains(e, lambda n, v=v: n is v) for e in d.extents)]
    if used:
        raise KernelFormError(
            f"function {func_name}: the extent of T.{d.kind} uses {used[0]!r}, a let defined "
            f"before it in the kernel; kernel ids are defined for the whole kernel, so their "
            f"extents may use only parameters and values known before T.device_entry()")


class _Kernel:
    """The ids of one kernel and how to build its loops."""

    def __init__(self, func_name: str, defs: Sequence[S.ScopeIdDef], target: Any = None, *,
                 allow_deferred: bool = False) -> None:
        self.func_name = func_name
        self.target = target
        self.ana = Analyzer()
        self.ids: dict[str, S.ScopeIdDef] = {}
        defs, unresolved = S.resolve_scope_ids(defs)
        if unresolved and not allow_deferred:
            k = unresolved[0].kind
            raise self.error(f"T.{k}() has no extents and the kernel's other ids do not imply "
                             f"them; give them, e.g. T.{k}([n])")
        for d in defs:
            if d.kind in self.ids:
                raise self.error(f"T.{d.kind} is defined twice")
            self.ids[d.kind] = d

    def error(self, msg: str) -> KernelFormError:
        return KernelFormError(f"function {self.func_name}: {msg}")

    def extent_error(self, msg: str) -> ScopeIdExtentError:
        """The ids' extents disagree (what :func:`check_kernel_ids` reports as such)."""
        return ScopeIdExtentError(f"function {self.func_name}: {msg}")

    def wrap(self, body: S.Stmt) -> S.Stmt:
        """``body`` inside the lets of the derived ids, inside the thread-bound loops."""
        blocks = self._block_loops()
        threads = self._thread_loops()
        for var, value in reversed(self.block_lets + self.thread_lets):
            body = S.LetStmt(var, value, body)
        for tag, var, extent, ann in reversed(blocks + threads):
            body = S.For(var, E.IntImm(var.dtype, 0), extent, S.ForKind.THREAD_BINDING, body,
                         thread_tag=tag, annotations=ann)
            body.span = self._span_of(tag, var)  # where a device limit on it is reported
        return body

    def _span_of(self, tag: str, var: E.Var) -> Any:
        """The span of the id statement that defines the loop over ``var``."""
        kinds = (("cta_id", "cluster_id", "cta_id_in_cluster") if tag.startswith("blockIdx")
                 else ("thread_id", "warp_id", "warpgroup_id", "lane_id", "thread_id_in_wg",
                       "warp_id_in_wg"))
        defs = [self.ids[k] for k in kinds if k in self.ids]
        owner = next((d for d in defs if any(v is var for v in d.vars)),
                     defs[0] if defs else None)
        return None if owner is None else owner.span

    # -- blocks ----------------------------------------------------------------------------
    def _block_loops(self) -> list[tuple[str, E.Var, E.PrimExpr, dict]]:
        cta = self.ids.get("cta_id")
        cluster = self.ids.get("cluster_id")
        in_cluster = self.ids.get("cta_id_in_cluster")
        # T.cluster_id alone: clusters of one CTA (cluster_id is blockIdx); T.cta_id_in_cluster
        # alone: the grid is one cluster
        dims = max(len(d.vars) for d in (cta, cluster, in_cluster) if d is not None) \
            if any(d is not None for d in (cta, cluster, in_cluster)) else 0
        self._check_dims("cta_id", dims)
        loops = []
        self.block_lets: list[tuple[E.Var, E.PrimExpr]] = []
        for d in range(dims):
            size = self._cluster_size(in_cluster, d)
            grid = self._grid_extent(cta, cluster, size, d)
            var = cta.vars[d] if cta is not None and d < len(cta.vars) else E.Var(f"blockIdx_{_AXES[d]}")
            ann = {CLUSTER_EXTENT: size} if in_cluster is not None else {}
            loops.append((f"blockIdx.{_AXES[d]}", var, grid, ann))
            if in_cluster is not None and d < len(in_cluster.vars):
                self.block_lets.append((in_cluster.vars[d], E.FloorMod(var, size)))
            if cluster is not None and d < len(cluster.vars):
                self.block_lets.append((cluster.vars[d], E.FloorDiv(var, size)))
        pair = self.ids.get("cta_id_in_pair")
        if pair is not None:
            self.block_lets.append((pair.vars[0], self._pair_rank(pair, in_cluster, loops)))
        return loops

    def _pair_rank(self, pair: S.ScopeIdDef, in_cluster: S.ScopeIdDef | None,
                   loops: Sequence[tuple[str, E.Var, E.PrimExpr, dict]]) -> E.PrimExpr:
        """``T.cta_id_in_pair()``: the CTA's rank in its cluster (x fastest, as
        ``%cluster_ctarank``) modulo 2. Checked: an extent of 2, clusters of an even number of
        CTAs, and a target with CTA pairs."""
        if pair.extents and not self.ana.can_prove_equal(pair.extents[0], 2):
            raise self.extent_error(f"T.cta_id_in_pair extent must be 2 (a CTA pair), got "
                             f"{pair.extents[0]}; write T.cta_id_in_pair()")
        sizes = [self._cluster_size(in_cluster, d) for d in range(len(loops))]
        ctas: E.PrimExpr = E.IntImm("int32", 1)
        for size in sizes:
            ctas = self.ana.simplify(E.Mul(ctas, size))
        if in_cluster is None or not self.ana.can_prove_equal(E.FloorMod(ctas, 2), 0):
            what = "no T.cta_id_in_cluster" if in_cluster is None else f"clusters of {ctas} CTA(s)"
            raise self.error(f"T.cta_id_in_pair needs clusters of an even number of CTAs (a CTA "
                             f"pair is the CTAs of cluster ranks 2k and 2k + 1), but the kernel "
                             f"has {what}; define T.cta_id_in_cluster([2]) (or any even size)")
        self._check_pair_target()
        rank: E.PrimExpr = E.IntImm("int32", 0)
        stride: E.PrimExpr = E.IntImm("int32", 1)
        for (_tag, var, _grid, _ann), size in zip(loops, sizes):
            rank = E.Add(rank, E.Mul(E.FloorMod(var, size), stride))
            stride = E.Mul(stride, size)
        return self.ana.simplify(E.FloorMod(rank, 2))

    def _check_pair_target(self) -> None:
        if self.target is None or self.target.attrs.get("cta_pairs"):
            return
        arch = self.target.attrs.get("arch")
        named = self.target.kind.name + (f" -arch={arch}" if arch else "")
        raise self.error(f"T.cta_id_in_pair: target {named} has no CTA pairs (Blackwell's "
                         f"pairs of CTAs that share tcgen05 cta_group::2 work); compile for a "
                         f"target with the cta_pairs attribute, e.g. cuda -arch=sm_100a")

    def _cluster_size(self, in_cluster: S.ScopeIdDef | None, d: int) -> E.PrimExpr:
        if in_cluster is None or d >= len(in_cluster.extents):
            return E.IntImm("int32", 1)
        return in_cluster.extents[d]

    def _grid_extent(self, cta: S.ScopeIdDef | None, cluster: S.ScopeIdDef | None,
                     size: E.PrimExpr, d: int) -> E.PrimExpr:
        from_cluster = None
        if cluster is not None:
            ext = cluster.extents[d] if d < len(cluster.extents) else E.IntImm("int32", 1)
            from_cluster = self.ana.simplify(E.Mul(ext, size))
        if cta is None or d >= len(cta.extents):
            return from_cluster if from_cluster is not None else E.IntImm("int32", 1)
        grid = cta.extents[d]
        if from_cluster is not None and not self.ana.can_prove_equal(grid, from_cluster):
            raise self.extent_error(f"inconsistent grid along {_AXES[d]}: T.cta_id gives {grid} but "
                             f"T.cluster_id * T.cta_id_in_cluster gives {from_cluster}")
        if cluster is None and size is not None and isinstance(size, E.IntImm) and size.value > 1:
            if not self.ana.can_prove_equal(E.FloorMod(grid, size), 0):
                raise self.extent_error(f"the grid extent {grid} along {_AXES[d]} is not a multiple of "
                                 f"the cluster extent {size}")
        return grid

    def _check_dims(self, kind: str, dims: int) -> None:
        if dims > 3:
            raise self.error(f"T.{kind} takes at most 3 dimensions, got {dims}")

    # -- threads ---------------------------------------------------------------------------
    def _thread_loops(self) -> list[tuple[str, E.Var, E.PrimExpr, dict]]:
        tid = self.ids.get("thread_id")
        derived: list[str] = [k for k in ("warp_id", "lane_id", "warpgroup_id", "thread_id_in_wg",
                               "warp_id_in_wg") if k in self.ids]
        for k in derived:
            if len(self.ids[k].vars) != 1:
                raise self.error(f"T.{k} takes one extent, got {len(self.ids[k].vars)}")
        if tid is not None:
            self._check_dims("thread_id", len(tid.vars))
            if derived and len(tid.vars) != 1:
                raise self.error(f"T.{derived[0]} needs a one-dimensional T.thread_id, got "
                                 f"{len(tid.vars)} dimensions")
        total = self._block_size(tid, derived)
        self.thread_lets: list[tuple[E.Var, E.PrimExpr]] = []
        loops: list[tuple[str, E.Var, E.PrimExpr, dict]]
        if tid is not None:
            loops = [(f"threadIdx.{_AXES[d]}", v, e, {})
                     for d, (v, e) in enumerate(zip(tid.vars, tid.extents))]
            tx = tid.vars[0]
        elif total is not None:
            tx = E.Var("threadIdx_x")
            loops = [("threadIdx.x", tx, total, {})]
        else:
            return []
        for k in derived:
            self.thread_lets.append((self.ids[k].vars[0], _derived_value(k, tx)))
        return loops

    def _partial_warpgroup(self) -> int:
        """The warp count of ``T.warp_id_in_wg([k])`` with k of 1 to 3 in a CTA of one
        warpgroup (no ``T.warpgroup_id``, or ``T.warpgroup_id([1])``), as the seed allows: the
        CTA is then those k warps; 0 otherwise."""
        if "warp_id_in_wg" not in self.ids or "thread_id_in_wg" in self.ids:
            return 0
        k = _const_int(self.ids["warp_id_in_wg"].extents[0])
        if k is None or not 1 <= k < _WG // _WARP:
            return 0
        if "warpgroup_id" in self.ids and _const_int(self.ids["warpgroup_id"].extents[0]) != 1:
            return 0
        return k

    def _block_size(self, tid: S.ScopeIdDef | None, derived: Sequence[str]) -> E.PrimExpr | None:
        """The number of threads, from every id that implies it; they must agree."""
        claims: list[tuple[str, E.PrimExpr]] = []
        if tid is not None and len(tid.extents) == 1:
            claims.append((f"T.thread_id([{tid.extents[0]}])", tid.extents[0]))
        partial = self._partial_warpgroup()
        for k, unit in (("warp_id", _WARP), ("warpgroup_id", _WG)):
            if k in self.ids and not (k == "warpgroup_id" and partial):
                ext = self.ids[k].extents[0]
                claims.append((f"T.{k}([{ext}]) * {unit}", self.ana.simplify(E.Mul(ext, unit))))
        if partial:
            claims.append((f"T.warp_id_in_wg([{partial}]) * {_WARP}",
                           E.IntImm("int32", partial * _WARP)))
        for k, fixed in (("lane_id", _WARP), ("thread_id_in_wg", _WG), ("warp_id_in_wg", _WG // _WARP)):
            if k in self.ids and not (k == "warp_id_in_wg" and partial):
                ext = self.ids[k].extents[0]
                if not self.ana.can_prove_equal(ext, fixed):
                    hint = (" (fewer warps, 1 to 3, only in a CTA of one warpgroup)"
                            if k == "warp_id_in_wg" else "")
                    raise self.extent_error(f"T.{k} extent must be {fixed}{hint}, got {ext}")
        if not claims:
            if any(k in self.ids for k in ("thread_id_in_wg", "warp_id_in_wg")):
                return E.IntImm("int32", _WG)
            if "lane_id" in self.ids:
                return E.IntImm("int32", _WARP)
            return None
        first_what, first = claims[0]
        for what, value in claims[1:]:
            if not self.ana.can_prove_equal(first, value):
                raise self.extent_error(f"inconsistent thread counts: {first_what} gives {first} threads "
                                 f"but {what} gives {value}")
        needs_wg = not partial and any(
            k in self.ids for k in ("thread_id_in_wg", "warp_id_in_wg", "warpgroup_id"))
        unit = _WG if needs_wg else (_WARP if "lane_id" in self.ids or "warp_id" in self.ids else 1)
        if unit > 1 and not self.ana.can_prove_equal(E.FloorMod(first, unit), 0):
            raise self.extent_error(f"{first_what} gives {first} threads, not a multiple of {unit} "
                             f"as the warp/warpgroup ids need")
        return first


def _const_int(e: E.PrimExpr) -> int | None:
    return int(e.value) if isinstance(e, E.IntImm) else None


def _derived_value(kind: str, tx: E.Var) -> E.PrimExpr:
    if kind == "warp_id":
        return E.FloorDiv(tx, _WARP)
    if kind == "lane_id":
        return E.FloorMod(tx, _WARP)
    if kind == "warpgroup_id":
        return E.FloorDiv(tx, _WG)
    if kind == "thread_id_in_wg":
        return E.FloorMod(tx, _WG)
    return E.FloorDiv(E.FloorMod(tx, _WG), _WARP)  # warp_id_in_wg
