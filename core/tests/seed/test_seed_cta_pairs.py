"""``T.cta_id_in_pair()`` (issue 28): a kernel id of extent 2 (the seed's Blackwell CTA pairs),
printed as written, lowered to the CTA's cluster rank modulo 2; it needs even clusters and a
target with the ``cta_pairs`` attribute (the CUDA tests cover sm_100a)."""

from __future__ import annotations

import pytest

import tvm
from tvm.error import KernelFormError
from tvm.ir import stmt as S
from tvm.ir.function import IRModule
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.tirx.transform import LowerKernelForm

SRC = '''
@T.prim_func
def f(out: T.Buffer((8,), "int32")):
    T.device_entry()
    bx = T.cta_id([{cluster} * 2])
    cx = T.cta_id_in_cluster([{cluster}])
    pair = T.cta_id_in_pair({extents})
    tx = T.thread_id([32])
    if tx == 0:
        out[bx] = pair
'''


def _f(cluster: int = 4, extents: str = "") -> tvm.tirx.PrimFunc:
    return from_source(SRC.format(cluster=cluster, extents=extents))


def test_a_pair_id_prints_as_written_and_parses_back() -> None:
    f = _f()
    text = f.script()
    assert "    pair = T.cta_id_in_pair()\n" in text
    assert structural_equal(from_source(text), f)
    assert "cta_id_in_pair" in T.__all__


def test_a_bare_pair_id_is_named_after_its_kind() -> None:
    f = from_source(SRC.format(cluster=2, extents="").replace("pair = T.cta_id_in_pair()",
                                                              "T.cta_id_in_pair()")
                    .replace("out[bx] = pair", "out[bx] = 0"))
    assert "    cta_id_in_pair = T.cta_id_in_pair()\n" in f.script()


def _lets(func: tvm.tirx.PrimFunc) -> dict[str, str]:
    found: dict[str, str] = {}

    def walk(s: S.Stmt) -> None:
        if isinstance(s, S.LetStmt):
            found[s.var.name] = str(s.value)
        for child in (getattr(s, "body", None), *getattr(s, "seq", [])):
            if isinstance(child, S.Stmt):
                walk(child)

    walk(func.body)
    return found


def test_without_a_target_the_pass_gives_the_rank_modulo_2() -> None:
    lowered = LowerKernelForm()(IRModule({"f": _f()}))["f"]
    lets = _lets(lowered)
    assert lets["pair"] == "bx % 2"
    assert lets["cx"] == "bx % 4"


def test_the_host_target_has_no_pairs() -> None:
    with pytest.raises(KernelFormError, match=r"function f: T.cta_id_in_pair: target c has no "
                                              r"CTA pairs .* e.g. cuda -arch=sm_100a"):
        tvm.compile(_f(), target="c")


@pytest.mark.parametrize("cluster, extents, message", [
    (3, "", r"needs clusters of an even number of CTAs .* clusters of 3 CTA\(s\)"),
    (2, "[4]", r"T.cta_id_in_pair extent must be 2 \(a CTA pair\), got 4"),
])
def test_pairs_are_checked(cluster: int, extents: str, message: str) -> None:
    with pytest.raises(KernelFormError, match=message):
        LowerKernelForm()(IRModule({"f": _f(cluster, extents)}))


def test_a_kernel_without_clusters_has_no_pairs() -> None:
    f = from_source(SRC.format(cluster=2, extents="").replace(
        "    cx = T.cta_id_in_cluster([2])\n", ""))
    with pytest.raises(KernelFormError, match=r"has no T.cta_id_in_cluster; define "
                                              r"T.cta_id_in_cluster\(\[2\]\)"):
        LowerKernelForm()(IRModule({"f": f}))
