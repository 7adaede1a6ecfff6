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


def test_driver_noise_is_dropped_and_the_rest_kept(capfd):
    """Mesa's device-selection layer has libwayland print an XDG_RUNTIME_DIR error on fd 2
    while a Vulkan instance is set up (issue 27); the filter drops that line only."""
    import ctypes
    import os

    from tvm.shader.device import driver_noise_filtered

    libc = ctypes.CDLL(None)
    with driver_noise_filtered():
        os.write(2, b"error: XDG_RUNTIME_DIR is invalid or not set in the environment.\n")
        msg = b"driver: a real problem\n"
        libc.write(2, msg, len(msg))  # as a C library writes it
        os.write(2, b"error: XDG_RUNTIME_DIR not set in the environment.\n")
    out, err = capfd.readouterr()
    assert err == "driver: a real problem\n"
    assert out == ""


def test_driver_noise_filter_restores_stderr_after_an_error(capfd):
    import os

    from tvm.shader.device import driver_noise_filtered

    with pytest.raises(RuntimeError, match="boom"), driver_noise_filtered():
        os.write(2, b"kept\n")
        raise RuntimeError("boom")
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "kept\nafter\n"
