"""TVMScript namespaces of the host backend: none.

Host kernels are plain TIRx (``T.*``, ``Tx.*``); the host adds no ``T.<namespace>`` of device
intrinsics. The file exists so that every backend has the same layout.
"""

from __future__ import annotations

__all__ = ["NAMESPACES"]

NAMESPACES: dict[str, object] = {}
