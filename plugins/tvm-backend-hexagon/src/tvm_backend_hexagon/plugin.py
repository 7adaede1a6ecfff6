"""The hooks of the Hexagon backend (entry point ``hexagon = "tvm_backend_hexagon.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind and the seed's Hexagon tags), ``script``
and ``op`` (none: the seed has no Hexagon ops), ``dispatch`` (serial threads), ``pipeline`` (no
host/device split), ``codegen`` (IR to C), ``compiler`` (C to a Hexagon object),
``executable`` (the build contract and the Executable), ``runtime`` (running needs the Hexagon
SDK).
"""

from __future__ import annotations

from tvm.backend import sdk

from . import dispatch, op, tags
from ._version import __version__

__all__ = ["SPEC", "register_backend"]

SPEC = sdk.layout_spec(
    "hexagon", __version__, ">=2,<3", tags,
    description="Qualcomm Hexagon DSPs: C compiled to Hexagon objects (running needs the SDK)",
    seed_tags=True,  # the seed's hexagon.target_tags
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    pipeline="tvm_backend_hexagon.pipeline:hexagon_pipeline",
    builder="HexagonBuilder",
    # compiler.py imports subprocess: named, so it loads only when pytest asks for the probe
    device_probes={"hexagon_cc": "tvm_backend_hexagon.compiler:compiler_unavailable_reason"},
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
