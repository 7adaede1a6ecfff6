"""Test setup shared by every test folder of the repository.

In an installed environment tvm's pytest plugin loads through its ``pytest11`` entry point; in
a source checkout (``PYTHONPATH=core/src``) this loads it, so markers, device probes and the
per-session compile cache behave the same in both.
"""

from __future__ import annotations

from typing import Any


def pytest_configure(config: Any) -> None:
    manager = config.pluginmanager
    if not manager.has_plugin("tvm") and not manager.has_plugin("tvm.testing.plugin"):
        manager.import_plugin("tvm.testing.plugin")
