"""TVM_BACKENDS parsing and its effect at autoload."""

from __future__ import annotations

import warnings

import pytest

import tvm.backend
from tvm.backend import parse_selection
from tvm.error import BackendError

KIND = """
@hookimpl
def tvm_target_kinds():
    from tvm.target import TargetKind
    return [TargetKind("{name}_kind")]
"""


@pytest.mark.parametrize(
    ("value", "mode", "names"),
    [
        (None, "all", set()),
        ("", "all", set()),
        ("all", "all", set()),
        ("0", "none", set()),
        ("none", "none", set()),
        ("NONE", "none", set()),
        ("cuda,trn", "only", {"cuda", "trn"}),
        (" cuda , trn ,", "only", {"cuda", "trn"}),
        ("-metal", "except", {"metal"}),
        ("-metal,-trn", "except", {"metal", "trn"}),
    ],
)
def test_parse(value, mode, names):
    selection = parse_selection(value)
    assert selection.mode == mode
    assert selection.names == frozenset(names)


def test_selects():
    assert parse_selection("cuda").selects("cuda")
    assert not parse_selection("cuda").selects("trn")
    assert parse_selection("-metal").selects("cuda")
    assert not parse_selection("-metal").selects("metal")
    assert not parse_selection("0").selects("cuda")
    assert parse_selection(None).selects("anything")


def test_mixed_is_rejected():
    with pytest.raises(ValueError, match="mixes names and -names"):
        parse_selection("cuda,-metal")


def _install(backends, *names, builtin=()):
    for name in names:
        backends.add(name, KIND.replace("{name}", name))
    for name in builtin:
        backends.add(name, KIND.replace("{name}", name), dist="tvm-core")


@pytest.mark.parametrize(
    ("value", "loaded"),
    [
        (None, {"aa", "bb", "cc", "host"}),
        ("aa,bb", {"aa", "bb", "host"}),
        ("-bb", {"aa", "cc", "host"}),
        ("0", {"host"}),
        ("none", {"host"}),
    ],
)
def test_autoload_follows_selection(backends, monkeypatch, value, loaded):
    _install(backends, "aa", "bb", "cc", builtin=["host"])
    if value is not None:
        monkeypatch.setenv("TVM_BACKENDS", value)
    tvm.backend._autoload()
    states = {
        r.name: r.state for r in tvm.backend.list_backends() if r.name in ("aa", "bb", "cc", "host")
    }
    assert {n for n, s in states.items() if s == "loaded"} == loaded
    assert {n for n, s in states.items() if s == "disabled"} == {"aa", "bb", "cc"} - loaded


def test_disabled_backend_can_be_loaded_by_hand(backends, monkeypatch):
    _install(backends, "a")
    monkeypatch.setenv("TVM_BACKENDS", "0")
    tvm.backend._autoload()
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "a"]
    assert record.state == "disabled" and "TVM_BACKENDS='0'" in record.reason
    tvm.backend.load("a")
    assert tvm.backend.is_loaded("a")


def test_selecting_a_missing_backend_warns_or_raises(backends, monkeypatch):
    _install(backends, "a")
    monkeypatch.setenv("TVM_BACKENDS", "a,cuda")
    with pytest.warns(RuntimeWarning, match=r"names backend 'cuda'.*pip install --find-links \S+ "
                                            r"tvm-backend-cuda"):
        tvm.backend._autoload()
    assert tvm.backend.is_loaded("a")


def test_selecting_a_missing_backend_strict(backends, monkeypatch):
    _install(backends, "a")
    monkeypatch.setenv("TVM_BACKENDS", "cuda")
    monkeypatch.setenv("TVM_BACKENDS_STRICT", "1")
    with pytest.raises(BackendError, match=r"pip install --find-links \S+ tvm-backend-cuda"):
        tvm.backend._autoload()


def test_malformed_value_warns_and_loads_all(backends, monkeypatch):
    _install(backends, "a")
    monkeypatch.setenv("TVM_BACKENDS", "a,-b")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tvm.backend._autoload()
    assert any("mixes names and -names" in str(w.message) for w in caught)
    assert tvm.backend.is_loaded("a")
