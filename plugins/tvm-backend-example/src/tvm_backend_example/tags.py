"""Target kind ``example`` and its tags, as data (one line per tag).

A tag is ``"vendor/device": {"kind": ..., attributes...}``; its attributes are checked against
the kind's schema (``attrs`` below) when a target is made from it, so a typo is an error that
names the allowed attributes.
"""

from __future__ import annotations

from typing import Any

from tvm.target import Attr, TargetKind

__all__ = ["KIND", "KINDS", "TAGS"]

KIND = "example"


def _validate(attrs: dict[str, Any]) -> None:
    if attrs["vector_width"] not in (1, 2, 4, 8, 16):
        raise ValueError(
            f"vector_width must be a power of two up to 16, got {attrs['vector_width']}"
        )


KINDS = [
    TargetKind(
        KIND,
        attrs={
            "vector_width": Attr(int, 4, "SIMD lanes of the (imaginary) device"),
            "mcpu": Attr(str, "generic", "the device model"),
        },
        default_keys=(KIND, "cpu"),
        device_type="cpu",
        validate=_validate,
        doc="the example backend's target: C for this CPU, run with ctypes",
    )
]

TAGS: dict[str, dict[str, Any]] = {
    "example/demo-board": {"kind": KIND, "vector_width": 8, "mcpu": "demo-board"},
    "example/tiny": {"kind": KIND, "vector_width": 1, "mcpu": "tiny"},
}
