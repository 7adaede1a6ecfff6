"""OpenCL's device intrinsics: ``tirx.opencl.*`` ops, their builders and OpenCL C rules.

The seed registers no OpenCL ops; these are the ones the dispatch variants need, usable from
scripts as ``T.opencl.<name>``: the work-group ``barrier`` and ``mem_fence``, with the memory
they order (``"local"``, ``"global"`` or ``"local_global"``).

>>> T.opencl.barrier("local")      # barrier(CLK_LOCAL_MEM_FENCE);
"""

from __future__ import annotations

from typing import Any

from tvm.ir import expr as E
from tvm.ir.op import CallEffect, Op

__all__ = ["FENCE_FLAGS", "OPS", "barrier", "mem_fence", "op_name", "register_ops"]

NS = "opencl"
OPS = ("barrier", "mem_fence")
#: the memory a barrier or fence orders, by the string argument of T.opencl.barrier(...)
FENCE_FLAGS = {
    "local": "CLK_LOCAL_MEM_FENCE",
    "global": "CLK_GLOBAL_MEM_FENCE",
    "local_global": "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
}


def op_name(name: str) -> str:
    return f"tirx.{NS}.{name}"


def _call(name: str, flags: str) -> Any:
    if not (isinstance(flags, str) and flags in FENCE_FLAGS):
        raise ValueError(f"T.opencl.{name}: unknown memory {flags!r}; expected one of "
                         f"{sorted(FENCE_FLAGS)}")
    return Op.get(op_name(name))(flags, dtype="void")


def barrier(flags: str = "local") -> Any:
    """``barrier(CLK_<flags>_MEM_FENCE)``: every work-item of the work-group waits here."""
    return _call("barrier", flags)


def mem_fence(flags: str = "local_global") -> Any:
    """``mem_fence(...)``: orders this work-item's loads and stores of that memory."""
    return _call("mem_fence", flags)


for _builder in (barrier, mem_fence):  # how the printer finds T.opencl.<name>
    _builder.__tir_op_name__ = op_name(_builder.__name__)  # type: ignore[attr-defined]  # a function attribute


def _rule(name: str) -> Any:
    def rule(cg: Any, call: Any, args: list[str]) -> str:
        arg = call.args[0]
        flags = arg.value if isinstance(arg, E.StringImm) else str(arg)
        return f"{name}({FENCE_FLAGS[flags]})"

    return rule


def register_ops() -> None:
    """Register every ``tirx.opencl.*`` op with its OpenCL C rule (``tvm_register_ops``)."""
    for name in OPS:
        op = Op.register(op_name(name), category="device_intrin", namespace=NS,
                         printer_name=f"{NS}.{name}", effect=CallEffect.UPDATE_STATE,
                         dtype="void", signature=("flags",), global_symbol=name)
        op.set_codegen(NS, _rule(name))
