"""Tile primitives and their dispatcher.

Per-backend schedule registrations are loaded via ``tvm.backend.load(<name>)``: a backend's
``tvm_register_dispatch`` hook imports its dispatch modules, whose top level calls
:func:`register_dispatch`. Core registers a generic ``"fallback"`` variant of every tile
primitive for every target kind (``fallback``).
"""

from __future__ import annotations

from . import fallback as fallback  # noqa: E402,I001 - registers the fallback variants
from . import ops as ops
from .dispatch_context import (
    SERIAL,
    DispatchContext,
    ThreadInfo,
    register_scope_barrier,
)
from .dispatcher import (
    DISPATCH_REGISTRY,
    Predicate,
    dispatch,
    fail,
    get_variants,
    list_registered_schedules,
    lower_tile_primitives,
    predicate,
    register_dispatch,
)

__all__ = [
    "DISPATCH_REGISTRY", "SERIAL", "DispatchContext", "Predicate", "ThreadInfo", "dispatch",
    "fail", "get_variants", "list_registered_schedules", "lower_tile_primitives", "predicate",
    "register_dispatch", "register_scope_barrier",
]
