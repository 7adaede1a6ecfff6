"""Target kinds: schema, defaults, types, validation, registry errors."""

from __future__ import annotations

import pytest

from tvm._hints import install_hint
from tvm.error import RegistrationConflict, TargetError
from tvm.target import KIND_REGISTRY, Attr, TargetKind, get_target_kind, register_target_kind
from tvm.testing import skip_if_installed


def test_defaults_and_types(testkind):
    attrs = testkind.check_attrs({"lanes": 8, "clock_ghz": 2, "features": ["a", "b"]})
    assert attrs == {
        "arch": "v1",
        "lanes": 8,
        "clock_ghz": 2.0,
        "fast_math": False,
        "features": ("a", "b"),
    }
    assert isinstance(attrs["clock_ghz"], float)
    assert testkind.default_keys == ("testdev", "accel")
    assert testkind.device_type == "testdev"


def test_unknown_attribute_names_the_allowed_ones(testkind):
    with pytest.raises(TargetError) as info:
        testkind.check_attrs({"arhc": "v2"})
    assert str(info.value) == (
        "target kind 'testdev' has no attribute 'arhc'; allowed: arch, clock_ghz, fast_math, "
        "features, lanes, model (and keys, host, tag)"
    )


def test_type_errors(testkind):
    with pytest.raises(TargetError, match="attribute 'lanes' must be int, got str 'many'"):
        testkind.check_attrs({"lanes": "many"})
    with pytest.raises(TargetError, match="must be int, got bool"):
        testkind.check_attrs({"lanes": True})
    with pytest.raises(TargetError, match="'arch' must be str, got int"):
        testkind.check_attrs({"arch": 3})


def test_text_values_are_parsed(testkind):
    attrs = testkind.check_attrs({"lanes": "2", "fast_math": "true", "features": "x,y"})
    assert attrs["lanes"] == 2 and attrs["fast_math"] is True and attrs["features"] == ("x", "y")


def test_validate_errors_become_target_errors(testkind):
    with pytest.raises(TargetError, match="invalid target of kind 'testdev': lanes must be"):
        testkind.check_attrs({"lanes": 3})


def test_reserved_and_bad_schema():
    with pytest.raises(ValueError, match="'keys' is reserved"):
        TargetKind("x", attrs={"keys": str})
    with pytest.raises(TypeError, match="attribute schema entry"):
        TargetKind("x", attrs={"a": "str"})
    assert TargetKind("plain").default_keys == ("plain",)


def test_registry(registries):
    kind = register_target_kind(TargetKind("k1", attrs={"a": Attr(int, 1)}))
    assert get_target_kind("k1") is kind
    assert KIND_REGISTRY.owner_of("k1") == "core"
    with pytest.raises(RegistrationConflict, match="target kind 'k1' is registered twice"):
        register_target_kind(TargetKind("k1"))
    replacement = register_target_kind(TargetKind("k1"), override=True)
    assert get_target_kind("k1") is replacement
    with pytest.raises(TypeError):
        register_target_kind("k2")


@skip_if_installed("cuda")
def test_unknown_kind_messages(registries):
    with pytest.raises(TargetError, match="unknown target kind 'nokind'; registered kinds:"):
        get_target_kind("nokind")
    with pytest.raises(TargetError) as info:
        get_target_kind("cuda")
    assert str(info.value).startswith(
        f"no installed backend provides target kind 'cuda'; {install_hint('tvm-backend-cuda')} "
        "(installed: "
    )
