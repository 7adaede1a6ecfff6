"""pytest plugin of tvm-core (entry point ``pytest11``), active wherever tvm-core is installed.

Device markers come from the backends: each implements ``tvm_device_probes`` (``{"gpu":
probe}``), and a test marked ``@pytest.mark.gpu`` is skipped with the probe's reason when no
loaded backend can run it here. Core knows no device: with no backend probing a marker, its
tests skip and say so. A marked test that takes a ``device`` fixture is left to that fixture
(which may run it under an emulator, as tvm-backend-cuda's does).

The compile cache of a test session is a fresh temporary folder (``TVM_CACHE_DIR``), so tests
never read or write the user's cache; set ``TVM_TEST_KEEP_CACHE=1`` to use the normal one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

import pytest

from tvm.backend import ensure_builtin_backends
from tvm.plugin import get_plugin_manager

#: markers every test suite may use; their probes come from backends (a backend's probe of a
#: marker not listed here works the same; its tests register the marker)
DEVICE_MARKERS = {
    "gpu": "needs an NVIDIA GPU (skipped without one)",
    "macos": "needs macOS with a Metal device (skipped elsewhere)",
}
_TMP_CACHE: list[Any] = []


def pytest_configure(config: Any) -> None:
    for name, doc in DEVICE_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    config.addinivalue_line("markers", "slow: slow tests (subprocesses, timing); CI runs them")
    if os.environ.get("TVM_TEST_KEEP_CACHE", "").strip() not in ("1", "true", "yes"):
        tmp = tempfile.TemporaryDirectory(prefix="tvm-test-cache-")
        _TMP_CACHE.append(tmp)
        os.environ["TVM_CACHE_DIR"] = tmp.name


def pytest_unconfigure(config: Any) -> None:
    while _TMP_CACHE:
        _TMP_CACHE.pop().cleanup()


def device_probes() -> dict[str, list[Callable[[], str | None]]]:
    """Marker -> the probes the loaded backends gave for it (hook ``tvm_device_probes``)."""
    ensure_builtin_backends()
    out: dict[str, list[Callable[[], str | None]]] = {}
    for result in get_plugin_manager().hook.tvm_device_probes():
        for marker, probe in (result or {}).items():
            out.setdefault(marker, []).append(probe)
    return out


def unavailable_reason(marker: str, probes: dict[str, list[Callable[[], str | None]]] | None = None
                       ) -> str | None:
    """None when some loaded backend can run tests marked ``marker`` here, else why not."""
    found = (probes if probes is not None else device_probes()).get(marker)
    if not found:
        return (f"no loaded backend can run tests marked {marker!r} here (the device probe comes "
                "from the backend that runs them)")
    reasons = []
    for probe in found:
        try:
            reason = probe()
        except Exception as err:  # a broken probe means: not usable, and why
            reason = f"device probe failed: {type(err).__name__}: {err}"
        if reason is None:
            return None
        reasons.append(str(reason))
    return "; ".join(reasons)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    used = {m.name for item in items for m in item.iter_markers()}
    if not used:
        return
    # The markers of DEVICE_MARKERS, and any other a loaded backend probes (``opencl``, ...).
    probes = device_probes() if used - {"parametrize", "slow", "usefixtures"} else {}
    markers = (set(DEVICE_MARKERS) | set(probes)) & used
    # a test taking the ``device`` fixture picks its device itself (the GPU, or an emulator
    # where there is none: tvm-backend-cuda's tests/conftest.py), so it is not skipped here
    marked = [(item, m) for item in items for m in sorted(markers)
              if item.get_closest_marker(m) is not None
              and "device" not in getattr(item, "fixturenames", ())]
    if not marked:
        return
    reasons: dict[str, str | None] = {}
    for item, marker in marked:
        if marker not in reasons:
            reasons[marker] = unavailable_reason(marker, probes)
        reason = reasons[marker]
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
