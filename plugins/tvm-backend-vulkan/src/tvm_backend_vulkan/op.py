"""Vulkan's device builtins, as GLSL calls: the barriers the tile-primitive variants put
between collective ops.

The seed gives Vulkan no script namespace and no intrinsics of its own, and neither does this
backend: a barrier is a ``T.call_extern`` of the GLSL builtin (``barrier()``,
``memoryBarrierShared()``, ...), which prints, parses back and lowers like any extern call.
The GLSL codegen (:mod:`.codegen`) adds the ``#extension`` a builtin needs
(``EXTERN_EXTENSIONS``).
"""

from __future__ import annotations

from typing import Any

from tvm.ir import Evaluate, SeqStmt
from tvm.tirx.op import call_extern

__all__ = ["OPS", "extern", "workgroup_barrier"]

#: this backend registers no op of its own
OPS: tuple[str, ...] = ()


def extern(name: str, *args: Any, dtype: str = "void") -> Any:
    """``T.call_extern(dtype, name, *args)``: a call of the GLSL builtin ``name``."""
    return call_extern(dtype, name, *args)


def workgroup_barrier() -> Any:
    """Every invocation of the workgroup waits here, and what it wrote to shared and buffer
    memory before is visible to the others after it."""
    return SeqStmt([Evaluate(extern("memoryBarrierShared")),
                    Evaluate(extern("memoryBarrierBuffer")),
                    Evaluate(extern("barrier"))])
