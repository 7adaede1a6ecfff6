"""The ``trn`` TIR pipeline (the default for trn targets).

Main pass stages::

    TrnPrivateBufferAlloc -> TrnNaiveAllocator -> TilePrimitiveDispatch -> LowerTrainiumLayout
      -> StmtSimplify

The finalizers: the host one is core's; the device one (``finalize_device_passes_trn``) is a
StmtSimplify. Everything runs on the kernel itself: a Trainium kernel has no host part.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import StmtSimplify, TilePrimitiveDispatch
from tvm.transform import Pipeline, Sequential

from .transform import LowerTrainiumLayout, TrnNaiveAllocator, TrnPrivateBufferAlloc

__all__ = ["finalize_device_passes_trn", "finalize_host_passes", "trn_pipeline"]


def finalize_host_passes() -> Sequential:
    return Sequential([], name="finalize_host_trn")


def finalize_device_passes_trn() -> Sequential:
    return Sequential([StmtSimplify()], name="finalize_device_trn")


def trn_pipeline(**_: Any) -> Pipeline:
    """The main stages, then :func:`finalize_host_passes` and :func:`finalize_device_passes_trn`."""
    main = Sequential([
        TrnPrivateBufferAlloc(),
        TrnNaiveAllocator(),
        TilePrimitiveDispatch(),
        LowerTrainiumLayout(),
        StmtSimplify(),
    ], name="trn")
    return Pipeline("trn", main, finalize_host_passes(), finalize_device_passes_trn())
