"""The example backend's device intrinsic: ``T.example.fma(a, b, c)`` computes ``a * b + c``."""

from __future__ import annotations

from typing import Any

from tvm.ir.op import CallEffect, Op

from .tags import KIND

__all__ = ["FMA", "fma", "register_ops"]

FMA = "tirx.example.fma"


def register_ops() -> None:
    """Register the intrinsics (called from the tvm_register_ops hook, once per load)."""
    op = Op.register(
        FMA,
        category="device_intrin",
        namespace="example",
        dtype="arg0",
        effect=CallEffect.PURE,
        signature=("a", "b", "c"),
    )
    # The codegen rule of kind "example": a C template of the printed arguments, used by
    # codegen.ExampleCodegen (whose target_kind is "example"). A dict rule picks by dtype
    # ({"float32": "fmaf({0}, {1}, {2})", ...}); a function rule gets the codegen and the call.
    op.set_codegen(KIND, "(({0}) * ({1}) + ({2}))")


def fma(a: Any, b: Any, c: Any) -> Any:
    """Build the call ``tirx.example.fma(a, b, c)``."""
    return Op.get(FMA)(a, b, c)
