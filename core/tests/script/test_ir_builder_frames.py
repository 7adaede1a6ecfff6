"""``tvm.script.ir_builder``: the seed's builder frames, and a buffer description that reads as
its buffer outside a parse."""

from __future__ import annotations

import pytest

from tvm.ir import TileLayout
from tvm.script import tirx as T
from tvm.script.ir_builder import IRBuilder
from tvm.script.ir_builder import tirx as Tb


def test_frames_nest_and_say_what_they_do_not_do() -> None:
    assert not IRBuilder.is_in_scope()
    with IRBuilder() as outer, Tb.prim_func():
        assert IRBuilder.current() is outer and IRBuilder.is_in_scope()
        with IRBuilder() as inner:
            assert IRBuilder.current() is inner
        assert IRBuilder.current() is outer
        with pytest.raises(NotImplementedError, match=r"write the function as a @T.prim_func"):
            outer.get()
    with pytest.raises(ValueError, match=r"no IRBuilder is open: use it as `with IRBuilder\(\)"):
        IRBuilder.current()


def test_an_allocation_outside_a_parse_reads_as_its_buffer() -> None:
    layout = TileLayout.row_major([4, 8])
    spec = T.alloc_buffer((4, 8), "float16", scope="shared", layout=layout)
    assert spec.scope == "shared" and spec.layout is layout and spec.ndim == 2
    assert spec.static_shape() == (4, 8)
    with pytest.raises(AttributeError, match="'BufferSpec' object has no attribute 'vload'"):
        spec.vload  # noqa: B018 - only the description's fields, not the buffer's statements
