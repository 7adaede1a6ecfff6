"""How the threads of a scope synchronise on Hexagon: they do not need to. The C for the DSP
runs the kernel form's threads one after another (as the host target does), so the kind is
registered ``SERIAL`` for every scope: core's fallback runs a collective op on thread 0 of its
scope, with no barrier."""

from __future__ import annotations

from tvm.backend.sdk import SERIAL, register_scope_barrier

__all__ = ["KIND", "register_all"]

KIND = "hexagon"


def register_all() -> None:
    register_scope_barrier(KIND, "*", SERIAL)
