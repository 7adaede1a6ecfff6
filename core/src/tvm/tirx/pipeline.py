"""Core's TIR pipelines, ``default`` and ``tirx`` (registered in ``compilation_pipeline``).

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

__all__ = ["default_pipeline", "finalize_device_passes", "finalize_host_passes", "tirx_pipeline"]


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


def default_pipeline(*, disable_vectorize: bool = False, disable_unroll: bool = False,
                     split_host_device: bool = True) -> tuple[Sequential, Any, Any]:
    """The default pipeline: the same stages as :func:`tirx_pipeline`, named ``default``."""
    main = _main("default", disable_vectorize=disable_vectorize, disable_unroll=disable_unroll,
                 split_host_device=split_host_device)
    return main, finalize_host_passes, finalize_device_passes
