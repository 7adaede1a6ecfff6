"""The example backend's device intrinsic: ``T.example.fma(a, b, c)`` computes ``a * b + c``."""

from __future__ import annotations

from typing import Any

FMA = "tirx.example.fma"


def register_ops() -> None:
    """Register the intrinsics (called from the tvm_register_ops hook, once per load)."""
    from tvm.ir.op import CallEffect, Op

    op = Op.register(
        FMA,
        category="device_intrin",
        namespace="example",
        dtype="arg0",
        effect=CallEffect.PURE,
        signature=("a", "b", "c"),
    )
    # Codegen rules are keyed by target kind and read by that kind's codegen (format: see the
    # codegen of the kind; a real backend attaches its own kind's rule here).
    op.set_codegen("example", "(({0}) * ({1}) + ({2}))")


def fma(a: Any, b: Any, c: Any) -> Any:
    """Build the call ``tirx.example.fma(a, b, c)``."""
    from tvm.ir.op import Op

    return Op.get(FMA)(a, b, c)
