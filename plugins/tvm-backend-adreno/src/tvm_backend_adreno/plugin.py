"""The hooks of the Adreno backend (entry point ``adreno = "tvm_backend_adreno.plugin"``).

Hooks only, made from the data in ``SPEC``: the seed's Adreno tags (``tags``), the ``adreno``
pipeline (``pipeline``) and the rule that picks it for OpenCL targets carrying the ``adreno``
key. It needs the OpenCL and Vulkan backends (``requires``), which the loader loads first.
"""

from __future__ import annotations

from tvm.backend import sdk
from tvm.target import Target

from . import tags
from ._version import __version__

__all__ = ["REQUIRES", "SPEC", "register_backend"]

#: the backends whose kinds the Adreno tags use; they load before this one
REQUIRES = ("opencl", "vulkan")


def _default_pipeline(target: Target) -> str | None:
    # The seed's special case, moved out of core: OpenCL targets of Adreno GPUs.
    return "adreno" if target.kind.name == "opencl" and tags.KEY in target.keys else None


SPEC = sdk.layout_spec(
    "adreno", __version__, ">=2,<3", tags,
    requires=REQUIRES,
    description="Qualcomm Adreno GPUs: the seed's tags and the adreno pipeline, built by "
                "the OpenCL backend",
    seed_tags=True,  # the seed's adreno.target_tags
    # pipeline.py imports tvm.transform: named, so it stays out of `import tvm`
    pipelines={"adreno": "tvm_backend_adreno.pipeline:adreno_pipeline"},
    default_pipeline=_default_pipeline,
    # An Adreno tag is an OpenCL (or Vulkan) target: those backends print, compile, build and
    # run it; the seed's adreno package has no ops or script namespaces of its own.
    delegates={stage: "opencl" for stage in ("op.py", "script.py", "codegen.py", "compiler.py",
                                             "executable.py", "runtime.py")},
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
