"""The hooks of the Hexagon backend (entry point ``hexagon = "tvm_backend_hexagon.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind and the seed's Hexagon tags), ``script``
and ``op`` (none: the seed has no Hexagon ops), ``dispatch`` (serial threads), ``pipeline`` (no
host/device split), ``codegen`` (IR to C), ``compiler`` (C to a Hexagon object),
``executable`` (the build contract and the Executable), ``runtime`` (running needs the Hexagon
SDK).
"""

from __future__ import annotations

from tvm.backend.sdk import BackendSpec

from . import dispatch, op, tags
from ._version import __version__

__all__ = ["DISTRIBUTION", "KIND", "NAME", "SPEC", "register_backend"]

NAME = "hexagon"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-hexagon"

#: the seed's module paths, as aliases of where the code lives here
SEED_PATHS: dict[str, str | tuple[str, ...]] = {
    f"{NAME}.target_tags": "tvm_backend_hexagon.tags",
}

SPEC = BackendSpec(
    name=NAME,
    version=__version__,
    api_range=">=2,<3",
    distribution=DISTRIBUTION,
    description="Qualcomm Hexagon DSPs: C compiled to Hexagon objects (running needs the SDK)",
    aliases={NAME: "tvm_backend_hexagon", **SEED_PATHS},  # tvm.backend.hexagon, tvm.tirx.hexagon
    kinds=tags.KINDS,
    tags=tags.TAGS,
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    pipelines={"hexagon": "tvm_backend_hexagon.pipeline:hexagon_pipeline"},
    default_pipeline={KIND: "hexagon"},
    builders={KIND: "tvm_backend_hexagon.executable:HexagonBuilder"},
    # compiler.py imports subprocess: named, so it loads only when pytest asks for the probe
    device_probes={"hexagon_cc": "tvm_backend_hexagon.compiler:compiler_unavailable_reason"},
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
