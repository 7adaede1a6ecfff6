"""tvm.shader.device.probe: the device probe the Vulkan and WebGPU backends share."""

from __future__ import annotations

import pytest

from tvm.error import DeviceUnavailableError
from tvm.shader.device import probe


class NoDevice(DeviceUnavailableError):
    pass


def _fails(err: Exception):
    def open_device():
        raise err

    return open_device


def test_a_device_that_opens_is_available():
    opened = []
    assert probe("json", "pip install json", lambda: opened.append(1), NoDevice, "Test") is None
    assert opened == [1]


def test_a_missing_package_names_the_install_command():
    reason = probe("tvm_no_such_binding", "pip install it", _fails(AssertionError()), NoDevice,
                   "Test")
    assert reason == "the tvm_no_such_binding Python package is not installed (pip install it)"


def test_the_backends_own_error_is_the_reason():
    reason = probe("json", "-", _fails(NoDevice("no driver; install lavapipe")), NoDevice, "Test")
    assert reason == "no driver; install lavapipe"


def test_any_other_failure_of_the_driver_is_reported_not_raised():
    reason = probe("json", "-", _fails(RuntimeError("VK_ERROR_INITIALIZATION_FAILED")), NoDevice,
                   "Test")
    assert reason == ("setting up the Test device failed: RuntimeError: "
                      "VK_ERROR_INITIALIZATION_FAILED")


def test_interrupts_are_not_swallowed():
    with pytest.raises(KeyboardInterrupt):
        probe("json", "-", _fails(KeyboardInterrupt()), NoDevice, "Test")
