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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real names for the type checker; at run time they load lazily
    from .lower_trainium_layout import LowerTrainiumLayout
    from .naive_allocator import TrnNaiveAllocator
    from .private_buffer_alloc import TrnPrivateBufferAlloc

__all__ = ["LowerTIRx", "LowerTrainiumLayout", "TrnNaiveAllocator", "TrnPrivateBufferAlloc"]

_LAZY = {
    "TrnPrivateBufferAlloc": ".private_buffer_alloc",
    "TrnNaiveAllocator": ".naive_allocator",
    "LowerTrainiumLayout": ".lower_trainium_layout",
}


def LowerTIRx() -> Any:  # noqa: N802 - the seed's pass-constructor spelling
    """The backend's composite lowering: dispatch, then Trainium layouts."""
    from tvm.tirx.transform import TilePrimitiveDispatch
    from tvm.transform import Sequential

    from .lower_trainium_layout import LowerTrainiumLayout

    return Sequential([TilePrimitiveDispatch(), LowerTrainiumLayout()],
                      name="tirx.backend.trn.LowerTIRx")


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
