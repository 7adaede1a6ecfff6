"""``@T.meta_class``: helper objects that own the buffers and scalars their constructor
allocates, one set per instance, named after the instance."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.ir import stmt as S
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T


@T.meta_class
class _Window:
    def __init__(self, src, width):
        self.src = src  # passed in: stays the kernel's buffer
        self.width = width
        self.vals = T.alloc_local((width,), "int32")
        self.hits = T.local_scalar("int32", init=0)

    @T.inline
    def load(self, base):
        for k in range(self.width):
            self.vals[k] = self.src[base + k]
            if self.src[base + k] > 4:
                self.hits += 1


def _kernel() -> tvm.tirx.PrimFunc:
    @T.prim_func
    def f(A: T.Buffer((8,), "int32"), out: T.Buffer((4,), "int32")):
        lo = _Window(A, 2)
        hi = _Window(A, 3)
        lo.load(0)
        hi.load(5)
        out[0] = lo.vals[0] + lo.vals[1]
        out[1] = hi.vals[0] + hi.vals[2]
        out[2] = lo.hits
        out[3] = hi.hits

    return f


def test_each_instance_allocates_its_own_buffers_named_after_it() -> None:
    f = _kernel()
    names = [s.buffer.name for s in f.body.seq if isinstance(s, S.AllocBuffer)]
    assert names == ["lo_vals", "lo_hits", "hi_vals", "hi_hits"]
    text = f.script()
    assert 'lo_vals = T.alloc_local((2,), "int32")\n    lo_hits: T.int32 = 0\n' in text
    assert "hi_hits[0] = hi_hits[0] + 1" in text
    assert "A[5 + k]" in text or "A[k + 5]" in text  # the passed-in buffer is A itself
    assert structural_equal(from_source(text), f)


def test_the_instances_compute_independently() -> None:
    a = np.array([1, 9, 3, 4, 7, 5, 2, 8], "int32")
    out = np.zeros(4, "int32")
    tvm.compile(_kernel(), target="c")(a, out)
    assert out.tolist() == [1 + 9, 5 + 8, 1, 2]


def test_a_buffer_the_constructor_does_not_keep_is_an_error() -> None:
    @T.meta_class
    class Leaky:
        def __init__(self):
            scratch = T.alloc_shared((4,), "float32")  # noqa: F841

    with pytest.raises(TypeError, match=r"Leaky.__init__ allocates a buffer of shape \(4,\) "
                                        r"\(float32, shared\) without keeping it on self"):
        Leaky()
    with pytest.raises(DiagnosticError, match="without keeping it on self"):
        @T.prim_func
        def f():
            leak = Leaky()  # noqa: F841


def test_meta_class_decorates_classes_only() -> None:
    with pytest.raises(TypeError, match="T.meta_class decorates a class"):
        T.meta_class(lambda: None)
