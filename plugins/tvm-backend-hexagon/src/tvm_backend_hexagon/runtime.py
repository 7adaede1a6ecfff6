"""Device access for Hexagon DSPs: none in this version.

Running code on a Hexagon DSP takes the Hexagon SDK: its libraries to link the object into a
shared library, and FastRPC from an Android device (or the SDK's simulator) to load and call it.
Neither can be redistributed or installed from a package index, so this backend compiles and
checks (``compiler.py``) and says so when asked to run.
"""

from __future__ import annotations

from tvm.error import DeviceUnavailableError

__all__ = ["HexagonRuntimeUnavailable", "REASON", "unavailable_reason"]

REASON = ("running on a Hexagon DSP needs the Hexagon SDK (linking, FastRPC from an Android "
          "device, or its simulator), which tvm-backend-hexagon does not drive: it compiles C "
          "for the DSP into object files only")


class HexagonRuntimeUnavailable(DeviceUnavailableError):
    """A Hexagon executable cannot run here (see :data:`REASON`)."""


def unavailable_reason() -> str:
    return REASON
