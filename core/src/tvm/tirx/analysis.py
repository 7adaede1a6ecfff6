"""The seed's ``tvm.tirx.analysis``: the well-formedness check of a TIRx function."""

from __future__ import annotations

from typing import Any

from ..ir.verify import verify

__all__ = ["verify_tirx_well_formed"]


def verify_tirx_well_formed(func: Any, device_func: bool = False) -> bool:
    """Check ``func`` (a PrimFunc or an IRModule) with the IR verifier; raise
    :class:`~tvm.error.IRVerifyError` naming each broken rule, else return True.
    ``device_func``: the seed's flag for a function called from a kernel; the checks are the
    same here (a scope-id definition is valid in either)."""
    del device_func
    verify(func)
    return True
