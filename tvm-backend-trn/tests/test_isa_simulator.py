"""The simulator against numpy, instruction by instruction, and its rule checks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

from tvm.error import TVMError  # noqa: E402
from tvm_backend_trn import isa  # noqa: E402
from tvm_backend_trn.isa import Var  # noqa: E402
from tvm_backend_trn.simulator import (  # noqa: E402
    TRN1,
    TRN2,
    HardwareModel,
    SimulatorError,
    simulate,
)

RNG = np.random.default_rng(1234)
SHAPES = [(128, 512), (64, 96), (1, 7), (128, 1)]


def bf16(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16)


# ------------------------------------------------------------------------------ harness


def run_tiles(build, inputs, outputs, *, psum=(), hw=None):
    """Load ``inputs`` (name -> array [P, F]) into SBUF, run ``build(tiles)``, store ``outputs``.

    ``outputs``: name -> (shape, dtype). ``psum``: names of outputs to place in PSUM (they are
    evicted through an extra SBUF tile). Returns the simulator's outputs.
    """
    tensors, allocs, head, tail, tiles = [], [], [], [], {}
    sb_off, ps_bank = 0, 0
    for name, arr in inputs.items():
        arr = np.asarray(arr)
        dt = "bfloat16" if arr.dtype == ml_dtypes.bfloat16 else str(arr.dtype)
        p, f = arr.shape
        tensors.append(isa.HbmTensor(name, (p, f), dt))
        t = isa.SbufTensor(f"{name}_sb", p, (f,), dt, offset=sb_off)
        sb_off += t.bytes_per_partition
        allocs.append(t)
        tiles[name] = t
        head.append(isa.DmaCopy(t.full(), src=tensors[-1].full()))
    for name, ((p, f), dt) in outputs.items():
        tensors.append(isa.HbmTensor(name, (p, f), dt, kind="output"))
        t = isa.SbufTensor(f"{name}_sb", p, (f,), dt, offset=sb_off)
        sb_off += t.bytes_per_partition
        allocs.append(t)
        if name in psum:
            pt = isa.PsumTensor(f"{name}_ps", p, (f,), dt, bank=ps_bank)
            ps_bank += max(1, -(-pt.bytes_per_partition // 2048))
            allocs.append(pt)
            tiles[name] = pt
            tail.append(isa.TensorCopy(t.full(), src=pt.full()))
        else:
            tiles[name] = t
        tail.append(isa.DmaCopy(tensors[-1].full(), src=t.full()))
    body = (*head, *build(tiles), *tail)
    kernel = isa.Kernel("k", tuple(tensors), tuple(allocs), body)
    feed = {n: np.asarray(a) for n, a in inputs.items()}
    return simulate(kernel, feed, hw=hw)


def build_gemm(m, n, k, dtype="bfloat16"):
    """C = AT.T @ B tiled 128 (M) x 512 (N) x 128 (K), with ragged edge tiles."""
    at = isa.HbmTensor("AT", (k, m), dtype)
    b = isa.HbmTensor("B", (k, n), dtype)
    c = isa.HbmTensor("C", (m, n), "float32", kind="output")
    tm, tn, tk = 128, 512, 128
    a_sb = isa.SbufTensor("a_sb", tk, (tm,), dtype, offset=0)
    b_sb = isa.SbufTensor("b_sb", tk, (tn,), dtype, offset=1024)
    c_sb = isa.SbufTensor("c_sb", tm, (tn,), "float32", offset=4096)
    ps = isa.PsumTensor("ps", tm, (tn,), "float32", bank=2)
    body = []
    for i0 in range(0, m, tm):
        mi = min(tm, m - i0)
        for j0 in range(0, n, tn):
            nj = min(tn, n - j0)
            for kk, k0 in enumerate(range(0, k, tk)):
                kc = min(tk, k - k0)
                body += [
                    isa.DmaCopy(a_sb.tile((0, kc), (0, mi)), src=at.tile([k0, i0], [kc, mi])),
                    isa.DmaCopy(b_sb.tile((0, kc), (0, nj)), src=b.tile([k0, j0], [kc, nj])),
                    isa.Matmul(ps.tile((0, mi), (0, nj)), stationary=a_sb.tile((0, kc), (0, mi)),
                               moving=b_sb.tile((0, kc), (0, nj)), accumulate=kk > 0),
                ]
            body += [isa.TensorCopy(c_sb.tile((0, mi), (0, nj)), src=ps.tile((0, mi), (0, nj))),
                     isa.DmaCopy(c.tile([i0, j0], [mi, nj]), src=c_sb.tile((0, mi), (0, nj)))]
    return isa.Kernel("gemm", (at, b, c), (a_sb, b_sb, c_sb, ps), tuple(body))


# ------------------------------------------------------------------------------ matmul


@pytest.mark.parametrize("m,n,k", [(128, 512, 128), (256, 1024, 384), (200, 700, 300), (1, 3, 5)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_gemm_tiled_on_every_axis(m, n, k, dtype):
    a = RNG.standard_normal((m, k), dtype=np.float32)
    b = RNG.standard_normal((k, n), dtype=np.float32)
    if dtype == "bfloat16":
        a, b = bf16(a), bf16(b)
    out = simulate(build_gemm(m, n, k, dtype), {"AT": np.ascontiguousarray(a.T), "B": b})["C"]
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_matmul_loop_with_affine_accumulate():
    k_tiles = 3
    at = isa.HbmTensor("AT", (128 * k_tiles, 64), "float32")
    b = isa.HbmTensor("B", (128 * k_tiles, 32), "float32")
    c = isa.HbmTensor("C", (64, 32), "float32", kind="output")
    a_sb = isa.SbufTensor("a_sb", 128, (64,), "float32")
    b_sb = isa.SbufTensor("b_sb", 128, (32,), "float32", offset=256)
    c_sb = isa.SbufTensor("c_sb", 64, (32,), "float32", offset=512)
    ps = isa.PsumTensor("ps", 64, (32,), bank=7, offset=1024)
    kk = Var("kk")
    body = (
        isa.Loop("kk", k_tiles, (
            isa.DmaCopy(a_sb.full(), src=at.tile([kk * 128, 0], [128, 64])),
            isa.DmaCopy(b_sb.full(), src=b.tile([kk * 128, 0], [128, 32])),
            isa.Matmul(ps.full(), stationary=a_sb.full(), moving=b_sb.full(), accumulate=kk),
        ), kind="sequential"),
        isa.TensorCopy(c_sb.full(), src=ps.full()),
        isa.DmaCopy(c.full(), src=c_sb.full()),
    )
    kernel = isa.Kernel("mm", (at, b, c), (a_sb, b_sb, c_sb, ps), body)
    a = RNG.standard_normal((64, 128 * k_tiles), dtype=np.float32)
    bb = RNG.standard_normal((128 * k_tiles, 32), dtype=np.float32)
    stats = {}
    out = simulate(kernel, {"AT": a.T.copy(), "B": bb}, stats=stats)["C"]
    np.testing.assert_allclose(out, a @ bb, rtol=1e-4, atol=1e-4)
    assert stats == {"dma_copy": 7, "nc_matmul": 3, "tensor_copy": 1}


@pytest.mark.parametrize("p,f", [(128, 128), (32, 100), (5, 1)])
def test_transpose_tensor_engine(p, f):
    x = RNG.standard_normal((p, f), dtype=np.float32)
    out = run_tiles(lambda t: [isa.Transpose(t["y"].full(), data=t["x"].full())],
                    {"x": x}, {"y": ((f, p), "float32")}, psum={"y"})["y"]
    np.testing.assert_array_equal(out, x.T)


def test_transpose_vector_engine_limit():
    x = np.ones((64, 32), np.float32)
    with pytest.raises(SimulatorError, match=r"nc_transpose: vector engine transposes at most 32 x 32, got 64 x 32"):
        run_tiles(lambda t: [isa.Transpose(t["y"].full(), data=t["x"].full(), engine="vector")],
                  {"x": x}, {"y": ((32, 64), "float32")})


# ------------------------------------------------------------------------------ copies, dtypes


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float16"])
@pytest.mark.parametrize("p,f", SHAPES)
def test_tensor_copy_rounds_to_destination(dtype, p, f):
    x = RNG.standard_normal((p, f), dtype=np.float32) * 3
    out = run_tiles(lambda t: [isa.TensorCopy(t["y"].full(), src=t["x"].full())],
                    {"x": x}, {"y": ((p, f), dtype)})["y"]
    expect = x.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else
                      getattr(ml_dtypes, dtype, None) or np.dtype(dtype))
    assert out.dtype == expect.dtype
    np.testing.assert_array_equal(out.astype(np.float32), expect.astype(np.float32))


def test_bf16_result_is_ml_dtypes_rounding_of_fp32_result():
    a = RNG.standard_normal((128, 256), dtype=np.float32)
    b = RNG.standard_normal((128, 256), dtype=np.float32)
    out = run_tiles(lambda t: [isa.TensorTensor(t["y"].full(), data1=t["a"].full(),
                                                data2=t["b"].full(), op="multiply")],
                    {"a": a, "b": b}, {"y": ((128, 256), "bfloat16")})["y"]
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out, (a * b).astype(ml_dtypes.bfloat16))


def test_int_destination_rounds_and_saturates():
    x = np.array([[1.4, 2.5, -3.6, 1e10, -1e10]], np.float32)
    out = run_tiles(lambda t: [isa.TensorCopy(t["y"].full(), src=t["x"].full())],
                    {"x": x}, {"y": ((1, 5), "int8")})["y"]
    np.testing.assert_array_equal(out, [[1, 2, -4, 127, -128]])


def test_strided_and_partition_offset_views():
    x = RNG.standard_normal((128, 64), dtype=np.float32)
    # every other column of partitions 32..95, written as a [64, 4, 8] box
    def build(t):
        src = t["x"].view(p_start=32, partitions=64, offset=1, pattern=((16, 4), (2, 8)))
        return [isa.TensorCopy(t["y"].full(), src=src)]
    out = run_tiles(build, {"x": x}, {"y": ((64, 32), "float32")})["y"]
    ref = x[32:96, 1:64:2].reshape(64, 4, 8)
    np.testing.assert_array_equal(out, ref.reshape(64, 32))


def test_unwritten_memory_reads_as_nan():
    out = run_tiles(lambda t: [], {}, {"y": ((4, 4), "float32")})["y"]
    assert np.isnan(out).all()


# ------------------------------------------------------------------------------ scalar engine

ACT_REF = {
    "copy": lambda x: x, "exp": np.exp, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "square": np.square, "abs": np.abs,
    "sin": np.sin, "sign": np.sign, "silu": lambda x: x / (1 + np.exp(-x)),
    "gelu_apprx_tanh": lambda x: 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3))),
    "gelu": lambda x: 0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2))),
    "softplus": lambda x: np.log1p(np.exp(x)),
    "sqrt": lambda x: np.sqrt(np.abs(x)), "rsqrt": lambda x: 1 / np.sqrt(np.abs(x)),
    "log": lambda x: np.log(np.abs(x)), "reciprocal": lambda x: 1 / x,
}
POSITIVE = {"sqrt", "rsqrt", "log"}


@pytest.mark.parametrize("op", sorted(ACT_REF))
@pytest.mark.parametrize("p,f", [(128, 256), (17, 33)])
def test_activation_with_bias_column_and_scale(op, p, f):
    x = RNG.standard_normal((p, f), dtype=np.float32)
    bias = RNG.standard_normal((p, 1), dtype=np.float32) * 0.1
    scale = 0.75
    if op in POSITIVE:
        x, bias = np.abs(x) + 0.5, np.abs(bias)
    out = run_tiles(lambda t: [isa.Activation(t["y"].full(), op=op, data=t["x"].full(),
                                              bias=t["b"].full(), scale=scale)],
                    {"x": x, "b": bias}, {"y": ((p, f), "float32")})["y"]
    ref = ACT_REF[op](x * scale + bias) if op not in POSITIVE else ACT_REF[op](x * scale + bias)
    np.testing.assert_allclose(out, ref.astype(np.float32), rtol=2e-5, atol=2e-6)


def test_activation_reduce_and_column_scale():
    x = RNG.standard_normal((96, 40), dtype=np.float32)
    s = RNG.standard_normal((96, 1), dtype=np.float32)
    out = run_tiles(lambda t: [isa.Activation(t["y"].full(), op="exp", data=t["x"].full(),
                                              scale=t["s"].full(), bias=0.25, reduce_op="add",
                                              reduce_res=t["r"].full())],
                    {"x": x, "s": s}, {"y": ((96, 40), "bfloat16"), "r": ((96, 1), "float32")})
    y = np.exp(x * s + 0.25)
    np.testing.assert_array_equal(out["y"], y.astype(ml_dtypes.bfloat16))
    np.testing.assert_allclose(out["r"], y.sum(axis=1, keepdims=True), rtol=1e-5)


def test_activation_reduce_only_adds():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(SimulatorError, match="activation: reduce_op must be add"):
        run_tiles(lambda t: [isa.Activation(t["y"].full(), op="exp", data=t["x"].full(),
                                            reduce_op="maximum", reduce_res=t["r"].full())],
                  {"x": x}, {"y": ((4, 4), "float32"), "r": ((4, 1), "float32")})


@pytest.mark.parametrize("p,f", SHAPES)
def test_reciprocal(p, f):
    x = RNG.uniform(0.5, 4, (p, f)).astype(np.float32)
    out = run_tiles(lambda t: [isa.Reciprocal(t["y"].full(), data=t["x"].full())],
                    {"x": x}, {"y": ((p, f), "float32")})["y"]
    np.testing.assert_allclose(out, 1 / x, rtol=1e-6)


# ------------------------------------------------------------------------------ vector engine


@pytest.mark.parametrize("op,ref", [("add", np.add), ("maximum", np.max), ("minimum", np.min),
                                    ("multiply", np.prod)])
@pytest.mark.parametrize("axis", [(1,), (2,), (1, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_tensor_reduce(op, ref, axis, keepdims):
    p, a, b = 64, 6, 10
    x = RNG.uniform(0.5, 1.5, (p, a * b)).astype(np.float32)

    def build(t):
        data = t["x"].view(pattern=((b, a), (1, b)))
        return [isa.TensorReduce(t["y"].full(), op=op, data=data, axis=axis, negate=True,
                                 keepdims=keepdims)]

    nout = {(1,): b, (2,): a, (1, 2): 1}[axis]
    out = run_tiles(build, {"x": x}, {"y": ((p, nout), "float32")})["y"]
    if op == "add":
        expect = x.reshape(p, a, b).sum(axis=axis)
    else:
        expect = ref(x.reshape(p, a, b), axis=axis)
    np.testing.assert_allclose(out, -expect.reshape(p, -1), rtol=1e-5)


def test_tensor_reduce_rejects_partition_axis():
    x = np.ones((8, 8), np.float32)
    with pytest.raises(SimulatorError, match="tensor_reduce: axis 0 is the partition dim"):
        run_tiles(lambda t: [isa.TensorReduce(t["y"].full(), op="add", data=t["x"].full(),
                                              axis=(0,))], {"x": x}, {"y": ((1, 8), "float32")})


BIN_REF = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
           "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum,
           "equal": np.equal, "greater": np.greater, "less_equal": np.less_equal,
           "power": np.power}


@pytest.mark.parametrize("op", sorted(BIN_REF))
@pytest.mark.parametrize("p,f", [(128, 512), (3, 17)])
def test_tensor_tensor(op, p, f):
    a = RNG.uniform(0.5, 2, (p, f)).astype(np.float32)
    b = RNG.uniform(0.5, 2, (p, f)).astype(np.float32)
    b[:, ::3] = a[:, ::3]  # some ties for the comparisons
    out = run_tiles(lambda t: [isa.TensorTensor(t["y"].full(), data1=t["a"].full(),
                                                data2=t["b"].full(), op=op)],
                    {"a": a, "b": b}, {"y": ((p, f), "float32")})["y"]
    np.testing.assert_allclose(out, BIN_REF[op](a, b).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("op,ref", [("bitwise_and", np.bitwise_and), ("bitwise_xor", np.bitwise_xor),
                                    ("left_shift", np.left_shift)])
def test_tensor_tensor_bitwise_on_ints(op, ref):
    a = RNG.integers(0, 1 << 12, (16, 32)).astype(np.int32)
    b = RNG.integers(0, 8, (16, 32)).astype(np.int32)
    out = run_tiles(lambda t: [isa.TensorTensor(t["y"].full(), data1=t["a"].full(),
                                                data2=t["b"].full(), op=op)],
                    {"a": a, "b": b}, {"y": ((16, 32), "int32")})["y"]
    np.testing.assert_array_equal(out, ref(a, b))


def test_bitwise_on_floats_is_an_error():
    x = np.ones((2, 2), np.float32)
    with pytest.raises(SimulatorError, match="bitwise op bitwise_and needs integer tiles"):
        run_tiles(lambda t: [isa.TensorTensor(t["y"].full(), data1=t["x"].full(),
                                              data2=t["x"].full(), op="bitwise_and")],
                  {"x": x}, {"y": ((2, 2), "float32")})


@pytest.mark.parametrize("p,f", SHAPES)
@pytest.mark.parametrize("reverse0", [False, True])
def test_tensor_scalar_column_and_second_op(p, f, reverse0):
    x = RNG.uniform(1, 2, (p, f)).astype(np.float32)
    col = RNG.uniform(1, 2, (p, 1)).astype(np.float32)
    out = run_tiles(lambda t: [isa.TensorScalar(t["y"].full(), data=t["x"].full(), op0="divide",
                                                operand0=t["c"].full(), reverse0=reverse0,
                                                op1="subtract", operand1=0.5, reverse1=True)],
                    {"x": x, "c": col}, {"y": ((p, f), "float32")})["y"]
    first = col / x if reverse0 else x / col
    np.testing.assert_allclose(out, 0.5 - first, rtol=1e-6)


def test_tensor_scalar_reduce():
    x = RNG.standard_normal((128, 64), dtype=np.float32)
    out = run_tiles(lambda t: [isa.TensorScalar(t["y"].full(), data=t["x"].full(), op0="multiply",
                                                operand0=2.0, reduce_op="maximum",
                                                reduce_res=t["r"].full())],
                    {"x": x}, {"y": ((128, 64), "bfloat16"), "r": ((128, 1), "float32")})
    np.testing.assert_array_equal(out["y"], (x * 2).astype(ml_dtypes.bfloat16))
    np.testing.assert_allclose(out["r"], (x * 2).max(axis=1, keepdims=True))


def test_scalar_tensor_tensor():
    x = RNG.standard_normal((100, 48), dtype=np.float32)
    y = RNG.standard_normal((100, 48), dtype=np.float32)
    col = RNG.standard_normal((100, 1), dtype=np.float32)
    out = run_tiles(lambda t: [isa.ScalarTensorTensor(t["o"].full(), data=t["x"].full(),
                                                      op0="subtract", operand0=t["c"].full(),
                                                      op1="maximum", operand1=t["y"].full(),
                                                      reverse0=True)],
                    {"x": x, "y": y, "c": col}, {"o": ((100, 48), "float32")})["o"]
    np.testing.assert_allclose(out, np.maximum(col - x, y))


# ------------------------------------------------------------------------------ gpsimd, memset


def test_memset_and_int_rule():
    out = run_tiles(lambda t: [isa.Memset(t["y"].full(), value=-2.5)], {},
                    {"y": ((128, 10), "bfloat16")})["y"]
    assert (out.astype(np.float32) == -2.5).all()
    with pytest.raises(SimulatorError, match=r"memset: value 1.5 is not an int but dst dtype int32"):
        run_tiles(lambda t: [isa.Memset(t["y"].full(), value=1.5)], {}, {"y": ((4, 4), "int32")})


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_iota(dtype):
    pattern = ((100, 3), (-1, 5))
    out = run_tiles(lambda t: [isa.Iota(t["y"].full(), pattern=pattern, offset=7,
                                        channel_multiplier=1000)], {},
                    {"y": ((16, 15), dtype)})["y"]
    p = np.arange(16)[:, None, None]
    ref = 7 + 1000 * p + 100 * np.arange(3)[None, :, None] - np.arange(5)[None, None, :]
    np.testing.assert_array_equal(out, ref.reshape(16, 15))


def test_iota_pattern_must_cover_dst():
    with pytest.raises(SimulatorError, match="iota: pattern covers 4 elements but dst has 5"):
        run_tiles(lambda t: [isa.Iota(t["y"].full(), pattern=((1, 4),))], {},
                  {"y": ((2, 5), "int32")})


@pytest.mark.parametrize("n", [128, 40])
def test_affine_select_causal_mask(n):
    x = RNG.standard_normal((n, n), dtype=np.float32)
    # keep x[p, j] where p - j >= 0, else -inf-ish
    out = run_tiles(lambda t: [isa.AffineSelect(t["y"].full(), pattern=((-1, n),),
                                                channel_multiplier=1, on_true_tile=t["x"].full(),
                                                on_false_value=-9984.0, cmp_op="greater_equal")],
                    {"x": x}, {"y": ((n, n), "float32")})["y"]
    np.testing.assert_array_equal(out, np.where(np.tril(np.ones((n, n), bool)), x, -9984.0))


def test_identity_helper():
    def build(t):
        ones = isa.SbufTensor("ones", 64, (64,), "float32", offset=100000)
        return [*isa.identity(t["y"], ones)]

    tensors = (isa.HbmTensor("I", (64, 64), "bfloat16", kind="output"),)
    y = isa.SbufTensor("y", 64, (64,), "bfloat16")
    ones = isa.SbufTensor("ones", 64, (64,), "float32", offset=1024)
    body = (*isa.identity(y, ones), isa.DmaCopy(tensors[0].full(), src=y.full()))
    out = simulate(isa.Kernel("eye", tensors, (y, ones), body), {})["I"]
    np.testing.assert_array_equal(out.astype(np.float32), np.eye(64))


# ------------------------------------------------------------------------------ rule checks


def _mm_kernel(k=128, m=128, n=512, bank=0, offset=0, psum_free=None, acc=False, pre=()):
    a = isa.SbufTensor("a", k, (m,), "bfloat16")
    b = isa.SbufTensor("b", k, (n,), "bfloat16", offset=4096)
    ps = isa.PsumTensor("ps", m, (psum_free or n,), bank=bank, offset=offset)
    body = (isa.Memset(a.full(), value=1.0), isa.Memset(b.full(), value=1.0), *pre(ps),
            isa.Matmul(ps.view(pattern=((1, n),)), stationary=a.full(), moving=b.full(),
                       accumulate=acc)) if pre else (
        isa.Memset(a.full(), value=1.0), isa.Memset(b.full(), value=1.0),
        isa.Matmul(ps.view(pattern=((1, n),)), stationary=a.full(), moving=b.full(),
                   accumulate=acc))
    return isa.Kernel("mm", (), (a, b, ps), body)


@pytest.mark.parametrize("kw,msg", [
    (dict(n=600, psum_free=600), "nc_matmul: moving free size 600 exceeds 512"),
    (dict(m=129), "partition dim 129 > 128"),
    (dict(m=100, n=16, k=100), None),
    (dict(n=512, offset=1024, psum_free=512),
     r"nc_matmul: PSUM tile crosses a 2 KiB bank \(bytes 1024\.\.3072"),
])
def test_matmul_limits(kw, msg):
    kernel = _mm_kernel(**kw)
    if msg is None:
        simulate(kernel, {})
        return
    with pytest.raises(SimulatorError, match=msg) as info:
        simulate(kernel, {})
    assert isinstance(info.value, TVMError)


def test_matmul_stationary_free_limit():
    a = isa.SbufTensor("a", 128, (200,), "bfloat16")
    b = isa.SbufTensor("b", 128, (64,), "bfloat16", offset=4096)
    ps = isa.PsumTensor("ps", 128, (64,))
    body = (isa.Memset(a.full(), value=1.0), isa.Memset(b.full(), value=1.0),
            isa.Matmul(ps.full(), stationary=a.full(), moving=b.full()))
    with pytest.raises(SimulatorError, match="nc_matmul: stationary free size 200 exceeds 128"):
        simulate(isa.Kernel("mm", (), (a, b, ps), body), {})


def test_matmul_contraction_limit_message_names_instruction():
    a = isa.SbufTensor("a", 128, (64,), "float32")
    ps = isa.PsumTensor("ps", 64, (64,))
    bad = isa.AP("a", 256, ((1, 64),))
    body = (isa.Loop("i", 2, (isa.Matmul(ps.full(), stationary=bad, moving=bad),)),)
    with pytest.raises(SimulatorError) as info:
        simulate(isa.Kernel("mm", (), (a, ps), body), {})
    text = str(info.value)
    assert text.startswith("nc_matmul: contraction size 256 exceeds 128\n")
    assert "at instruction #0 [i=0]: nisa.nc_matmul(dst=ps, stationary=a.ap(" in text


def test_accumulate_onto_memset_psum_is_an_error():
    kernel = _mm_kernel(n=64, acc=True, pre=lambda ps: (isa.Memset(ps.full(), value=0.0),))
    with pytest.raises(SimulatorError, match="accumulate=True onto PSUM data that no nc_matmul wrote"):
        simulate(kernel, {})


def test_matmul_dtype_rules():
    a = isa.SbufTensor("a", 8, (8,), "float32")
    b = isa.SbufTensor("b", 8, (8,), "bfloat16", offset=64)
    ps = isa.PsumTensor("ps", 8, (8,))
    ps16 = isa.PsumTensor("ps16", 8, (8,), dtype="bfloat16", bank=1)
    body = (isa.Matmul(ps.full(), stationary=a.full(), moving=b.full()),)
    with pytest.raises(SimulatorError, match="float32 input pairs only with float32"):
        simulate(isa.Kernel("mm", (), (a, b, ps, ps16), body), {})
    body = (isa.Matmul(ps16.full(), stationary=b.full(), moving=b.full()),)
    with pytest.raises(SimulatorError, match="nc_matmul: dst dtype bfloat16; PSUM accumulation is float32"):
        simulate(isa.Kernel("mm", (), (a, b, ps, ps16), body), {})


def test_sbuf_overflow_and_bigger_trn2():
    big = isa.SbufTensor("big", 128, (50000,), "float32")
    kernel = isa.Kernel("k", (), (big,), ())
    with pytest.raises(SimulatorError, match=r"SBUF partition overflow: .*200000 B > 196608 B"):
        simulate(kernel, {})
    simulate(kernel, {}, hw=TRN2)
    assert HardwareModel.from_target({"max_sbuf_size_per_partition": 229376}) == TRN2
    assert HardwareModel.from_target({"partition_size": 128}) == TRN1


def test_psum_overflow_and_bad_bank():
    with pytest.raises(SimulatorError, match=r"PSUM partition overflow: .*15360\.\.17408 of each partition; 17408 B > 16384 B"):
        simulate(isa.Kernel("k", (), (isa.PsumTensor("p", 128, (512,), bank=7, offset=1024),), ()), {})
    with pytest.raises(SimulatorError, match=r"bank 8 offset 0 B is not a PSUM location"):
        simulate(isa.Kernel("k", (), (isa.PsumTensor("p", 128, (8,), bank=8),), ()), {})


def test_dma_rules():
    h = isa.HbmTensor("h", (128, 16), "float32", kind="output")
    ps = isa.PsumTensor("ps", 128, (16,))
    sb16 = isa.SbufTensor("sb16", 128, (16,), "bfloat16")
    with pytest.raises(SimulatorError, match="dma_copy: src 'ps' is in PSUM; DMA cannot reach PSUM"):
        simulate(isa.Kernel("k", (h,), (ps, sb16), (isa.DmaCopy(h.full(), src=ps.full()),)), {})
    with pytest.raises(SimulatorError, match="dma_copy: src dtype bfloat16 != dst dtype float32"):
        simulate(isa.Kernel("k", (h,), (ps, sb16), (isa.DmaCopy(h.full(), src=sb16.full()),)), {})


def test_view_bounds():
    h = isa.HbmTensor("h", (128, 16), "float32")
    sb = isa.SbufTensor("sb", 64, (16,), "float32")
    with pytest.raises(SimulatorError, match=r"partitions 32\.\.95 of 'sb' are outside its 64 partitions"):
        simulate(isa.Kernel("k", (h,), (sb,), (
            isa.DmaCopy(sb.view(p_start=32), src=h.tile([0, 0], [64, 16])),)), {"h": np.zeros((128, 16))})
    with pytest.raises(SimulatorError, match=r"view of 'sb' reaches elements 8\.\.23 of a partition"):
        simulate(isa.Kernel("k", (h,), (sb,), (
            isa.DmaCopy(sb.view(offset=8), src=h.tile([0, 0], [64, 16])),)), {"h": np.zeros((128, 16))})
    with pytest.raises(SimulatorError, match=r"view of HBM tensor 'h' reaches elements"):
        simulate(isa.Kernel("k", (h,), (sb,), (
            isa.DmaCopy(sb.full(), src=h.tile([100, 0], [64, 16])),)), {"h": np.zeros((128, 16))})


def test_gpsimd_cannot_touch_psum():
    ps = isa.PsumTensor("ps", 8, (8,))
    with pytest.raises(SimulatorError, match="iota: dst 'ps' is in PSUM; it must be in SBUF"):
        simulate(isa.Kernel("k", (), (ps,), (isa.Iota(ps.full(), pattern=((1, 8),)),)), {})


def test_inputs_are_checked():
    h = isa.HbmTensor("h", (4, 4), "float32")
    k = isa.Kernel("k", (h,), (), ())
    with pytest.raises(SimulatorError, match=r"input 'h': shape \(4, 5\) != declared \(4, 4\)"):
        simulate(k, {"h": np.zeros((4, 5))})
    with pytest.raises(SimulatorError, match="missing input 'h'"):
        simulate(k, {})


def test_import_is_light():
    code = ("import sys, tvm_backend_trn, tvm_backend_trn.isa, tvm_backend_trn.nki_render, "
            "tvm_backend_trn.simulator; "
            "print('ml_dtypes' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
