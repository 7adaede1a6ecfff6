"""One did-you-mean helper for unknown backends, targets, tags and tile ops."""

from __future__ import annotations

import pytest

import tvm.backend
from tvm._registry import snapshot_all
from tvm._suggest import did_you_mean
from tvm.driver import ensure_builtin_backends
from tvm.error import BackendNotInstalledError, TargetError
from tvm.script.tirx import tile as Tx
from tvm.target import Target, TargetKind, register_tag, register_target_kind


@pytest.fixture
def sandbox():
    ensure_builtin_backends()
    restore = snapshot_all()
    try:
        yield
    finally:
        restore()


def test_helper():
    assert did_you_mean("cdua", ["cuda", "c", "trn"]) == "did you mean 'cuda'?"
    assert did_you_mean("GEMM", ["gemm", "gemm_async"]) == "did you mean 'gemm'?"
    assert did_you_mean("fil", ["fill", "fma", "file"]) == "did you mean 'fill' or 'file'?"
    assert did_you_mean("zzz", ["cuda"]) == ""


def test_unknown_tile_op():
    with pytest.raises(AttributeError, match=r"'cpy' is not a tile primitive .*; did you mean "
                                             r"'copy'\?$"):
        Tx.cpy  # noqa: B018
    with pytest.raises(AttributeError, match=r"did you mean 'gemm'"):
        Tx.cta.gemn  # noqa: B018


def test_unknown_target_kind_and_tag(sandbox):
    register_target_kind(TargetKind("widget"))
    register_tag("acme/widget-100", {"kind": "widget"})
    with pytest.raises(TargetError, match=r"unknown target 'widgte': no target kind or tag of that "
                                          r"name is registered; did you mean 'widget' or "
                                          r"'acme/widget-100'\?"):
        Target("widgte")
    with pytest.raises(TargetError, match=r"did you mean 'acme/widget-100' or 'widget'\?"):
        Target("acme/widget-10")
    with pytest.raises(TargetError, match=r"unknown target kind 'widge'; did you mean 'widget'\? "
                                          r"registered kinds: "):
        Target({"kind": "widge"})


def test_unknown_backend():
    with pytest.raises(BackendNotInstalledError,
                       match=r"^backend 'trnn' is not installed; did you mean 'trn'\? \(installed: "):
        tvm.backend.load("trnn")
