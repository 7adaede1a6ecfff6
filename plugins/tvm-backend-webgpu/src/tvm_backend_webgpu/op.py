"""WebGPU's device intrinsics: the WGSL codegen rules of core's ``T.webgpu`` ops, and the
barriers the tile-primitive variants put between collective ops.

Core declares ``T.webgpu`` (:data:`tvm.tirx.op.INTRINSICS`: op, builder, member, printed form);
this backend's table, ``INTRINSICS`` (kind ``webgpu``), gives each op its rule with
:meth:`~tvm.ir.intrin.IntrinTable.add_rule`, with the requirement that the target has
subgroups, checked before the rule runs.

The seed keeps ``T.webgpu`` (``subgroup_shuffle``, ``subgroup_shuffle_up``,
``subgroup_shuffle_down``: ops ``tirx.webgpu.*``, printed and parsed by core) in core; this
backend gives them their WGSL (``subgroupShuffle``, ``subgroupShuffleUp``,
``subgroupShuffleDown``), for targets whose device has subgroups (``supports_subgroups``). A
barrier is a ``T.call_extern`` of the WGSL builtin (``workgroupBarrier()``,
``storageBarrier()``), which prints, parses back and lowers like any extern call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm.error import CodegenError
from tvm.ir import Evaluate, SeqStmt
from tvm.ir.intrin import IntrinTable, target_flag
from tvm.tirx.op import INTRINSICS as CORE_INTRINSICS
from tvm.tirx.op import call_extern

from .tags import KIND

__all__ = ["INTRINSICS", "SHUFFLES", "extern", "register_ops", "workgroup_barrier"]

NS = "webgpu"
#: core's op -> the WGSL builtin; the lane (or delta) argument is a u32 in WGSL
SHUFFLES = {
    "tirx.webgpu.subgroup_shuffle": "subgroupShuffle",
    "tirx.webgpu.subgroup_shuffle_up": "subgroupShuffleUp",
    "tirx.webgpu.subgroup_shuffle_down": "subgroupShuffleDown",
}
_SHUFFLE_TYPES = ("float32", "int32", "uint32")
#: what a shuffle needs of the target
SUBGROUPS = target_flag(
    "supports_subgroups", "a WebGPU target with subgroups",
    "add \"supports_subgroups\": True to the target (the device must have the 'subgroups' "
    "feature)")

#: this backend's rules (for kind "webgpu") of core's T.webgpu intrinsics
INTRINSICS = IntrinTable(KIND)


def extern(name: str, *args: Any, dtype: str = "void") -> Any:
    """``T.call_extern(dtype, name, *args)``: a call of the WGSL builtin ``name``."""
    return call_extern(dtype, name, *args)


def workgroup_barrier() -> Any:
    """Every invocation of the workgroup waits here, and its writes to workgroup and storage
    memory before are visible to the others after it."""
    return SeqStmt([Evaluate(extern("storageBarrier")), Evaluate(extern("workgroupBarrier"))])


def _shuffle_rule(op_name: str, builtin: str) -> Callable[[Any, Any, list[str]], str]:
    short = op_name.rsplit(".", 1)[1]

    def rule(cg: Any, call: Any, args: list[str]) -> str:
        if str(call.dtype) not in _SHUFFLE_TYPES:
            raise CodegenError(f"T.webgpu.{short} shuffles {', '.join(_SHUFFLE_TYPES)} in WGSL, "
                               f"got {call.dtype}")
        cg.uses_subgroups = True
        return f"{builtin}({args[0]}, u32({args[1]}))"

    return rule


for _op_name, _builtin in SHUFFLES.items():
    INTRINSICS.add_rule(CORE_INTRINSICS.spec(_op_name.removeprefix("tirx.")),
                        _shuffle_rule(_op_name, _builtin), requires=[SUBGROUPS])


def register_ops() -> None:
    """Attach the WGSL rule of each ``tirx.webgpu.*`` op (the ``tvm_register_ops`` hook); the
    rules leave with the backend if its registration is rolled back."""
    INTRINSICS.register_ops()
