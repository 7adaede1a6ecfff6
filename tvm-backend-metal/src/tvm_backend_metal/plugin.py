"""The hooks of the Metal backend (entry point ``metal = "tvm_backend_metal.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind and Apple GPU tags), ``script`` and ``op``
(``T.metal`` and the ``tirx.metal.*`` intrinsics), ``dispatch`` (tile-primitive variants),
``codegen`` (IR to MSL), ``compiler`` (checks and packages the MSL), ``executable`` (the build
contract and the Executable), ``runtime`` (the Apple GPU through pyobjc). Nothing heavy is
imported here (no numpy, no pyobjc): those load when a kernel runs.
"""

from __future__ import annotations

from tvm.backend.sdk import BackendSpec

from . import __version__, dispatch, op, runtime, tags
from .script import MetalNamespace

__all__ = ["DISTRIBUTION", "KIND", "NAME", "SPEC", "register_backend"]

NAME = "metal"
KIND = tags.KIND
DISTRIBUTION = "tvm-backend-metal"

#: the seed's module paths, as aliases of where the code lives here
SEED_PATHS: dict[str, str | tuple[str, ...]] = {
    f"{NAME}.target_tags": "tvm_backend_metal.tags",
}

SPEC = BackendSpec(
    name=NAME,
    version=__version__,
    api_range=">=2,<3",
    distribution=DISTRIBUTION,
    description="Apple GPUs: Metal Shading Language (runs on macOS; checked and emulated "
                "on the CPU elsewhere)",
    aliases={NAME: "tvm_backend_metal", **SEED_PATHS},  # tvm.backend.metal, tvm.tirx.metal
    kinds=tags.KINDS,
    tags=tags.TAGS,
    script_namespaces={"metal": MetalNamespace},
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    builders={KIND: "tvm_backend_metal.executable:MetalBuilder"},
    device_probes={"macos": runtime.unavailable_reason},
    # the demo's kernels are TVMScript and it brings tvm.demo: named, loaded when the demo runs
    demo_cases="tvm_backend_metal.demo:demo_cases",
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
