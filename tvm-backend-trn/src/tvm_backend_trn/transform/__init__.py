"""Trainium passes (``tvm.tirx.trn.transform``).

- :class:`TrnPrivateBufferAlloc`: allocate the workspaces dispatch variants need (identity
  tensors, PSUM accumulators, constant bias and partial-reduce tiles) and attach them to calls
- :class:`TrnNaiveAllocator`: give every SBUF/PSUM buffer an address per partition; fails with
  a clear message when the target's per-partition capacity is exceeded
- :class:`LowerTrainiumLayout`: check every on-chip buffer and access against Trainium layouts
  before codegen derives the NKI access patterns
- :func:`LowerTIRx`: TilePrimitiveDispatch + LowerTrainiumLayout
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import TilePrimitiveDispatch
from tvm.transform import Sequential

from .lower_trainium_layout import LowerTrainiumLayout
from .naive_allocator import TrnNaiveAllocator
from .private_buffer_alloc import TrnPrivateBufferAlloc

__all__ = ["LowerTIRx", "LowerTrainiumLayout", "TrnNaiveAllocator", "TrnPrivateBufferAlloc"]


def LowerTIRx() -> Any:  # noqa: N802 - the seed's pass-constructor spelling
    """The backend's composite lowering: dispatch, then Trainium layouts."""
    return Sequential([TilePrimitiveDispatch(), LowerTrainiumLayout()],
                      name="tirx.backend.trn.LowerTIRx")

