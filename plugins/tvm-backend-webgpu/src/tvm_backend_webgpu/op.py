"""WebGPU's device intrinsics: the WGSL codegen rules of core's ``T.webgpu`` ops, and the
barriers the tile-primitive variants put between collective ops.

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

from tvm.backend.sdk import record_undo
from tvm.error import CodegenError
from tvm.ir import Evaluate, SeqStmt
from tvm.ir.op import Op
from tvm.tirx.op import call_extern

__all__ = ["SHUFFLES", "extern", "register_ops", "workgroup_barrier"]

NS = "webgpu"
#: core's op -> the WGSL builtin; the lane (or delta) argument is a u32 in WGSL
SHUFFLES = {
    "tirx.webgpu.subgroup_shuffle": "subgroupShuffle",
    "tirx.webgpu.subgroup_shuffle_up": "subgroupShuffleUp",
    "tirx.webgpu.subgroup_shuffle_down": "subgroupShuffleDown",
}
_SHUFFLE_TYPES = ("float32", "int32", "uint32")


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
        if not cg.target_attr("supports_subgroups", False):
            raise CodegenError(f"T.webgpu.{short} needs a WebGPU target with subgroups: add "
                               "\"supports_subgroups\": True to the target (the device must "
                               "have the 'subgroups' feature)")
        if str(call.dtype) not in _SHUFFLE_TYPES:
            raise CodegenError(f"T.webgpu.{short} shuffles {', '.join(_SHUFFLE_TYPES)} in WGSL, "
                               f"got {call.dtype}")
        cg.uses_subgroups = True
        return f"{builtin}({args[0]}, u32({args[1]}))"

    return rule


def register_ops() -> None:
    """Attach the WGSL rule of each ``tirx.webgpu.*`` op (the ``tvm_register_ops`` hook); the
    rules leave with the backend if its registration is rolled back."""
    for op_name, builtin in SHUFFLES.items():
        op = Op.get(op_name)
        op.set_codegen(NS, _shuffle_rule(op_name, builtin))
        record_undo(_forget_rule(op))


def _forget_rule(op: Any) -> Callable[[], None]:
    def undo() -> None:
        op.attrs.pop(f"codegen.{NS}", None)

    return undo
