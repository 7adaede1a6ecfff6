"""The seed's ``tvm.tirx.analysis``: the well-formedness check of a TIRx function."""

from __future__ import annotations

from typing import Any

from ..error import KernelFormError, ScopeIdExtentError
from ..ir.function import IRModule, PrimFunc
from ..ir.verify import verify
from .transform.lower_kernel_form import check_kernel_ids

__all__ = ["verify_tirx_well_formed"]


def verify_tirx_well_formed(func: Any, device_func: bool = False) -> bool:
    """Check ``func`` (a PrimFunc or an IRModule) with the IR verifier and its kernel ids as
    :class:`~tvm.tirx.transform.LowerKernelForm` would lower them; raise
    :class:`~tvm.error.IRVerifyError` naming each broken rule (for kernel ids whose extents
    disagree a :class:`~tvm.error.ScopeIdExtentError` that begins "Inconsistent extents for
    scope ids", as the seed's check says), else return True. Other kernel-form errors (an
    id without extents that nothing implies, ids inside loops) are left to the lowering, as
    the seed's check leaves them. ``device_func``: the seed's flag
    for a function called from a kernel; the checks are the same here (a scope-id definition
    is valid in either)."""
    del device_func
    verify(func)
    funcs = [f for f in func.functions.values() if isinstance(f, PrimFunc)] \
        if isinstance(func, IRModule) else [func]
    for f in funcs:
        try:
            check_kernel_ids(f, allow_deferred=True)
        except ScopeIdExtentError as err:
            raise ScopeIdExtentError(f"Inconsistent extents for scope ids: {err}") from None
        except KernelFormError:
            pass  # reported where the kernel is lowered
    return True
