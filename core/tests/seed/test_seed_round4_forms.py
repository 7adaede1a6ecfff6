"""Seed forms met by its elementwise tests (issue 28): ``Tx.zero(dst, src)`` (src gives only the
shape of what is zeroed), and numpy reading the dtype names the seed's tests write once
``tvm.testing`` is imported."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.ir.structural import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def test_zero_with_a_source_of_the_same_shape_zeroes_dst() -> None:
    @T.prim_func
    def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        Tx.zero(A[0:2, 0:8], B[2:4, 0:8])
        Tx.zero(B, B)

    text = f.script()
    assert "    T.tile.zero(A[0:2, 0:8])\n    T.tile.zero(B)\n" in text
    assert structural_equal(from_source(text), f)
    a = np.arange(32, dtype="float32").reshape(4, 8) + 1
    b = a.copy()
    tvm.compile(f, target="c")(a, b)
    assert (a[:2] == 0).all() and (a[2:] == np.arange(16, 32).reshape(2, 8) + 1).all()
    assert (b == 0).all()


def test_zero_with_a_source_of_another_shape_says_so() -> None:
    with pytest.raises(DiagnosticError, match=r"Tx.zero: src has shape \(2, 8\) but dst has "
                                              r"\(4, 8\); src only gives the shape"):
        @T.prim_func
        def f(A: T.Buffer((4, 8), "float32")):
            Tx.zero(A, A[0:2, 0:8])


def _numpy_reads(names: str, before: str) -> str:
    code = (f"import numpy as np\n{before}\nout = []\nfor n in {names!r}.split():\n"
            "    try:\n        np.dtype(n); out.append(n)\n    except TypeError:\n        pass\n"
            "print(' '.join(out))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_tvm_testing_lets_numpy_read_the_seeds_dtype_names() -> None:
    pytest.importorskip("ml_dtypes")
    names = "bfloat16 float8_e4m3fn float8_e5m2"
    assert _numpy_reads(names, "import tvm") == ""  # import tvm stays light: no ml_dtypes
    assert _numpy_reads(names, "import tvm.testing") == names
