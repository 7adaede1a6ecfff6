"""Issue 17's silent footguns, each reproduced: gemm's C without beta, slices whose extent is an
expression, and host `local` buffers too big for the stack."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.ir import Buffer, TilePrimitiveCall, Var, assert_structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.operator.tile_primitive.ops import make_call

M = N = K = 64
BS = 32


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))


def _operands(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype("float32")
    b = rng.standard_normal((K, N)).astype("float32")
    return [a, b, np.zeros((M, N), "float32")]


# -- gemm's C and beta ----------------------------------------------------------------------------
def test_gemm_with_c_and_default_beta_is_an_error_at_the_call():
    # The README's pattern used to ignore C silently (beta defaults to 0): max error 142.
    with pytest.raises(DiagnosticError) as info:

        @T.prim_func
        def mm(A: T.Buffer((BS, BS), "float32"), B: T.Buffer((BS, BS), "float32"),
               D: T.Buffer((BS, BS), "float32")):
            Tx.gemm(D, A, B, D)

    err = info.value
    lines = inspect.getsource(test_gemm_with_c_and_default_beta_is_an_error_at_the_call)
    first = test_gemm_with_c_and_default_beta_is_an_error_at_the_call.__code__.co_firstlineno
    offset = next(n for n, text in enumerate(lines.splitlines()) if "Tx.gemm(D, A, B, D)" in text)
    assert (err.filename, err.lineno) == (__file__, first + offset)
    assert err.source_line.strip() == "Tx.gemm(D, A, B, D)"
    assert err.message == (
        "Tx.gemm: C is passed but beta is left at its default 0.0, which ignores C "
        "(D = alpha * op(A) @ op(B) + beta * C); pass beta=1.0 to add C (accumulate: "
        "D = A @ B + C), or beta=0.0 to overwrite D without reading C")


def test_gemm_c_by_keyword_without_beta_is_an_error_too():
    a, d = (Buffer(n, [4, 4], "float32") for n in ("A", "D"))
    with pytest.raises(ValueError, match="C is passed but beta is left at its default"):
        make_call("gemm", d, a, a, C=d)
    with pytest.raises(ValueError, match="C is passed but beta is left at its default"):
        Tx.cta.gemm(d, a, a, d, alpha=2.0)


def test_gemm_without_c_or_with_explicit_beta_is_accepted():
    a, d = (Buffer(n, [4, 4], "float32") for n in ("A", "D"))
    assert isinstance(Tx.gemm(d, a, a), TilePrimitiveCall)
    assert Tx.gemm(d, a, a, d, beta=1.0).args[-1].value == 1.0
    assert Tx.gemm(d, a, a, d, False, False, 1.0, 0.0).args[-1].value == 0.0


def _tiled_matmul(beta: float):
    @T.prim_func
    def mm(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"),
           C: T.Buffer((M, N), "float32")):
        for bi in T.serial(M // BS):
            for bj in T.serial(N // BS):
                acc = T.alloc_buffer((BS, BS), "float32", scope="local")
                Tx.fill(acc, 1.0)
                for kk in T.serial(K // BS):
                    Tx.gemm(acc, A[bi * BS:(bi + 1) * BS, kk * BS:(kk + 1) * BS],
                            B[kk * BS:(kk + 1) * BS, bj * BS:(bj + 1) * BS], acc, beta=beta)
                Tx.copy(C[bi * BS:(bi + 1) * BS, bj * BS:(bj + 1) * BS], acc)

    return mm


def test_gemm_beta_one_accumulates_over_sliced_tiles():
    # Also the slice footgun: `A[bi*BS:(bi+1)*BS, ...]` used to fail gemm's shape check with
    # "32 vs (bi + 1) * 32 - bi * 32" while Tx.copy took the same slice.
    a, b, c = _operands()
    tvm.compile(_tiled_matmul(1.0), target="c")(a, b, c)
    np.testing.assert_allclose(c, a @ b + 1.0, rtol=1e-4, atol=1e-4)


def test_gemm_explicit_beta_zero_overwrites_and_does_not_read_c():
    a, b, c = _operands()
    tvm.compile(_tiled_matmul(0.0), target="c")(a, b, c)
    # each k-tile overwrites acc: the result is the last k-tile's product alone
    last = slice(K - BS, K)
    np.testing.assert_allclose(c, a[:, last] @ b[last, :], rtol=1e-4, atol=1e-4)


def test_explicit_beta_with_c_is_printed_and_parses_back():
    func = _tiled_matmul(0.0)
    text = func.script()
    assert "T.tile.gemm(acc, A[bi * 32:bi * 32 + 32, kk * 32:kk * 32 + 32], " \
           "B[kk * 32:kk * 32 + 32, bj * 32:bj * 32 + 32], acc, beta=T.float32(0.0))" in text
    assert_structural_equal(from_source(text), func)
    accumulate = _tiled_matmul(1.0)
    assert_structural_equal(from_source(accumulate.script()), accumulate)


# -- slice extents simplified before every shape check --------------------------------------------
@pytest.mark.parametrize("op", ["copy", "add", "exp", "sum"])
def test_expression_slice_extents_pass_every_ops_shape_check(op):
    n, bs = 64, 16

    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"),
          S: T.Buffer((n, 1), "float32")):
        for i in T.serial(n // bs):
            if op == "copy":
                Tx.copy(B[i * bs:(i + 1) * bs, 0:n], A[i * bs:(i + 1) * bs, 0:n])
            elif op == "add":
                Tx.add(B[i * bs:(i + 1) * bs, 0:n], A[i * bs:(i + 1) * bs, 0:n],
                       A[i * bs:(i + 1) * bs, 0:n])
            elif op == "exp":
                Tx.exp(B[i * bs:(i + 1) * bs, 0:n], A[i * bs:(i + 1) * bs, 0:n])
            else:
                Tx.sum(S[i * bs:(i + 1) * bs, 0:1], A[i * bs:(i + 1) * bs, 0:n], axes=-1)

    a = np.random.default_rng(1).standard_normal((n, n)).astype("float32")
    b, s = np.zeros((n, n), "float32"), np.zeros((n, 1), "float32")
    tvm.compile(k, target="c")(a, b, s)
    expected = {"copy": a, "add": a + a, "exp": np.exp(a)}
    if op == "sum":
        np.testing.assert_allclose(s[:, 0], a.sum(axis=1), rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_allclose(b, expected[op], rtol=1e-6)


def test_simplify_regions_keeps_the_call_when_extents_are_constant():
    from tvm.tirx.operator.tile_primitive.common import simplify_regions

    a = Buffer("A", [8, 8], "float32")
    i = Var("i", "int32")
    plain = Tx.copy(a[0:4, 0:8], a[4:8, 0:8])
    assert simplify_regions(plain) is plain
    call = Tx.copy(a[i * 4:(i + 1) * 4, 0:8], a[0:4, 0:8])
    call.span = "kept"
    out = simplify_regions(call)
    assert [int(r.extent.value) for r in out.args[0].region] == [4, 8]
    assert out.span == "kept"


# -- host `local` buffers too big for the stack ---------------------------------------------------
BIG = 4 * 1024 * 1024  # 16 MB of float32: more than a default 8 MB thread stack


@T.prim_func
def big_local(A: T.Buffer((BIG,), "float32"), B: T.Buffer((BIG,), "float32")):
    tmp = T.alloc_buffer((BIG,), "float32", scope="local")
    small = T.alloc_buffer((16,), "float32", scope="local")
    for i in T.serial(BIG):
        tmp[i] = A[i] * T.float32(2)
    for i in T.serial(16):
        small[i] = T.float32(1)
    for i in T.serial(BIG):
        B[i] = tmp[i] + small[i % 16]


def test_large_host_local_buffer_goes_to_the_heap_and_runs():
    # It used to be a 16 MB stack array: the process died with a segfault and no message.
    ex = tvm.compile(big_local, target="c")
    src = ex.inspect_source()
    assert ("float* tmp = (float*)__builtin_assume_aligned(tvm_alloc((size_t)(4194304) * "
            "sizeof(float)), 64);") in src
    assert "free(tmp);" in src
    assert "float small[16]" in src  # small ones stay on the stack
    a = np.arange(BIG, dtype="float32")
    b = np.zeros(BIG, "float32")
    ex(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)
