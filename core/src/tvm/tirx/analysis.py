"""The seed's ``tvm.tirx.analysis``: the well-formedness check of a TIRx function."""

from __future__ import annotations

from typing import Any

from ..ir.function import IRModule, PrimFunc
from ..ir.verify import verify
from .transform.lower_kernel_form import check_kernel_form

__all__ = ["verify_tirx_well_formed"]


def verify_tirx_well_formed(func: Any, device_func: bool = False) -> bool:
    """Check ``func`` (a PrimFunc or an IRModule) with the IR verifier; raise
    :class:`~tvm.error.IRVerifyError` naming each broken rule, else return True.
    ``device_func``: the seed's flag for a function called from a kernel; the checks are the
    same here (a scope-id definition is valid in either). A kernel's ids must also agree
    (``T.warp_id([4])`` with ``T.lane_id([32])`` and ``T.thread_id([64])`` is the
    :class:`~tvm.error.KernelFormError` "Inconsistent extents for scope thread: ...")."""
    del device_func
    verify(func)
    funcs = func.functions.values() if isinstance(func, IRModule) else [func]
    for f in funcs:
        if isinstance(f, PrimFunc):
            check_kernel_form(f)
    return True
