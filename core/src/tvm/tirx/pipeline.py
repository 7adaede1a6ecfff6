"""Core's TIR pipelines, ``s_tir`` (also ``default``) and ``tirx`` (registered in
``compilation_pipeline``).

A pipeline factory returns a :class:`~tvm.transform.Pipeline`: its ``main`` stage lowers the
module (for device targets down to kernels and a host launcher); ``host`` and ``device`` are
the Sequentials run on the host functions and on the kernels before codegen.

Main pass stages::

    TilePrimitiveDispatch -> FuseRowLoops -> LowerKernelForm -> StmtSimplify -> FlattenBuffer
      -> VectorizeLoop -> UnrollLoop -> StmtSimplify -> SplitHostDevice
"""

from __future__ import annotations

from typing import Any

from ..transform import Pass, Pipeline, Sequential
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


def _pipeline(name: str, **kwargs: Any) -> Pipeline:
    return Pipeline(name, _main(name, **kwargs), finalize_host_passes(), finalize_device_passes())


def tirx_pipeline(*, disable_vectorize: bool = False, disable_unroll: bool = False,
                  split_host_device: bool = True) -> Pipeline:
    """The TIRx pipeline: the main stages, then :func:`finalize_host_passes` and
    :func:`finalize_device_passes`.

    ``disable_vectorize`` makes vectorized loops serial; ``disable_unroll`` keeps unroll loops;
    ``split_host_device=False`` stops before the host/device split.
    """
    return _pipeline("tirx", disable_vectorize=disable_vectorize, disable_unroll=disable_unroll,
                     split_host_device=split_host_device)


def s_tir_pipeline(*, disable_vectorize: bool = False, disable_unroll: bool = False,
                   split_host_device: bool = True) -> Pipeline:
    """The ``s_tir`` pipeline, the seed's default: the same stages as :func:`tirx_pipeline`,
    named ``s_tir``. (The seed's ``s_tir`` lowers scheduled TIR; this project has no schedule
    IR, so its default pipeline is the TIRx one.)"""
    return _pipeline("s_tir", disable_vectorize=disable_vectorize, disable_unroll=disable_unroll,
                     split_host_device=split_host_device)


def default_pipeline(**kwargs: Any) -> Pipeline:
    """The default pipeline: :func:`s_tir_pipeline`, as ``"default"`` maps to ``"s_tir"`` in the
    seed."""
    return s_tir_pipeline(**kwargs)
