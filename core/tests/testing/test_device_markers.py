"""A backend's ``tvm_device_probes`` defines its test marker: tests carrying it skip with the
probe's reason where the device is missing, whether or not core lists the marker."""

from __future__ import annotations

import os
from pathlib import Path

pytest_plugins = ["pytester"]

CONFTEST = '''
import sys
import types

import tvm.backend
from tvm.plugin import hookimpl

probe = types.ModuleType("probe_backend")


@hookimpl
def tvm_device_probes():
    return {"mydev": lambda: "no mydev on this machine", "okdev": lambda: None}


probe.tvm_device_probes = tvm_device_probes
sys.modules["probe_backend"] = probe  # the loader aliases tvm.backend.probe to it
tvm.backend.register_plugin(probe, "probe")


def pytest_configure(config):
    manager = config.pluginmanager  # tvm's plugin: its pytest11 entry point, or by hand
    if not manager.has_plugin("tvm") and not manager.has_plugin("tvm.testing.plugin"):
        manager.import_plugin("tvm.testing.plugin")
    config.addinivalue_line("markers", "mydev: needs mydev")
    config.addinivalue_line("markers", "okdev: needs okdev")
'''

TESTS = '''
import pytest


@pytest.mark.mydev
def test_needs_mydev():
    raise AssertionError("ran without mydev")


@pytest.mark.okdev
def test_needs_okdev():
    pass


def test_needs_nothing():
    pass
'''


def test_a_backend_probe_defines_its_marker(pytester, monkeypatch):
    import tvm

    # the subprocess imports this tvm (installed, or the checkout's relative PYTHONPATH)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(Path(tvm.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(TESTS)
    result = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*no mydev on this machine*"])
