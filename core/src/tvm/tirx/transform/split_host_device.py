"""``SplitHostDevice``: a device kernel per launch plus a host launcher (lowering.md section 4).

Only for targets whose code runs on a separate device (the target kind's ``device_type`` is
not ``"cpu"``); functions for the host target are left whole.

Each outermost thread-bound loop nest becomes a kernel ``<func>_kernel``, ``<func>_kernel1``,
...; statements outside any thread-bound loop run as a kernel of one thread; a function with no
thread-bound loop at all is one such kernel. Host-level lets are inlined into the kernels and
their launch sizes; host-level ``DeclBuffer``s are re-declared in the kernels that use them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ...arith import Analyzer
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.buffer import Buffer, const_bytes
from ...ir.function import IRModule, LaunchParams, PrimFunc
from ...ir.op import Op
from ...ir.structural import structural_equal
from ...ir.visitor import Mutator, Visitor, post_order_visit, substitute
from ...transform import ModulePass, PassContext
from ..op import HostDerived
from ._util import contains, flatten_seq, is_device_target, target_of
from .launch_bounds import extract_launch_bounds
from .lower_kernel_form import CLUSTER_EXTENT

__all__ = ["LaunchParams", "SplitHostDevice", "dyn_smem_layout", "kernel_params", "spilled_shared"]

LAUNCH_KERNEL = "tirx.launch_kernel"
_AXES = ("x", "y", "z")
DYN_SMEM_ALIGN = 16


def _launch_op() -> Op:
    return Op.get(LAUNCH_KERNEL)  # a core builtin, registered in tvm.tirx.op


@dataclasses.dataclass(frozen=True)
class SplitHostDevice(ModulePass):
    """Split each device-target function into kernels and a host launcher."""

    name = "SplitHostDevice"

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        out: dict[str, PrimFunc] = {}
        changed = False
        for gv, func in mod.items():
            target = target_of(func, ctx)
            if func.attrs.get("tirx.is_kernel") or func.attrs.get("tirx.is_host") \
                    or not is_device_target(target):
                out[gv] = func
                continue
            host, kernels = _Splitter(func, target).run()
            out[gv] = host
            for kernel in kernels:
                if kernel.name in out or kernel.name in mod.functions:
                    raise ValueError(f"SplitHostDevice: kernel name {kernel.name} is taken")
                out[kernel.name] = kernel
            changed = True
        return IRModule(out, mod.attrs) if changed else mod


def _is_thread_loop(n: Any) -> bool:
    return isinstance(n, S.For) and n.kind is S.ForKind.THREAD_BINDING


class _Splitter:
    def __init__(self, func: PrimFunc, target: Any) -> None:
        self.func = func
        self.target = target
        self.kernels: list[PrimFunc] = []
        self.launches: list[S.Stmt] = []

    def run(self) -> tuple[PrimFunc, list[PrimFunc]]:
        body = self.func.body
        if not contains(body, _is_thread_loop):
            self._emit(body, {})
        else:
            self._walk(body, {})
        attrs = dict(self.func.attrs)
        attrs["tirx.is_host"] = True
        host = PrimFunc(self.func.params, flatten_seq(self.launches), self.func.buffer_map, attrs,
                        ret_type=self.func.ret_type)
        return host, self.kernels

    def _walk(self, s: S.Stmt, lets: dict[E.Var, E.PrimExpr]) -> None:
        if isinstance(s, S.SeqStmt):
            pending: list[S.Stmt] = []
            for item in s.seq:
                if isinstance(item, S.DeclBuffer):
                    continue  # host-level views are re-declared in the kernels that use them
                if contains(item, _is_thread_loop):
                    self._flush(pending, lets)
                    self._walk(item, lets)
                else:
                    pending.append(item)
            self._flush(pending, lets)
        elif isinstance(s, S.LetStmt):
            inner = dict(lets)
            inner[s.var] = substitute(s.value, {k: v for k, v in lets.items()})
            self._walk(s.body, inner)
        elif isinstance(s, S.AttrStmt) and not _is_thread_loop(s.body):
            self._walk(s.body, lets)
        elif _is_thread_loop(s) or (isinstance(s, S.AttrStmt) and _is_thread_loop(s.body)) or not contains(s, _is_thread_loop):
            self._emit(s, lets)
        else:
            raise ValueError(
                f"function {self.func.name}: a {type(s).__name__} encloses thread-bound loops; "
                f"kernels must be launched from the top level of the function (or from lets "
                f"and sequences), not from host loops or branches")

    def _in_host_order(self, params: list[E.Var]) -> list[E.Var]:
        """Handles then scalars; within each, the host's parameter order first (a buffer
        parameter counts by its data variable), then the rest in order of first use."""
        rank: dict[int, int] = {}
        for k, p in enumerate(self.func.params):
            buf = self.func.buffer_map.get(p)
            rank[id(buf.data if buf is not None else p)] = k
        big = len(rank)

        def key(item: tuple[int, E.Var]) -> tuple[bool, int, int]:
            pos, v = item
            return (not v.dtype.is_handle, rank.get(id(v), big), pos)

        return [v for _, v in sorted(enumerate(params), key=key)]

    def _flush(self, pending: list[S.Stmt], lets: dict[E.Var, E.PrimExpr]) -> None:
        if pending:
            self._emit(flatten_seq(list(pending)), lets)
            pending.clear()

    def _emit(self, kernel: S.Stmt, lets: dict[E.Var, E.PrimExpr]) -> None:
        table = {id(k): v for k, v in lets.items()}

        def inline(x: Any) -> Any:
            return substitute(x, lambda v: table.get(id(v))) if table else x

        body, bounds = extract_launch_bounds(inline(kernel))
        body, derived = self._derived_params(body)
        # every buffer the kernel reaches but does not declare itself is declared at its top
        # (parameter buffers and host-level views), so the kernel is self-contained
        decls = [S.DeclBuffer(b) for b in _undeclared_buffers(body)]
        body = flatten_seq([*decls, body])
        launch = _launch_params(self.func.name, body, self.target)
        params = self._in_host_order(kernel_params(body))
        index = len(self.kernels)
        name = f"{self.func.name}_kernel" + (str(index) if index else "")
        attrs: dict[str, Any] = {"global_symbol": name, "target": self.target,
                                 "tirx.is_kernel": True, "tirx.launch": launch}
        attrs.update(bounds)
        self.kernels.append(PrimFunc(params, body, attrs=attrs))
        passed = [derived.get(id(p), p) for p in params]
        self.launches.append(S.Evaluate(E.Call("int32", _launch_op(), [E.StringImm(name), *passed])))

    def _derived_params(self, body: S.Stmt) -> tuple[S.Stmt, dict[int, E.Call]]:
        """Each distinct ``tirx.host_derived`` value in ``body`` becomes a variable (a kernel
        parameter); returns the body and, per variable id, the call the host launch passes."""
        made: dict[tuple[Any, ...], E.Var] = {}
        passed: dict[int, E.Call] = {}
        func = self.func

        class _Derive(Mutator):
            def visit_Call(self, call: E.Call) -> Any:
                value = HostDerived.of(call)
                if value is None:
                    return self.generic_visit(call)
                var = made.get(value.key())
                if var is None:
                    _check_derived_source(func, value)
                    short = value.kind.rpartition(".")[2]
                    var = E.Var(f"{value.data.name}_{short}{len(made) or ''}", "handle",
                                ptr_scope=value.ptr_scope)
                    made[value.key()] = var
                    passed[id(var)] = call
                return var

        return _Derive().visit(body), passed


# -- analyses ----------------------------------------------------------------------------------
def _check_derived_source(func: PrimFunc, value: HostDerived) -> None:
    """A host-derived value is computed from an array argument the kernel indexes as declared:
    its buffer must be a parameter of ``func`` with the shape the value was made for."""
    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is None or buf.data is not value.data:
            continue
        if len(buf.shape) == len(value.shape) and all(
                structural_equal(a, b) for a, b in zip(buf.shape, value.shape)):
            return
        raise ValueError(
            f"function {func.name}: a {value.kind} is derived from a view of parameter "
            f"{buf.name} with shape {list(value.shape)}, but the argument has shape "
            f"{list(buf.shape)}; derive it from the parameter buffer itself (or pass the value "
            f"as a parameter)")
    raise ValueError(
        f"function {func.name}: a {value.kind} is derived from {value.data.name}, which is not "
        f"the data of a buffer parameter; only array arguments can be derived from at launch "
        f"(pass the value as a parameter instead)")


def _undeclared_buffers(s: S.Stmt) -> list[Buffer]:
    """Buffers used in ``s`` but not allocated or declared in it, in order of first use."""
    declared: set[int] = set()
    found: dict[int, Buffer] = {}

    class _V(Visitor):
        def visit_AllocBuffer(self, n: S.AllocBuffer) -> None:
            declared.add(id(n.buffer))

        def visit_DeclBuffer(self, n: S.DeclBuffer) -> None:
            declared.add(id(n.buffer))

        def visit_Buffer(self, b: Buffer) -> None:
            if id(b) not in declared:
                found.setdefault(id(b), b)

    _V().visit(s)
    return [b for k, b in found.items() if k not in declared]


def kernel_params(body: S.Stmt) -> list[E.Var]:
    """The free variables of a kernel body: handles, then scalars, each in order of first use."""
    handles: list[E.Var] = []
    scalars: list[E.Var] = []
    defined: set[int] = set()
    seen: set[int] = set()

    class _Free(Visitor):
        def use(self, v: E.Var) -> None:
            if id(v) in defined or id(v) in seen:
                return
            seen.add(id(v))
            (handles if v.dtype.is_handle else scalars).append(v)

        def visit_Var(self, v: E.Var) -> None:
            self.use(v)

        def visit_For(self, s: S.For) -> None:
            self.visit(s.min)
            self.visit(s.extent)
            defined.add(id(s.loop_var))
            self.visit(s.body)

        def visit_LetStmt(self, s: S.LetStmt) -> None:
            self.visit(s.value)
            defined.add(id(s.var))
            self.visit(s.body)

        def visit_Let(self, e: E.Let) -> None:
            self.visit(e.value)
            defined.add(id(e.var))
            self.visit(e.body)

        def visit_AllocBuffer(self, s: S.AllocBuffer) -> None:
            for dim in s.buffer.shape:
                self.visit(dim)
            defined.add(id(s.buffer.data))

        def visit_DeclBuffer(self, s: S.DeclBuffer) -> None:
            # a tensor-memory buffer is placed by its TMEM address (``allocated_addr``): its
            # data variable is never read, so it is no kernel parameter (as in ir.verify)
            if s.buffer.scope == "tmem":
                defined.add(id(s.buffer.data))
            self.generic_visit(s)

        def visit_ScopeIdDef(self, s: S.ScopeIdDef) -> None:
            for e in s.extents:
                self.visit(e)
            for v in s.vars:
                defined.add(id(v))

    _Free().visit(body)
    return handles + scalars


def dyn_smem_layout(body: S.Stmt, target: Any = None) -> tuple[list[tuple[Buffer, int]], int]:
    """Offsets of the ``shared.dyn`` allocations of a kernel, in order of appearance, each
    aligned to 16 bytes (or the buffer's ``align`` if larger), and the total size in bytes.
    Codegens place dynamic shared buffers at these offsets.

    With ``target``: when the kernel's constant-size ``shared`` buffers together pass the
    target's ``max_shared_memory_per_block`` (CUDA's 48 KB of static shared memory), they are
    placed in the dynamic shared memory too, after the ``shared.dyn`` ones, so a kernel may
    declare a big tile as plain ``shared`` (:func:`spilled_shared` tells which)."""
    spilled = spilled_shared(body, target)
    placed: list[tuple[Buffer, int]] = []
    total = 0

    def visit(n: Any) -> None:
        nonlocal total
        if isinstance(n, S.AllocBuffer) and n.buffer.scope == "shared.dyn":
            total = place(n.buffer, total)

    def place(buf: Buffer, at: int) -> int:
        align = max(DYN_SMEM_ALIGN, buf.align)
        at = (at + align - 1) // align * align
        placed.append((buf, at))
        return at + _static_bytes(buf)

    post_order_visit(body, visit)
    for buf in spilled:
        total = place(buf, total)
    return placed, total


def spilled_shared(body: S.Stmt, target: Any) -> list[Buffer]:
    """The ``shared`` buffers of a kernel that go to dynamic shared memory: all of its
    constant-size ones when together they pass ``target``'s ``max_shared_memory_per_block``,
    else none. Only a target whose ``max_dynamic_shared_memory_per_block`` is larger (CUDA's
    opt-in dynamic shared memory) spills; on the others one limit holds for all of it."""
    attrs = getattr(target, "attrs", None)
    if not isinstance(attrs, Mapping):
        return []
    limit = attrs.get("max_shared_memory_per_block")
    dynamic_limit = attrs.get("max_dynamic_shared_memory_per_block")
    if not isinstance(limit, int) or not isinstance(dynamic_limit, int) or dynamic_limit <= limit:
        return []
    static: list[Buffer] = []

    def visit(n: Any) -> None:
        if isinstance(n, S.AllocBuffer) and n.buffer.scope == "shared" \
                and const_bytes(n.buffer) is not None:
            static.append(n.buffer)

    post_order_visit(body, visit)
    total = sum(const_bytes(b) or 0 for b in static)
    return static if total > limit else []


def _static_bytes(buf: Buffer) -> int:
    n = 1
    for dim in buf.shape:
        value = Analyzer().simplify(dim)
        if not isinstance(value, E.IntImm):
            raise ValueError(f"dynamic shared buffer {buf.name} has a symbolic size {dim}; "
                             f"give it a constant shape")
        n *= value.value
    return n * buf.dtype.bytes


def _launch_params(func_name: str, body: S.Stmt, target: Any = None) -> LaunchParams:
    ana = Analyzer()
    extents: dict[str, E.PrimExpr] = {}
    cluster: dict[str, E.PrimExpr] = {}

    class _V(Visitor):
        def visit_For(self, s: S.For) -> None:
            if s.kind is S.ForKind.THREAD_BINDING and s.thread_tag:
                tag = s.thread_tag
                old = extents.get(tag)
                if old is not None and not ana.can_prove_equal(old, s.extent):
                    raise ValueError(f"function {func_name}: {tag} is bound with extent {old} "
                                     f"and with extent {s.extent} in one kernel")
                extents[tag] = s.extent
                if CLUSTER_EXTENT in s.annotations:
                    cluster[tag] = E.convert(s.annotations[CLUSTER_EXTENT])
            self.generic_visit(s)

    _V().visit(body)
    one = E.IntImm("int32", 1)
    grid = [extents.get(f"blockIdx.{a}", one) for a in _AXES]
    block = [extents.get(f"threadIdx.{a}", one) for a in _AXES]
    for a in _AXES:  # the seed's `for c in T.thread_binding(n, thread="clusterCtaIdx.x")`
        size = extents.get(f"clusterCtaIdx.{a}")
        if size is None:
            continue
        old = cluster.get(f"blockIdx.{a}")
        if old is not None and not ana.can_prove_equal(old, size):
            raise ValueError(f"function {func_name}: clusterCtaIdx.{a} has extent {size} but "
                             f"the clusters are {old} CTAs along {a}")
        cluster[f"blockIdx.{a}"] = size
    clus = [cluster.get(f"blockIdx.{a}", one) for a in _AXES]
    _, smem = dyn_smem_layout(body, target)
    return LaunchParams(grid, block, clus, smem)
