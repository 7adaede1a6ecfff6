"""Every trn variant, compiled with tvm.compile for aws/trn1/trn1.2xlarge and run in the
simulator, against numpy on random inputs over several shapes (tiling on every axis)."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_trn.layout import trainium_layout as tl

TARGET = "aws/trn1/trn1.2xlarge"


def run(func, *arrays):
    ex = tvm.compile(func, target=TARGET)
    ex(*arrays)
    return ex


def rand(rng, *shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------------------ copy


@pytest.mark.parametrize("shape, ann", [((128, 64), "PF"), ((256, 96), "PF"), ((64, 512), "PF"),
                                        ((96, 384), "FP"), ((4, 32, 40), "PPF"),
                                        ((8, 128, 3), "FPF")])
def test_copy_roundtrip(rng, shape, ann):
    @T.prim_func
    def f(X: T.Buffer(shape, "float32"), Y: T.Buffer(shape, "float32")):
        s = T.alloc_buffer(shape, "float32", scope="trn.sbuf", layout=tl(ann, shape))
        Tx.copy(s, X)
        Tx.copy(Y, s)

    x, y = rand(rng, *shape), np.zeros(shape, "float32")
    run(f, x, y)
    np.testing.assert_array_equal(y, x)


def test_copy_subregions_and_psum_eviction(rng):
    @T.prim_func
    def f(X: T.Buffer((256, 64), "float32"), Y: T.Buffer((128, 64), "float32")):
        s = T.alloc_buffer((128, 64), "float32", scope="trn.sbuf")
        p = T.alloc_buffer((128, 64), "float32", scope="trn.psum")
        t = T.alloc_buffer((128, 64), "float32", scope="trn.sbuf")
        Tx.copy(s[0:128, 0:32], X[128:256, 0:32])
        Tx.copy(s[0:128, 32:64], X[0:128, 32:64])
        Tx.copy(p, s)
        Tx.copy(t, p)
        Tx.copy(Y, t)

    x, y = rand(rng, 256, 64), np.zeros((128, 64), "float32")
    run(f, x, y)
    np.testing.assert_array_equal(y[:, :32], x[128:, :32])
    np.testing.assert_array_equal(y[:, 32:], x[:128, 32:])


@pytest.mark.parametrize("a, b", [(128, 128), (64, 256), (100, 384), (32, 96)])
def test_copy_transpose_through_identity_matmul(rng, a, b):
    @T.prim_func
    def f(X: T.Buffer((a, b), "float32"), Y: T.Buffer((a, b), "float32")):
        s = T.alloc_buffer((a, b), "float32", scope="trn.sbuf", layout=tl("PF", (a, b)))
        t = T.alloc_buffer((a, b), "float32", scope="trn.sbuf", layout=tl("FP", (a, b)))
        Tx.copy(s, X)
        Tx.copy(t, s)  # partitions change: transpose on the tensor engine
        Tx.copy(Y, t)

    x, y = rand(rng, a, b), np.zeros((a, b), "float32")
    ex = run(f, x, y)
    np.testing.assert_allclose(y, x, rtol=1e-6)
    assert "nisa.nc_matmul" in ex.inspect_source()


# ------------------------------------------------------------------------------ gemm


def gemm_func(m, k, n, dtype="float32", trans_a=False, psum=False):
    a_shape = (k, m) if trans_a else (m, k)

    @T.prim_func
    def f(A: T.Buffer(a_shape, dtype), B: T.Buffer((k, n), dtype), C: T.Buffer((m, n), "float32")):
        A_sb = T.alloc_buffer(a_shape, dtype, scope="trn.sbuf",
                              layout=tl("PF" if trans_a else "FP", a_shape))
        B_sb = T.alloc_buffer((k, n), dtype, scope="trn.sbuf", layout=tl("PF", (k, n)))
        C_sb = T.alloc_buffer((m, n), "float32", scope="trn.sbuf", layout=tl("PF", (m, n)))
        Tx.copy(A_sb, A)
        Tx.copy(B_sb, B)
        Tx.gemm(C_sb, A_sb, B_sb, transpose_A=trans_a)
        Tx.copy(C, C_sb)

    return f


@pytest.mark.parametrize("m, k, n", [(128, 128, 512), (256, 384, 1024), (64, 96, 100),
                                     (96, 384, 700)])
def test_gemm(rng, m, k, n):
    a, b, c = rand(rng, m, k), rand(rng, k, n), np.zeros((m, n), "float32")
    ex = run(gemm_func(m, k, n), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    assert "nisa.nc_matmul(" in ex.inspect_source()


def test_gemm_transpose_a(rng):
    a, b, c = rand(rng, 256, 128), rand(rng, 256, 600), np.zeros((128, 600), "float32")
    run(gemm_func(128, 256, 600, trans_a=True), a, b, c)
    np.testing.assert_allclose(c, a.T @ b, rtol=1e-4, atol=1e-3)


def test_gemm_bf16(rng):
    import ml_dtypes

    bf = ml_dtypes.bfloat16
    a, b = rand(rng, 256, 256).astype(bf), rand(rng, 256, 512).astype(bf)
    c = np.zeros((256, 512), "float32")
    run(gemm_func(256, 256, 512, dtype="bfloat16"), a, b, c)
    ref = a.astype("float32") @ b.astype("float32")
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-2)


def test_gemm_into_psum_with_accumulate_and_alpha(rng):
    m, k, n = 128, 256, 512

    @T.prim_func
    def f(A: T.Buffer((m, k), "float32"), B: T.Buffer((k, n), "float32"),
          C: T.Buffer((m, n), "float32"), D: T.Buffer((m, n), "float32")):
        A_sb = T.alloc_buffer((m, k), "float32", scope="trn.sbuf", layout=tl("FP", (m, k)))
        B_sb = T.alloc_buffer((k, n), "float32", scope="trn.sbuf")
        P = T.alloc_buffer((m, n), "float32", scope="trn.psum")
        S = T.alloc_buffer((m, n), "float32", scope="trn.sbuf")
        Tx.copy(A_sb, A)
        Tx.copy(B_sb, B)
        Tx.gemm(P, A_sb, B_sb)
        Tx.gemm(P, A_sb, B_sb, P, beta=1.0)  # accumulates onto the PSUM result
        Tx.copy(S, P)
        Tx.copy(C, S)
        Tx.gemm(S, A_sb, B_sb, alpha=0.5)
        Tx.gemm(S, A_sb, B_sb, S, alpha=2.0, beta=1.0)
        Tx.copy(D, S)

    a, b = rand(rng, m, k), rand(rng, k, n)
    c, d = np.zeros((m, n), "float32"), np.zeros((m, n), "float32")
    run(f, a, b, c, d)
    np.testing.assert_allclose(c, 2 * (a @ b), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(d, 2.5 * (a @ b), rtol=1e-4, atol=1e-3)


# ------------------------------------------------------------------------------ element-wise


def ewise(shape, body, n_in=2, ann=None):
    ann = ann or "P" + "F" * (len(shape) - 1)
    lay = tl(ann, shape)
    col = (shape[0], 1)

    @T.prim_func
    def f(X: T.Buffer(shape, "float32"), Z: T.Buffer(shape, "float32"),
          V: T.Buffer(col, "float32"), Y: T.Buffer(shape, "float32")):
        x = T.alloc_buffer(shape, "float32", scope="trn.sbuf", layout=lay)
        z = T.alloc_buffer(shape, "float32", scope="trn.sbuf", layout=lay)
        v = T.alloc_buffer(col, "float32", scope="trn.sbuf")
        y = T.alloc_buffer(shape, "float32", scope="trn.sbuf", layout=lay)
        Tx.copy(x, X)
        Tx.copy(z, Z)
        Tx.copy(v, V)
        body(y, x, z, v)
        Tx.copy(Y, y)

    return f


BINARY_CASES = {
    "add_tiles": (lambda y, x, z, v: Tx.add(y, x, z), lambda x, z, v: x + z),
    "sub_column": (lambda y, x, z, v: Tx.sub(y, x, v), lambda x, z, v: x - v),
    "mul_scalar": (lambda y, x, z, v: Tx.mul(y, x, 3.0), lambda x, z, v: x * 3),
    "fdiv_tiles": (lambda y, x, z, v: Tx.fdiv(y, x, z), lambda x, z, v: x / z),
    "max_scalar_first": (lambda y, x, z, v: Tx.maximum(y, 0.25, x),
                         lambda x, z, v: np.maximum(0.25, x)),
    "sub_scalar_first": (lambda y, x, z, v: Tx.sub(y, 1.0, x), lambda x, z, v: 1.0 - x),
    "min_tiles": (lambda y, x, z, v: Tx.minimum(y, x, z), lambda x, z, v: np.minimum(x, z)),
}
UNARY_CASES = {
    "exp_bias_scale": (lambda y, x, z, v: Tx.exp(y, x, bias=0.5, scale=0.25),
                       lambda x, z, v: np.exp(x * 0.25 + 0.5)),
    "relu": (lambda y, x, z, v: Tx.relu(y, x), lambda x, z, v: np.maximum(x, 0)),
    "sqrt": (lambda y, x, z, v: Tx.sqrt(y, z), lambda x, z, v: np.sqrt(z)),
    "abs": (lambda y, x, z, v: Tx.abs(y, x), lambda x, z, v: np.abs(x)),
    "neg": (lambda y, x, z, v: Tx.neg(y, x), lambda x, z, v: -x),
    "reciprocal": (lambda y, x, z, v: Tx.reciprocal(y, x), lambda x, z, v: 1 / x),
    "sigmoid_column_bias": (lambda y, x, z, v: Tx.sigmoid(y, x, bias=v),
                            lambda x, z, v: 1 / (1 + np.exp(-(x + v)))),
    "tanh_column_scale": (lambda y, x, z, v: Tx.tanh(y, x, scale=v),
                          lambda x, z, v: np.tanh(x * v)),
    "exp2": (lambda y, x, z, v: Tx.exp2(y, x), lambda x, z, v: np.exp2(x)),
    "fill": (lambda y, x, z, v: Tx.fill(y, 1.5), lambda x, z, v: np.full_like(x, 1.5)),
}


@pytest.mark.parametrize("shape", [(128, 64), (32, 513), (96, 1000)])
@pytest.mark.parametrize("case", sorted({**BINARY_CASES, **UNARY_CASES}))
def test_elementwise(rng, shape, case):
    body, ref = {**BINARY_CASES, **UNARY_CASES}[case]

    def stmt(y, x, z, v):
        body(y, x, z, v)

    p = shape[0]
    x, z = rand(rng, *shape), np.abs(rand(rng, *shape)) + 0.5
    v = rand(rng, p, 1)
    y = np.zeros(shape, "float32")
    run(ewise(shape, body), x, z, v, y)
    np.testing.assert_allclose(y, ref(x, z, v), rtol=2e-5, atol=1e-6)


def test_elementwise_large_partition_dim(rng):
    shape = (256, 40)
    x, z, v = rand(rng, *shape), rand(rng, *shape), rand(rng, 256, 1)
    y = np.zeros(shape, "float32")

    @T.prim_func
    def f(X: T.Buffer(shape, "float32"), Z: T.Buffer(shape, "float32"),
          Y: T.Buffer(shape, "float32")):
        x_ = T.alloc_buffer(shape, "float32", scope="trn.sbuf")
        z_ = T.alloc_buffer(shape, "float32", scope="trn.sbuf")
        Tx.copy(x_, X)
        Tx.copy(z_, Z)
        Tx.mul(x_, x_, z_)
        Tx.exp(x_, x_, scale=0.1)
        Tx.copy(Y, x_)

    run(f, x, z, y)
    np.testing.assert_allclose(y, np.exp(x * z * 0.1), rtol=2e-5)


# ------------------------------------------------------------------------------ reductions


@pytest.mark.parametrize("op, ref", [("sum", np.sum), ("max", np.max), ("min", np.min)])
@pytest.mark.parametrize("shape, axes", [((128, 512), [1]), ((64, 8, 33), [2]),
                                         ((64, 8, 33), [1, 2]), ((16, 300), [-1])])
def test_reduction(rng, op, ref, shape, axes):
    kept = tuple(n for d, n in enumerate(shape) if d not in [a % len(shape) for a in axes])
    out_shape = kept if len(kept) > 1 else (kept[0], 1)

    @T.prim_func
    def f(X: T.Buffer(shape, "float32"), Y: T.Buffer(out_shape, "float32")):
        x = T.alloc_buffer(shape, "float32", scope="trn.sbuf")
        y = T.alloc_buffer(out_shape, "float32", scope="trn.sbuf")
        Tx.copy(x, X)
        getattr(Tx, op)(y, x, axes=axes)
        Tx.copy(Y, y)

    x, y = rand(rng, *shape), np.zeros(out_shape, "float32")
    run(f, x, y)
    np.testing.assert_allclose(y.reshape(kept), ref(x, axis=tuple(axes)), rtol=1e-5, atol=1e-5)


def test_reduction_accumulates(rng):
    @T.prim_func
    def f(X: T.Buffer((128, 256), "float32"), Y: T.Buffer((128, 1), "float32")):
        x = T.alloc_buffer((128, 256), "float32", scope="trn.sbuf")
        y = T.alloc_buffer((128, 1), "float32", scope="trn.sbuf")
        Tx.copy(x, X)
        Tx.sum(y, x[0:128, 0:128], axes=-1)
        Tx.sum(y, x[0:128, 128:256], axes=-1, accum=True)
        Tx.copy(Y, y)

    x, y = rand(rng, 128, 256), np.zeros((128, 1), "float32")
    run(f, x, y)
    np.testing.assert_allclose(y[:, 0], x.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_reduction_over_partitions_is_declined():
    @T.prim_func
    def f(X: T.Buffer((128, 4), "float32"), Y: T.Buffer((1, 4), "float32")):
        x = T.alloc_buffer((128, 4), "float32", scope="trn.sbuf")
        y = T.alloc_buffer((1, 4), "float32", scope="trn.sbuf")
        Tx.copy(x, X)
        Tx.sum(y, x, axes=0)
        Tx.copy(Y, y)

    with pytest.raises(RuntimeError) as err:
        tvm.compile(f, target=TARGET)
    text = str(err.value)
    assert "TIRx schedule dispatch failed: op=tirx.tile.sum target=trn" in text
    assert "lies on partitions; Trainium reduces free axes only" in text


# ------------------------------------------------------------------------------ select


@pytest.mark.parametrize("shape", [(128, 128), (64, 200)])
def test_select_causal_mask(rng, shape):
    def causal(i, j):
        return i >= j

    @T.prim_func
    def f(X: T.Buffer(shape, "float32"), Y: T.Buffer(shape, "float32")):
        x = T.alloc_buffer(shape, "float32", scope="trn.sbuf")
        y = T.alloc_buffer(shape, "float32", scope="trn.sbuf")
        Tx.copy(x, X)
        Tx.select(y, x, -1e9, causal)
        Tx.copy(Y, y)

    x, y = rand(rng, *shape), np.zeros(shape, "float32")
    run(f, x, y)
    i, j = np.indices(shape)
    np.testing.assert_array_equal(y, np.where(i >= j, x, np.float32(-1e9)))


# ------------------------------------------------------------------------------ compose


def compose(shape, body):
    col = (shape[0], 1)

    @T.prim_func
    def f(X: T.Buffer(shape, "float32"), Z: T.Buffer(shape, "float32"),
          V: T.Buffer(col, "float32"), Y: T.Buffer(shape, "float32"),
          R: T.Buffer(col, "float32")):
        x = T.alloc_buffer(shape, "float32", scope="trn.sbuf")
        z = T.alloc_buffer(shape, "float32", scope="trn.sbuf")
        v = T.alloc_buffer(col, "float32", scope="trn.sbuf")
        y = T.alloc_buffer(shape, "float32", scope="trn.sbuf")
        r = T.alloc_buffer(col, "float32", scope="trn.sbuf")
        Tx.copy(x, X)
        Tx.copy(z, Z)
        Tx.copy(v, V)
        body(y, r, x, z, v)
        Tx.copy(Y, y)
        Tx.copy(R, r)

    return f


COMPOSE_CASES = {
    "binary_chain_stt": (lambda y, r, x, z, v: Tx.binary_chain(y, x, 2.0, z, "mul", "add"),
                         lambda x, z, v: (x * 2 + z, None)),
    "binary_chain_sts": (lambda y, r, x, z, v: Tx.binary_chain(y, x, v, 0.5, "sub", "mul"),
                         lambda x, z, v: ((x - v) * 0.5, None)),
    "binary_chain_tiles": (lambda y, r, x, z, v: Tx.binary_chain(y, x, z, x, "add", "maximum"),
                           lambda x, z, v: (np.maximum(x + z, x), None)),
    "binary_reduce_fused": (lambda y, r, x, z, v: Tx.binary_reduce(y, r, x, v, "mul", "sum"),
                            lambda x, z, v: (x * v, (x * v).sum(1, keepdims=True))),
    "binary_reduce_tiles": (lambda y, r, x, z, v: Tx.binary_reduce(y, r, x, z, "add", "max"),
                            lambda x, z, v: (x + z, (x + z).max(1, keepdims=True))),
    "unary_reduce_sum": (lambda y, r, x, z, v: Tx.unary_reduce(y, r, x, "exp", "sum",
                                                               bias=v, scale=0.5),
                         lambda x, z, v: (np.exp(x * 0.5 + v),
                                          np.exp(x * 0.5 + v).sum(1, keepdims=True))),
    "unary_reduce_max": (lambda y, r, x, z, v: Tx.unary_reduce(y, r, x, "relu", "max"),
                         lambda x, z, v: (np.maximum(x, 0),
                                          np.maximum(x, 0).max(1, keepdims=True))),
    "reduce_negate": (lambda y, r, x, z, v: Tx.reduce_negate(r, x, "max"),
                      lambda x, z, v: (None, -x.max(1, keepdims=True))),
}


@pytest.mark.parametrize("shape", [(128, 96), (48, 700)])
@pytest.mark.parametrize("case", sorted(COMPOSE_CASES))
def test_compose(rng, shape, case):
    body, ref = COMPOSE_CASES[case]
    x, z, v = rand(rng, *shape), rand(rng, *shape), rand(rng, shape[0], 1)
    y, r = np.zeros(shape, "float32"), np.zeros((shape[0], 1), "float32")
    run(compose(shape, body), x, z, v, y, r)
    want_y, want_r = ref(x, z, v)
    if want_y is not None:
        np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    if want_r is not None:
        np.testing.assert_allclose(r, want_r, rtol=1e-4, atol=1e-4)
