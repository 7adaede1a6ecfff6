"""Device limits, checked before codegen from the target's attributes.

A kernel that asks for more than its device gives compiles today and fails at launch (a grid
y of 65536 on CUDA, a Metal threadgroup of 2048 threads) or fails in the device compiler with a
message that names no script line (240 KB of CUDA shared memory). :func:`check_device_limits`
finds these in the lowered module, before any source is generated, and raises
:class:`~tvm.error.DeviceLimitError` at the script line that asks (the ``T.cta_id`` /
``T.thread_id`` statement, the shared allocation), naming the limit and the target.

The limits are target attributes, so every backend feeds the one check with data (its target
kind's defaults and its tags), and a user can state a smaller device. Absent attributes are not
checked:

==================================  =========================================================
``max_threads_per_block``           threads of one block / threadgroup / workgroup
``max_block_dims``                  (x, y, z) bounds of the block's dimensions
``max_grid_dims``                   (x, y, z) bounds of the grid's dimensions
``max_shared_memory_per_block``     bytes of statically sized shared memory (``shared``);
                                    past it a kernel's ``shared`` buffers are placed in
                                    dynamic shared memory (``spilled_shared``) instead
``max_dynamic_shared_memory_per_block``  bytes of shared memory in all, the dynamic
                                    (``shared.dyn``) part included (CUDA: the opt-in limit)
==================================  =========================================================

Only constant extents and sizes are judged; symbolic ones are left to the launch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..error import DeviceLimitError
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import const_bytes
from ..ir.function import IRModule, PrimFunc
from ..ir.span import Span
from ..ir.visitor import post_order_visit
from ..tirx.transform.split_host_device import spilled_shared

__all__ = ["check_device_limits", "check_kernel_limits"]

_AXES = ("x", "y", "z")
_STATIC_SHARED = ("shared",)
_DYNAMIC_SHARED = ("shared.dyn",)


def check_device_limits(mod: IRModule, target: Any) -> None:
    """Check every device kernel of ``mod`` (``tirx.is_kernel``) against ``target``'s limits."""
    attrs = getattr(target, "attrs", None)
    if not isinstance(attrs, Mapping):
        return
    for name, func in mod.functions.items():
        if isinstance(func, PrimFunc) and func.attrs.get("tirx.is_kernel"):
            check_kernel_limits(func, target, str(func.attrs.get("global_symbol", name)))


def check_kernel_limits(func: PrimFunc, target: Any, name: str) -> None:
    """Check one kernel: its thread-bound loops and its shared allocations."""
    check = _Check(target, name)
    loops = list(_thread_loops(func.body))
    for tag, extent, span in loops:
        check.dimension(tag, extent, span)
    check.threads([(t, e, sp) for t, e, sp in loops if t.startswith("threadIdx.")])
    check.shared(func)


def _thread_loops(body: S.Stmt) -> Iterator[tuple[str, int, Span | None]]:
    found: list[tuple[str, int, Span | None]] = []

    def visit(node: Any) -> None:
        if (isinstance(node, S.For) and node.kind == S.ForKind.THREAD_BINDING
                and isinstance(node.extent, E.IntImm) and node.thread_tag):
            found.append((node.thread_tag, int(node.extent.value), node.span))

    post_order_visit(body, visit)
    seen: set[str] = set()
    for tag, extent, span in reversed(found):  # outermost first
        if tag not in seen:
            seen.add(tag)
            yield tag, extent, span


class _Check:
    def __init__(self, target: Any, kernel: str) -> None:
        self.attrs: Mapping[str, Any] = target.attrs
        self.target_obj = target
        self.kernel = kernel
        self.target = _describe(target)

    def fail(self, what: str, limit_name: str, limit: Any, fix: str, span: Span | None) -> None:
        raise DeviceLimitError(
            f"kernel `{self.kernel}`: {what}; target {self.target} allows at most {limit} "
            f"({limit_name}): {fix}", span, limit=limit_name, target=self.target)

    def dimension(self, tag: str, extent: int, span: Span | None) -> None:
        kind, _, axis = tag.partition(".")
        dims_attr = "max_grid_dims" if kind == "blockIdx" else "max_block_dims"
        dims = self.attrs.get(dims_attr)
        if axis not in _AXES or not isinstance(dims, (tuple, list)) or len(dims) != 3:
            return
        limit = int(dims[_AXES.index(axis)])
        if extent <= limit:
            return
        if kind == "blockIdx":
            self.fail(f"grid dimension {axis} is {extent} (T.cta_id)", dims_attr, limit,
                      "put the longest extent first (grid x allows " f"{int(dims[0])}), or loop "
                      "over part of it inside the kernel", span)
        self.fail(f"block dimension {axis} is {extent} (T.thread_id)", dims_attr, limit,
                  "use fewer threads along it, or another dimension", span)

    def threads(self, loops: list[tuple[str, int, Span | None]]) -> None:
        limit = self.attrs.get("max_threads_per_block")
        if not loops or not isinstance(limit, int):
            return
        total = 1
        for _, extent, _ in loops:
            total *= extent
        if total > limit:
            self.fail(f"a block of {total} threads", "max_threads_per_block", limit,
                      "use fewer threads per block and more blocks", loops[0][2])

    def shared(self, func: PrimFunc) -> None:
        allocs: list[tuple[str, int, Any]] = []

        def visit(node: Any) -> None:
            if isinstance(node, S.AllocBuffer):
                size = const_bytes(node.buffer)
                if size is not None and str(node.buffer.scope) in _STATIC_SHARED + _DYNAMIC_SHARED:
                    allocs.append((str(node.buffer.scope), size, node))

        post_order_visit(func.body, visit)  # siblings in program order
        spilled = {id(b) for b in spilled_shared(func.body, self.target_obj)}  # placed dynamically
        static_limit = self.attrs.get("max_shared_memory_per_block")
        total_limit = self.attrs.get("max_dynamic_shared_memory_per_block")
        launch = func.attrs.get("tirx.launch")
        dyn = getattr(launch, "dyn_smem_bytes", None)
        launch_dyn = int(dyn.value) if isinstance(dyn, E.IntImm) else 0
        static = dynamic = 0
        for scope, size, node in allocs:
            if scope in _DYNAMIC_SHARED or id(node.buffer) in spilled:
                dynamic += size
            else:
                static += size
                if isinstance(static_limit, int) and static > static_limit:
                    more = (f"; scope 'shared.dyn' allows up to {total_limit} bytes"
                            if isinstance(total_limit, int) and total_limit > static_limit
                            else "")
                    self.fail(f"shared buffer `{node.buffer.name}` brings its shared memory to "
                              f"{static} bytes", "max_shared_memory_per_block", static_limit,
                              f"use smaller tiles{more}", node.span)
            every = static + max(dynamic, launch_dyn)  # the launch's bytes are the dynamic ones
            if isinstance(total_limit, int) and every > total_limit:
                self.fail(f"shared buffer `{node.buffer.name}` brings its shared memory to "
                          f"{every} bytes", "max_dynamic_shared_memory_per_block", total_limit,
                          "use smaller tiles", node.span)


def _describe(target: Any) -> str:
    kind = target.kind.name if hasattr(target, "kind") else str(target)
    tag = getattr(target, "tag", "")
    return f"{kind!r} ({tag})" if tag else repr(kind)
