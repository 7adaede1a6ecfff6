"""Target tests register their own kinds and tags; registries are restored after each test."""

from __future__ import annotations

import pytest

from tvm import _registry
from tvm.target import Attr, TargetKind, register_target_kind


def _validate(attrs):
    if attrs["lanes"] not in (1, 2, 4, 8):
        raise ValueError(f"lanes must be 1, 2, 4 or 8, got {attrs['lanes']}")


@pytest.fixture
def registries():
    restore = _registry.snapshot_all()
    try:
        yield
    finally:
        restore()


@pytest.fixture
def testkind(registries):
    """A kind 'testdev' with a schema, defaults, keys and a validator."""
    return register_target_kind(
        TargetKind(
            "testdev",
            attrs={
                "arch": Attr(str, "v1", "the architecture"),
                "lanes": Attr(int, 4),
                "clock_ghz": (float, 1.5),
                "fast_math": (bool, False),
                "features": Attr(tuple, ()),
                "model": str,  # no default: absent unless given
            },
            default_keys=("testdev", "accel"),
            device_type="testdev",
            validate=_validate,
        )
    )
