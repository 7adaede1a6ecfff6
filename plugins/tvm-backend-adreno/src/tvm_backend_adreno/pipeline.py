"""The ``adreno`` TIR pipeline: what ``tvm.compile`` runs for OpenCL targets of Adreno GPUs.

In the seed, core's ``get_default_tir_pipeline`` picked ``"adreno"`` for an ``opencl`` target
with the ``adreno`` key; here this backend's ``tvm_default_pipeline`` hook does. The pipeline is
core's default stages after one Adreno pass, :class:`AdrenoTextureScopes`: the seed's Adreno
pipeline lowers buffers in texture memory (scopes ``global.texture*``) to OpenCL images
(``InjectTextureAlloc``, ``TextureFlatten``); that lowering is not ported, so such a buffer is
refused up front with its name, instead of reaching the OpenCL codegen as a plain pointer.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.backend import sdk
from tvm.error import TVMError
from tvm.ir import PrimFunc
from tvm.ir.function import IRModule
from tvm.ir.visitor import post_order_visit
from tvm.transform import PassContext, Pipeline, PrimFuncPass, Sequential

__all__ = ["TEXTURE_SCOPE", "AdrenoTextureScopes", "adreno_pipeline"]

TEXTURE_SCOPE = "global.texture"


@dataclasses.dataclass(frozen=True)
class AdrenoTextureScopes(PrimFuncPass):
    """Refuse buffers in texture memory (``global.texture``, ``global.texture-nhwc``, ...)."""

    name = "AdrenoTextureScopes"

    def transform_function(self, func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        buffers = list(func.buffer_map.values())

        def visit(node: Any) -> None:
            buffer = getattr(node, "buffer", None)
            if buffer is not None:
                buffers.append(buffer)

        post_order_visit(func.body, visit)
        for buffer in buffers:
            if str(buffer.scope).startswith(TEXTURE_SCOPE):
                raise TVMError(
                    f"{func.name}: buffer `{buffer.name}` is in texture memory (scope "
                    f"{buffer.scope!r}); tvm-backend-adreno does not lower textures to OpenCL "
                    "images (the seed's InjectTextureAlloc/TextureFlatten are not ported): "
                    "use global memory")
        return func


def adreno_pipeline(**kwargs: Any) -> Pipeline:
    """Core's default pipeline with :class:`AdrenoTextureScopes` before its main stages."""
    default = sdk.get_tir_pipeline("default", **kwargs)
    main = Sequential([AdrenoTextureScopes(), *([default.main] if default.main is not None else [])],
                      name="adreno")
    return dataclasses.replace(default, name="adreno", main=main)
