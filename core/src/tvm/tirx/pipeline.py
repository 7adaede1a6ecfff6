"""Core's TIR pipelines, ``s_tir`` (also ``default``) and ``tirx`` (registered in
``compilation_pipeline``).

A pipeline factory returns ``(main_pass, finalize_host_passes, finalize_device_passes)``: the
main pass lowers the module (for device targets down to kernels and a host launcher); the two
functions return the Sequentials run on the host and device functions before codegen.

Main pass stages::

    TilePrimitiveDispatch -> FuseRowLoops -> LowerKernelForm -> StmtSimplify -> FlattenBuffer
      -> VectorizeLoop -> UnrollLoop -> StmtSimplify -> SplitHostDevice
"""

from __future__ import annotations

from typing import Any

from ..transform import Pass, Sequential
from .transform import (
    FlattenBuffer,
    FuseRowLoops,
    LowerKernelForm,
    SplitHostDevice,
    StmtSimplify,
    TilePrimitiveDispatch,
    UnrollLoop,
    VectorizeLoop,
)

__all__ = ["default_pipeline", "finalize_device_passes", "finalize_host_passes", "s_tir_pipeline",
           "tirx_pipeline"]


def _main(name: str, *, disable_vectorize: bool = False, disable_unroll: bool = False,
          split_host_device: bool = True) -> Sequential:
    passes: list[Pass] = [
        TilePrimitiveDispatch(),
        FuseRowLoops(),
        LowerKernelForm(),
        StmtSimplify(),
        FlattenBuffer(),
        VectorizeLoop(enable=not disable_vectorize),
    ]
    if not disable_unroll:
        passes.append(UnrollLoop())
    passes.append(StmtSimplify())
    if split_host_device:
        passes.append(SplitHostDevice())
    return Sequential(passes, name=name)


def finalize_host_passes() -> Sequential:
    """Passes run on host functions before codegen."""
    return Sequential([StmtSimplify()], name="finalize_host")


def finalize_device_passes() -> Sequential:
    """Passes run on device kernels before codegen."""
    return Sequential([StmtSimplify()], name="finalize_device")


def tirx_pipeline(*, disable_vectorize: bool = False, disable_unroll: bool = False,
                  split_host_device: bool = True) -> tuple[Sequential, Any, Any]:
    """The TIRx pipeline: ``(main_pass, finalize_host_passes, finalize_device_passes)``.

    ``disable_vectorize`` makes vectorized loops serial; ``disable_unroll`` keeps unroll loops;
    ``split_host_device=False`` stops before the host/device split.
    """
    main = _main("tirx", disable_vectorize=disable_vectorize, disable_unroll=disable_unroll,
                 split_host_device=split_host_device)
    return main, finalize_host_passes, finalize_device_passes


def s_tir_pipeline(*, disable_vectorize: bool = False, disable_unroll: bool = False,
                   split_host_device: bool = True) -> tuple[Sequential, Any, Any]:
    """The ``s_tir`` pipeline, the seed's default: the same stages as :func:`tirx_pipeline`,
    named ``s_tir``. (The seed's ``s_tir`` lowers scheduled TIR; this project has no schedule
    IR, so its default pipeline is the TIRx one.)"""
    main = _main("s_tir", disable_vectorize=disable_vectorize, disable_unroll=disable_unroll,
                 split_host_device=split_host_device)
    return main, finalize_host_passes, finalize_device_passes


def default_pipeline(**kwargs: Any) -> tuple[Sequential, Any, Any]:
    """The default pipeline: :func:`s_tir_pipeline`, as ``"default"`` maps to ``"s_tir"`` in the
    seed."""
    return s_tir_pipeline(**kwargs)
