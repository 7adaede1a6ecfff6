"""The hooks of the Metal backend (entry point ``metal = "tvm_backend_metal.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind and Apple GPU tags), ``script`` and ``op``
(``T.metal`` and the ``tirx.metal.*`` intrinsics), ``dispatch`` (tile-primitive variants),
``codegen`` (IR to MSL), ``compiler`` (checks and packages the MSL), ``executable`` (the build
contract and the Executable), ``runtime`` (the Apple GPU through pyobjc). Nothing heavy is
imported here (no numpy, no pyobjc): those load when a kernel runs.
"""

from __future__ import annotations

from tvm.backend import sdk

from . import __version__, dispatch, op, runtime, tags
from .script import MetalNamespace

__all__ = ["SPEC", "register_backend"]

SPEC = sdk.layout_spec(
    "metal", __version__, ">=2,<3", tags,
    description="Apple GPUs: Metal Shading Language (runs on macOS; checked and emulated "
                "on the CPU elsewhere)",
    seed_tags=True,  # the seed's metal.target_tags
    script_namespaces={"metal": MetalNamespace},
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    builder="MetalBuilder",
    device_probes={"macos": runtime.unavailable_reason},
    # the demo's kernels are TVMScript and it brings tvm.demo: named, loaded when the demo runs
    demo_cases="tvm_backend_metal.demo:demo_cases",
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
