"""64-bit offsets for symbolic shapes (issue 26, item 1): a buffer whose ``T.int32`` extents
may multiply past 2**31 elements is indexed in 64 bits; int32 stays where the analyzer proves
the buffer smaller (one symbolic extent, constant shapes, ``T.assume`` bounds)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

import tvm
from tvm.script import tirx as T
from tvm.testing.wide_index import row_sums


def _body(src: str, name: str) -> str:
    return src[src.index(f"TVM_EXPORT int32_t {name}("):]


def test_symbolic_2d_shape_is_indexed_in_64_bits() -> None:
    src = _body(tvm.compile(row_sums(), target="c").inspect_source(), "row_sums")
    assert ("S[i] = (S[i] + ((int64_t)(A[(((int64_t)(i)) * ((int64_t)(m))) + "
            "((int64_t)(j))])));") in src
    # (n - 1 - i) * m: every operand widened before the arithmetic, not the result after it
    assert ("B[((((int64_t)(n)) - ((int64_t)(i))) - INT64_C(1)) * ((int64_t)(m))] = "
            "A[((int64_t)(i)) * ((int64_t)(m))];") in src


def test_one_symbolic_extent_keeps_32_bit_offsets() -> None:
    @T.prim_func
    def f(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for i in range(n):
            A[i] = A[i] * 2.0

    src = _body(tvm.compile(f, target="c").inspect_source(), "f")
    assert "A[i] = (A[i] * 2.0f);" in src and "int64_t" not in src.split("__tvm_packed")[0]


def test_assumed_bounds_keep_32_bit_offsets() -> None:
    @T.prim_func
    def f(a: T.handle):
        n = T.int32()
        m = T.int32()
        A = T.match_buffer(a, (n, m), "uint8")
        T.assume(n <= 4096)
        T.assume(m <= 4096)
        for i, j in T.grid(n, m):
            A[i, j] = T.uint8(1)

    ex = tvm.compile(f, target="c")
    src = _body(ex.inspect_source(), "f")
    assert "A[(i * m) + j] = ((uint8_t)1);" in src
    a = np.zeros((3, 5), np.uint8)
    ex(a)
    assert a.sum() == 15


def test_a_flat_buffer_of_symbolic_product_widens_the_index_expression() -> None:
    @T.prim_func
    def f(a: T.handle, n: T.int32, m: T.int32):
        A = T.match_buffer(a, (n * m,), "uint8")
        for i, j in T.grid(n, m):
            A[i * m + j] = T.uint8(1)

    src = _body(tvm.compile(f, target="c").inspect_source(), "f")
    assert "A[(((int64_t)(i)) * ((int64_t)(m))) + ((int64_t)(j))] = ((uint8_t)1);" in src
    a = np.zeros(12, np.uint8)
    tvm.compile(f, target="c")(a, 3, 4)
    assert a.sum() == 12


_RUN_BIG = textwrap.dedent("""
    import numpy as np, tvm
    from tvm.testing.wide_index import big_input, expected_row_sums, row_sums
    ex = tvm.compile(row_sums(), target="c")
    a = big_input()
    s = np.zeros(a.shape[0], np.int64)
    b = np.zeros_like(a)
    ex(a, s, b)
    np.testing.assert_array_equal(s, expected_row_sums(a))
    np.testing.assert_array_equal(b[:, -1], a[:, -1])
    np.testing.assert_array_equal(b[::-1, 0], a[:, 0])
    print("ok", s.tolist())
""")


def test_three_by_two_to_the_30_uint8_kernel_runs_and_matches_numpy(tmp_path) -> None:
    # In a subprocess: before 64-bit offsets this died with SIGSEGV. The arrays are zero pages
    # except the few values set, so the 6 GiB of address space cost little memory.
    proc = subprocess.run([sys.executable, "-c", _RUN_BIG], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "TVM_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip() == "ok [4, 7, 15]"
