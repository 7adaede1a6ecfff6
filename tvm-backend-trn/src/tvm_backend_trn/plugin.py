"""The hooks of the Trainium backend (entry point ``trn = "tvm_backend_trn.plugin"``).

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout every backend has): ``tags`` (the target kind and tags), ``script`` and ``op``
(``T.nki`` and the ``tirx.nki.*`` intrinsics), ``layout``, ``dispatch``, ``transform`` and
``pipeline`` (the ``trn`` pipeline), ``codegen`` (IR to the instruction form and NKI source),
``compiler`` (the instruction form to the payload), ``executable`` (the build contract and the
Executable), ``runtime`` (the simulator). numpy and ml_dtypes are imported only when a kernel
is simulated.
"""

from __future__ import annotations

from tvm.backend import sdk

from . import __version__, dispatch, layout, op, tags
from .script import NKINamespace

__all__ = ["DISTRIBUTION", "KIND", "NAME", "SPEC", "register_backend"]

NAME = "trn"
KIND = tags.KIND

#: the seed's tile-primitive families (``operator.tile_primitive.<family>`` and its
#: ``.default`` variant) -> the dispatch module that implements them here
_FAMILIES: dict[str, str] = {
    "binary": "tvm_backend_trn.dispatch.elementwise",
    "unary": "tvm_backend_trn.dispatch.elementwise",
    "copy": "tvm_backend_trn.dispatch.copy",
    "gemm": "tvm_backend_trn.dispatch.gemm",
    "reduction": "tvm_backend_trn.dispatch.reduction",
    "select": "tvm_backend_trn.dispatch.select",
    "compose_op": "tvm_backend_trn.dispatch.compose",
}
#: the seed's module paths (beside target_tags), as aliases of where the code lives here
SEED_PATHS: dict[str, str | tuple[str, ...]] = {
    f"{NAME}.operator.tile_primitive.common": "tvm_backend_trn.dispatch.common",
    **{f"{NAME}.operator.tile_primitive.{family}": module for family, module in _FAMILIES.items()},
    **{f"{NAME}.operator.tile_primitive.{family}.default": module
       for family, module in _FAMILIES.items()},
}

SPEC = sdk.layout_spec(
    NAME, __version__, ">=2,<3", tags,
    description="AWS Trainium: NKI source, run in a numpy simulator of the NKI instructions",
    seed_tags=True,
    aliases=SEED_PATHS,
    script_namespaces={"nki": NKINamespace},
    layout_names=layout.layout_names,
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    # the pass machinery loads when a pipeline is built, not at `import tvm`
    pipeline="tvm_backend_trn.pipeline:trn_pipeline",
    builder="TrnBuilder",
    # the demo's kernels are TVMScript and it brings tvm.demo: named, loaded when the demo runs
    demo_cases="tvm_backend_trn.demo:demo_cases",
)
DISTRIBUTION = SPEC.distribution
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
