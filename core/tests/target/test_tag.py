"""Target tags: register, list, conflicts, and targets made from tags."""

from __future__ import annotations

import pytest

from tvm._hints import install_hint
from tvm.error import RegistrationConflict, TargetError
from tvm.target import Target, get_tag, list_tags, register_tag
from tvm.testing import skip_if_installed


def test_register_and_list(testkind):
    config = {"kind": "testdev", "arch": "v2", "lanes": 8}
    register_tag("acme/board-1", config)
    config["arch"] = "changed"  # the registry keeps its own copy
    tags = list_tags()
    assert tags["acme/board-1"] == {"kind": "testdev", "arch": "v2", "lanes": 8}
    tags["acme/board-1"]["arch"] = "mutated"
    assert get_tag("acme/board-1")["arch"] == "v2"
    assert get_tag("acme/none") is None


def test_twice_without_override_raises(testkind):
    register_tag("acme/board-1", {"kind": "testdev"})
    with pytest.raises(RegistrationConflict, match="target tag 'acme/board-1' is registered twice"):
        register_tag("acme/board-1", {"kind": "testdev"})
    register_tag("acme/board-1", {"kind": "testdev", "lanes": 2}, override=True)
    assert get_tag("acme/board-1")["lanes"] == 2


def test_bad_configs(testkind):
    with pytest.raises(TargetError, match="must be a dict with a 'kind' string"):
        register_tag("acme/x", {"arch": "v1"})
    with pytest.raises(TargetError, match="non-empty name"):
        register_tag("", {"kind": "testdev"})


def test_target_from_tag(testkind):
    register_tag(
        "acme/board-1", {"kind": "testdev", "arch": "v2", "lanes": 8, "keys": ["testdev", "board"]}
    )
    target = Target("acme/board-1")
    assert target.tag == "acme/board-1"
    assert target.kind.name == "testdev"
    assert target.attrs["arch"] == "v2" and target.attrs["lanes"] == 8
    assert target.keys == ("testdev", "board")
    # Options after the tag refine it.
    assert Target("acme/board-1 -lanes=2").attrs["lanes"] == 2


def test_tag_is_checked_when_used(testkind):
    register_tag("acme/bad", {"kind": "testdev", "colour": "red"})
    with pytest.raises(TargetError, match="has no attribute 'colour'"):
        Target("acme/bad")


@skip_if_installed("cuda", "trn", "metal")
def test_unknown_tag_names_the_backend(registries):
    with pytest.raises(TargetError) as info:
        Target("nvidia/nvidia-h100")
    assert str(info.value).startswith(
        f"no installed backend provides target tag 'nvidia/nvidia-h100'; "
        f"{install_hint('tvm-backend-cuda')}"
    )
    with pytest.raises(TargetError, match=r"pip install --find-links \S+ tvm-backend-trn"):
        Target("aws/trn1/trn1.2xlarge")
    with pytest.raises(TargetError, match="unknown target 'acme/nothing'"):
        Target("acme/nothing")
