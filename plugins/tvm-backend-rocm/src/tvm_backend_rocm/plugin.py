"""The hooks of the ROCm backend (entry point ``rocm = "tvm_backend_rocm.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind and AMD GPU tags), ``script`` and ``op``
(none: the seed has no ROCm ops), ``dispatch`` (the barriers of core's fallback), ``codegen``
(IR to HIP), ``compiler`` (hipcc), ``executable`` (the build contract and the Executable),
``runtime`` (no launcher yet).
"""

from __future__ import annotations

from tvm.backend import sdk

from . import dispatch, op, tags
from ._version import __version__

__all__ = ["SPEC", "register_backend"]

SPEC = sdk.layout_spec(
    "rocm", __version__, ">=2,<3", tags,
    description="AMD GPUs: HIP C++ compiled to code objects by hipcc (no launcher yet)",
    seed_tags=True,  # the seed's rocm.target_tags
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    builder="RocmBuilder",
    # compiler.py imports subprocess: named, so it loads only when pytest asks for the probe
    device_probes={"hipcc": "tvm_backend_rocm.compiler:hipcc_unavailable_reason"},
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
