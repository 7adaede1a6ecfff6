"""Target construction, identity, text form, host and scope."""

from __future__ import annotations

import threading

import pytest

from tvm.error import TargetError
from tvm.target import Target
from tvm.testing import skip_if_installed


def test_forms_agree(testkind):
    by_name = Target("testdev")
    by_dict = Target({"kind": "testdev"})
    by_text = Target("testdev -arch=v1 -lanes=4")
    copy = Target(by_name)
    assert by_name == by_dict == by_text == copy
    assert len({by_name, by_dict, by_text, copy}) == 1
    assert by_name.kind.name == "testdev"
    assert dict(by_name.attrs) == {
        "arch": "v1",
        "lanes": 4,
        "clock_ghz": 1.5,
        "fast_math": False,
        "features": (),
    }
    assert by_name.keys == ("testdev", "accel")
    assert by_name.tag is None and by_name.host is None
    assert by_name.device_type == "testdev"


def test_str_round_trips(testkind):
    target = Target(
        {
            "kind": "testdev",
            "arch": "v3",
            "fast_math": True,
            "features": ["x", "y"],
            "keys": ["testdev", "special"],
            "model": "m",
        }
    )
    text = str(target)
    assert text == (
        "testdev -keys=testdev,special -arch=v3 -clock_ghz=1.5 -fast_math=true "
        "-features=x,y -lanes=4 -model=m"
    )
    assert Target(text) == target
    assert Target(target.export()) == target
    assert target == text


def test_attrs_are_read_only(testkind):
    target = Target("testdev")
    with pytest.raises(TypeError):
        target.attrs["lanes"] = 8
    with pytest.raises(AttributeError):
        target.foo = 1


def test_differences_matter(testkind):
    assert Target("testdev") != Target("testdev -lanes=8")
    assert Target("testdev") != Target({"kind": "testdev", "keys": ["other"]})
    assert Target("testdev") != "not a target"


def test_host(testkind):
    target = Target("testdev", host="testdev -lanes=1")
    assert target.host == Target("testdev -lanes=1")
    assert target != Target("testdev")
    assert target.with_host(None) == target
    assert Target(target).host == target.host
    assert "host=" in repr(target)
    assert Target(target.export()) == target


@skip_if_installed("metal")
def test_errors(testkind):
    with pytest.raises(TargetError, match="has no attribute 'bogus'; allowed: arch"):
        Target({"kind": "testdev", "bogus": 1})
    with pytest.raises(TargetError, match="needs a 'kind' string"):
        Target({"arch": "v1"})
    with pytest.raises(TargetError, match="option 'lanes=4' must look like -name=value"):
        Target("testdev lanes=4")
    with pytest.raises(TargetError, match="cannot make a Target from int"):
        Target(3)
    with pytest.raises(TargetError, match="no installed backend provides target kind 'metal'"):
        Target({"kind": "metal"})


def test_context_manager(testkind):
    assert Target.current() is None
    with pytest.raises(TargetError, match="no target is in scope"):
        Target.current(allow_none=False)
    outer, inner = Target("testdev"), Target("testdev -lanes=8")
    with outer as entered:
        assert entered is outer and Target.current() is outer
        with inner:
            assert Target.current() is inner
        assert Target.current() is outer
    assert Target.current() is None


def test_scope_is_per_thread(testkind):
    seen = []
    with Target("testdev"):
        thread = threading.Thread(target=lambda: seen.append(Target.current()))
        thread.start()
        thread.join()
    assert seen == [None]
