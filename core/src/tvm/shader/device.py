"""The device probe the shader-style backends share: is the binding there, does a device open.

A backend's ``runtime.unavailable_reason()`` is this probe with its own names::

    @functools.lru_cache(maxsize=1)
    def unavailable_reason() -> str | None:
        return probe("wgpu", "pip install wgpu; tvm-backend-webgpu depends on it", _device,
                     WebGPURuntimeUnavailable, "WebGPU")
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["DRIVER_NOISE", "driver_noise_filtered", "probe"]

#: Lines graphics drivers print on stderr that say nothing about tvm's work. Mesa's device
#: selection layer (an implicit Vulkan layer that mesa-vulkan-drivers installs) asks libwayland
#: for a display to find the default GPU; without a desktop session libwayland prints this.
DRIVER_NOISE = (
    re.compile(r"error: XDG_RUNTIME_DIR is invalid or not set in the environment\.?"),
    re.compile(r"error: XDG_RUNTIME_DIR not set in the environment\.?"),
)


@contextlib.contextmanager
def driver_noise_filtered() -> Iterator[None]:
    """Run driver calls (instance and device set-up) with the process's stderr (file
    descriptor 2, where C libraries write) captured; afterwards every line that matches no
    :data:`DRIVER_NOISE` pattern is written back, so real errors still show."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable descriptor 2: nothing to filter
        yield
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            kept = [line for line in captured.read().splitlines(keepends=True)
                    if not _is_noise(line.decode(errors="replace").strip())]
            if kept:
                os.write(2, b"".join(kept))


def _is_noise(line: str) -> bool:
    return any(p.fullmatch(line) for p in DRIVER_NOISE)


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
