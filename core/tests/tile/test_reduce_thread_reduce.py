"""``thread_reduce``, the reductions' keyword for register tiles spread over threads: bound in
parameter order with its default, printed only when set, documented in ``help(Tx.sum)``."""

from __future__ import annotations

from typing import no_type_check

import pytest

from tvm.ir import Buffer, IntImm, structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.operator.tile_primitive.common import bound_args


def _flag(value: object) -> bool:
    return bool(value.value) if isinstance(value, IntImm) else bool(value)


@pytest.mark.parametrize("make, expected", [
    (lambda a, b: Tx.max(b, a), False),
    (lambda a, b: Tx.max(b, a, thread_reduce=True), True),
    (lambda a, b: Tx.warp.min(b, a, -1, False, True), True),
    (lambda a, b: Tx.cta.sum(b, a, accum=True, thread_reduce=False), False),
])
def test_thread_reduce_binds_with_its_default(make, expected):
    a, b = Buffer("A", [4, 8], "float32"), Buffer("B", [4, 1], "float32")
    args = bound_args(make(a, b))
    assert _flag(args["thread_reduce"]) is expected
    assert list(args) == ["dst", "src", "axes", "accum", "thread_reduce"]


def test_a_misspelt_keyword_names_the_signature():
    a, b = Buffer("A", [8], "float32"), Buffer("B", [1], "float32")
    with pytest.raises(TypeError, match=r"Tx.sum got keyword argument 'threadReduce'; did you "
                                        r"mean 'thread_reduce'\? \(signature: sum\(dst, src, "
                                        r"axes=-1, accum=False, thread_reduce=False\);"):
        Tx.sum(b, a, threadReduce=True)
    # another keyword is a config entry, as in the seed
    assert Tx.sum(b, a, shuffle=True).config == {"shuffle": True}


@no_type_check
def test_thread_reduce_prints_only_when_set():
    @T.prim_func
    def k(A: T.Buffer((32, 4), "float32"), B: T.Buffer((32, 1), "float32")):
        Tx.sum(B, A)
        Tx.max(B, A, thread_reduce=True)

    text = k.script()
    # trailing defaults are left out; the rest print in parameter order
    assert "T.tile.sum(B, A)\n" in text
    assert "T.tile.max(B, A, -1, T.bool(False), T.bool(True))" in text
    assert structural_equal(from_source(text), k)


def test_help_says_what_thread_reduce_does():
    assert "False leaves each of them its own partial, True also combines them" in \
        " ".join(Tx.sum.__doc__.split())
