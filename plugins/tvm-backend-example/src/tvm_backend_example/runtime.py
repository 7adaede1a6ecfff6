"""Device access of the example backend: its device is this CPU, reached through ctypes.

The calls themselves go through core's host runtime, which :mod:`.executable` names directly:
``sdk.load_library`` opens a shared object and ``sdk.HostFunction`` calls one exported entry
point, after checking the arguments against the function's signature (the error names the
function and the parameter). A backend with a real device keeps its driver calls here
(allocation, copies, launches) and nothing else.
"""

from __future__ import annotations

__all__ = ["device_unavailable_reason"]


def device_unavailable_reason() -> str | None:
    """None when kernels can run here, else why not (the conformance kit then only compiles).
    The example device is this CPU, so always None; a real backend asks its driver."""
    return None
