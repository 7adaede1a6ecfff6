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
                       match=r"^Cannot load TVM backend 'trnn': expected Python package "
                             r"'tvm.backend.trnn'\..*: backend 'trnn' is not installed; did you "
                             r"mean 'trn'\? \(installed: "):
        tvm.backend.load("trnn")


@pytest.mark.parametrize(("typed", "meant"), [("matmul", "gemm"), ("mm", "gemm"),
                                              ("substract", "sub"), ("subtract", "sub"),
                                              ("transpose", "permute_layout"),
                                              ("divide", "fdiv"), ("where", "select")])
def test_op_synonyms_come_first(typed, meant):
    with pytest.raises(AttributeError) as info:
        getattr(Tx, typed)
    assert f"did you mean {meant!r}" in str(info.value)
    with pytest.raises(AttributeError, match=f"did you mean {meant!r}"):
        getattr(Tx.cta, typed)


def test_synonym_notes_say_how():
    with pytest.raises(AttributeError, match=r"did you mean 'permute_layout'\? \(a transposed copy "
                                             r"is Tx.permute_layout\(dst, src\) into a dst declared "
                                             r"with the transposed layout; Tx.gemm transposes its "
                                             r"operands itself"):
        Tx.transpose  # noqa: B018
    with pytest.raises(AttributeError, match=r"did you mean 'gemm' or 'mul'.*\(Tx.gemm\(D, A, B\) "
                                             r"computes D = A @ B\)$"):
        Tx.matmul  # noqa: B018
