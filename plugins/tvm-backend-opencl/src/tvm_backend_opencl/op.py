"""OpenCL's device intrinsics: ``tirx.opencl.*`` ops, their builders and OpenCL C rules.

The seed registers no OpenCL ops; these are the ones the dispatch variants need, usable from
scripts as ``T.opencl.<name>``: the work-group ``barrier`` and ``mem_fence``, with the memory
they order (``"local"``, ``"global"`` or ``"local_global"``). Each is one declaration of
``INTRINSICS`` (core's :class:`tvm.ir.intrin.IntrinTable`): the op, its builder here, its
``T.opencl`` member (``script.py``), its printed form and its OpenCL C rule.

>>> T.opencl.barrier("local")      # barrier(CLK_LOCAL_MEM_FENCE);
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm.ir import expr as E
from tvm.ir.intrin import IntrinTable

from .tags import KIND

__all__ = ["FENCE_FLAGS", "INTRINSICS", "OPS", "op_name", "register_ops"]  # and the builders

NS = "opencl"
#: the memory a barrier or fence orders, by the string argument of T.opencl.barrier(...)
FENCE_FLAGS = {
    "local": "CLK_LOCAL_MEM_FENCE",
    "global": "CLK_GLOBAL_MEM_FENCE",
    "local_global": "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
}
#: every OpenCL intrinsic; builders are named as the op (``barrier``)
INTRINSICS = IntrinTable(KIND, builder_format="{name}")


def op_name(name: str) -> str:
    return f"tirx.{NS}.{name}"


def _flags(name: str, flags: Any) -> tuple[Any, ...]:
    if not (isinstance(flags, str) and flags in FENCE_FLAGS):
        raise ValueError(f"T.opencl.{name}: unknown memory {flags!r}; expected one of "
                         f"{sorted(FENCE_FLAGS)}")
    return (flags,)


def _barrier(flags: str = "local") -> tuple[Any, ...]:
    """``barrier(CLK_<flags>_MEM_FENCE)``: every work-item of the work-group waits here."""
    return _flags("barrier", flags)


def _mem_fence(flags: str = "local_global") -> tuple[Any, ...]:
    """``mem_fence(...)``: orders this work-item's loads and stores of that memory."""
    return _flags("mem_fence", flags)


def _rule(name: str) -> Callable[[Any, Any, list[str]], str]:
    def rule(cg: Any, call: Any, args: list[str]) -> str:
        arg = call.args[0]
        flags = arg.value if isinstance(arg, E.StringImm) else str(arg)
        return f"{name}({FENCE_FLAGS[flags]})"

    return rule


for _name, _operands in (("barrier", _barrier), ("mem_fence", _mem_fence)):
    INTRINSICS.declare(f"{NS}.{_name}", _operands, rule=_rule(_name), nargs=1,
                       attrs={"global_symbol": _name})

OPS = tuple(spec.op_suffix for spec in INTRINSICS.specs())
__all__ += sorted(INTRINSICS.builders())


def register_ops() -> None:
    """Register every ``tirx.opencl.*`` op with its OpenCL C rule (``tvm_register_ops``)."""
    INTRINSICS.register_ops()


# the builders (INTRINSICS.builders()) are this module's attributes too
__getattr__, __dir__ = INTRINSICS.module_hooks(globals())
