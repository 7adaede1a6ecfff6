"""The hooks of the CUDA backend: the only module tvm imports when it loads the backend.

Hooks only, made from the data in ``SPEC``; the work is in the backend's other modules (the
layout of every backend): ``tags`` (the target kind and the ``nvidia/*`` tags), ``script`` and
``op`` (``T.cuda``, ``T.ptx``, ``T.nvshmem`` and their intrinsics, declared in
``intrinsics/``), ``dispatch/`` (tile-primitive variants), ``codegen`` (IR to CUDA C++),
``compiler`` (NVRTC), ``executable`` (the build contract and the Executable), ``runtime``
(cuda.core). No SDK is imported here: cuda.*, numpy and torch load when a kernel is compiled or
run.

Entry point: ``cuda = "tvm_backend_cuda.plugin"`` in the group ``tvm.backends``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm.backend.sdk import layout_spec

from . import __version__, dispatch, op, runtime, script, tags
from .layout import layout_names

__all__ = ["DISTRIBUTION", "KIND", "NAME", "SPEC", "register_backend"]

NAME = "cuda"
KIND = tags.KIND


def _smem_pool() -> type:
    """``T.SMEMPool``: the seed's script name of :class:`tvm_backend_cuda.lang.SMEMPool`."""
    from .lang.alloc_pool import SMEMPool  # noqa: PLC0415 - the helpers load when the backend does

    return SMEMPool


def _ldst_frag() -> Callable[..., Any]:
    """``T.alloc_tcgen05_ldst_frag``: :func:`tvm_backend_cuda.script.alloc_tcgen05_ldst_frag`."""
    return script.alloc_tcgen05_ldst_frag


def _gpu_probe() -> str | None:
    return None if runtime.has_cuda_device() else f"no CUDA device: {runtime.no_device_reason()}"


#: the seed's tile-primitive families -> the dispatch modules that implement them here
_FAMILIES: dict[str, str | tuple[str, ...]] = {
    "copy": "tvm_backend_cuda.dispatch.copy",
    "copy_async": "tvm_backend_cuda.dispatch.copy_async",
    "elementwise": "tvm_backend_cuda.dispatch.elementwise",
    "gemm": "tvm_backend_cuda.dispatch.gemm_mma",
    "gemm_async": ("tvm_backend_cuda.dispatch.gemm_wgmma", "tvm_backend_cuda.dispatch.gemm_tcgen05",
                   "tvm_backend_cuda.dispatch.sf_layout"),
    "reduction": "tvm_backend_cuda.dispatch.reduction",
    "common": "tvm_backend_cuda.dispatch.common",
    "tma_utils": "tvm_backend_cuda.dispatch.tma_utils",
    "permute_layout": "tvm_backend_cuda.dispatch.permute_layout",
    "layout_utils": "tvm_backend_cuda.dispatch.layout_utils",
}
#: the seed's variant modules (``<family>.<variant>``) -> the module that implements them here
#: (one module per family here, so a variant path is its family's module)
_VARIANTS: dict[str, str | tuple[str, ...]] = {
    "copy.fallback": "tvm_backend_cuda.dispatch.copy",
    "copy.gmem_smem": "tvm_backend_cuda.dispatch.copy",
    "copy.ld_stmatrix": "tvm_backend_cuda.dispatch.copy",
    "copy.reg": "tvm_backend_cuda.dispatch.copy",
    "copy._swizzle_iter": "tvm_backend_cuda.dispatch.swizzle_iter",
    "copy_async.dsmem": "tvm_backend_cuda.dispatch.copy_async",
    "copy_async.ldgsts": "tvm_backend_cuda.dispatch.copy_async",
    "copy_async.tma": "tvm_backend_cuda.dispatch.copy_async",
    "copy_async.tcgen05_cp": "tvm_backend_cuda.dispatch.copy_async",
    "copy_async.tcgen05_ldst": "tvm_backend_cuda.dispatch.copy_async",
    "elementwise.reg": "tvm_backend_cuda.dispatch.elementwise",
    "elementwise.smem": "tvm_backend_cuda.dispatch.elementwise",
    "gemm.mma_m16n8k_": "tvm_backend_cuda.dispatch.gemm_mma",
    "gemm_async.tcgen05": "tvm_backend_cuda.dispatch.gemm_tcgen05",
    "reduction.local": "tvm_backend_cuda.dispatch.reduction",
    "reduction.shared": "tvm_backend_cuda.dispatch.reduction",
    "exec_scope_utils": "tvm_backend_cuda.dispatch.common",
    "permute_layout.warp_xor_swizzle": "tvm_backend_cuda.dispatch.permute_layout",
}
#: the kernel helpers whose seed path is ``tvm.tirx.lang.<module>`` (a path in core's namespace
#: that this backend declares; core's catalogue names the distribution to install without it)
LANG_MODULES = ("alloc_pool", "pipeline", "smem_desc", "tile_scheduler", "warp_role")
#: the seed's module paths (beside target_tags), as aliases of where the code lives here
SEED_PATHS: dict[str, str | tuple[str, ...]] = {
    **{f"tvm.tirx.lang.{module}": f"tvm_backend_cuda.lang.{module}" for module in LANG_MODULES},
    f"{NAME}.operator.intrinsics": "tvm_backend_cuda.intrinsics",
    **{f"{NAME}.operator.tile_primitive.{family}": modules for family, modules in _FAMILIES.items()},
    **{f"{NAME}.operator.tile_primitive.{path}": module for path, module in _VARIANTS.items()},
}

SPEC = layout_spec(
    NAME, __version__, ">=2,<3", tags,
    description="NVIDIA GPUs: CUDA C++ compiled by NVRTC to cubins (no toolkit needed), "
                "launched with cuda.core",
    seed_tags=True,
    aliases=SEED_PATHS,
    script_namespaces={"cuda": script.CUDANamespace, "ptx": script.PTXNamespace,
                       "nvshmem": script.NVSHMEMNamespace, "SMEMPool": _smem_pool,
                       "alloc_tcgen05_ldst_frag": _ldst_frag},
    layout_names=layout_names,
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    builder="CudaBuilder",
    default_pipeline={KIND: "tirx"},
    device_probes={"gpu": _gpu_probe},
    device_memory={"cuda": "tvm_backend_cuda.runtime:MEMORY"},
    # the demo's kernels are TVMScript and it brings tvm.demo: named, loaded when the demo runs
    demo_cases="tvm_backend_cuda.demo:demo_cases",
)
DISTRIBUTION = SPEC.distribution
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
