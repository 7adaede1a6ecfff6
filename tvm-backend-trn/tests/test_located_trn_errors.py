"""Trainium's errors about an allocation are tvm errors at the script line (issue 26, item 5):
they used to be a plain ValueError or an unlocated AccessError."""

from __future__ import annotations

import textwrap

import pytest

import tvm
from tvm.error import LoweringValueError, TVMError

TRN = "aws/trn1/trn1.2xlarge"


def _compile(alloc: str, extra_param: str = "") -> None:
    source = textwrap.dedent(f"""
        from tvm.script import tirx as T

        @T.prim_func
        def act(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32"){extra_param}):
            a = {alloc}
            T.nki.load(a, A)
            T.nki.store(B, a)
        """)
    tvm.compile(tvm.script.from_source(source), target=TRN)


def test_a_partition_size_trainium_cannot_take_is_located() -> None:
    with pytest.raises(LoweringValueError, match=(
            r"^<string>:6:5: error: There is only 1 P in the annotation. Partition size 100000 "
            r"must be less than or equal to 128 or a multiple of 128\n"
            r"        a = T.alloc_buffer\(\(100000, 64\)")):
        _compile('T.alloc_buffer((100000, 64), "float32", scope="trn.sbuf")')


def test_a_symbolic_allocation_is_located() -> None:
    with pytest.raises(TVMError, match=r"^<string>:6:5: error: buffer 'a' has a symbolic shape; "
                                       r"Trainium kernels need static shapes"):
        _compile('T.alloc_buffer((128, n), "float32", scope="trn.sbuf")', ", n: T.int32")
