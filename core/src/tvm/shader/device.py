"""The device probe the shader-style backends share: is the binding there, does a device open.

A backend's ``runtime.unavailable_reason()`` is this probe with its own names::

    @functools.lru_cache(maxsize=1)
    def unavailable_reason() -> str | None:
        return probe("wgpu", "pip install wgpu; tvm-backend-webgpu depends on it", _device,
                     WebGPURuntimeUnavailable, "WebGPU")
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

__all__ = ["probe"]


def probe(package: str, install: str, open_device: Callable[[], Any],
          unavailable: type[Exception], what: str) -> str | None:
    """None when ``package`` is importable and ``open_device()`` succeeds; otherwise why not:
    the missing package (with ``install``), the ``unavailable`` error's own message (which names
    the fix), or any other failure of the driver while the device was set up."""
    if importlib.util.find_spec(package) is None:
        return f"the {package} Python package is not installed ({install})"
    try:
        open_device()
    except unavailable as err:
        return str(err)
    except Exception as err:  # a driver that fails to set up: not usable, and why
        return f"setting up the {what} device failed: {type(err).__name__}: {err}"
    return None
