"""Helpers for pass tests: IR is built with the tvm.ir constructors; test target kinds are
registered per test and removed afterwards."""

from __future__ import annotations

import pytest

from tvm import _registry
from tvm.target import Target, TargetKind, register_target_kind


@pytest.fixture
def registries():
    restore = _registry.snapshot_all()
    try:
        yield
    finally:
        restore()


@pytest.fixture
def gpu_target(registries):
    """A device target (its kind's device_type is not 'cpu')."""
    register_target_kind(TargetKind("xgpu", device_type="xgpu"), override=True)
    return Target("xgpu")


@pytest.fixture
def host_target(registries):
    """A host target (device_type 'cpu')."""
    register_target_kind(TargetKind("xcpu", device_type="cpu"), override=True)
    return Target("xcpu")
