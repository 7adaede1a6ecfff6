"""pytest plugin of tvm-core (entry point ``pytest11``), active wherever tvm-core is installed.

Markers:
- ``gpu``: needs an NVIDIA GPU; skipped with the reason when none is usable.
- ``macos``: needs macOS with Metal; skipped elsewhere with the reason.

The checks are cheap and import no SDK unless a marked test is collected.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import pytest


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (skipped without one)")
    config.addinivalue_line("markers", "macos: needs macOS with a Metal device (skipped elsewhere)")


@functools.cache
def gpu_unavailable_reason() -> str | None:
    """None if a CUDA device can be used, else why not."""
    try:
        from cuda.bindings import driver
    except Exception as err:  # no bindings installed, or they fail to load
        return f"no CUDA device: cuda-bindings unavailable ({err.__class__.__name__}: {err})"
    try:
        (res,) = driver.cuInit(0)[:1]
        if int(res) != 0:
            return f"no CUDA device: cuInit returned {res}"
        res, count = driver.cuDeviceGetCount()
        if int(res) != 0 or count == 0:
            return "no CUDA device is present"
    except Exception as err:  # a missing driver library raises here
        return f"no CUDA device: {err}"
    return None


def macos_unavailable_reason() -> str | None:
    if sys.platform != "darwin":
        return f"needs macOS with Metal (this is {sys.platform})"
    return None


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            reason = gpu_unavailable_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
        if item.get_closest_marker("macos") is not None:
            reason = macos_unavailable_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
