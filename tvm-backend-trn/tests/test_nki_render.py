"""The NKI renderers: exact text for small kernels, and every instruction compiles as Python."""

from __future__ import annotations

import numpy as np
import pytest

from tvm_backend_trn import isa
from tvm_backend_trn.isa import Affine, Var
from tvm_backend_trn.nki_render import (
    LegacyNkiRenderer,
    NkiRenderer,
    expr,
    render_nki,
    render_nki_legacy,
)


def softmax_kernel() -> isa.Kernel:
    x = isa.HbmTensor("x", (256, 512), "float32")
    y = isa.HbmTensor("y", (256, 512), "bfloat16", kind="output")
    xs = isa.SbufTensor("xs", 128, (512,), "float32")
    es = isa.SbufTensor("es", 128, (512,), "bfloat16", offset=2048)
    negmax = isa.SbufTensor("negmax", 128, (1,), "float32", offset=3072)
    total = isa.SbufTensor("total", 128, (1,), "float32", offset=3076)
    i = Var("i")
    body = (isa.Loop("i", 2, (
        isa.DmaCopy(xs.full(), src=x.tile([i * 128, 0], [128, 512])),
        isa.TensorReduce(negmax.full(), op="maximum", data=xs.full(), axis=(1,), negate=True),
        isa.Activation(es.full(), op="exp", data=xs.full(), bias=negmax.full(),
                       reduce_op="add", reduce_res=total.full()),
        isa.Reciprocal(total.full(), data=total.full()),
        isa.TensorScalar(es.full(), data=es.full(), op0="multiply", operand0=total.full()),
        isa.DmaCopy(y.tile([i * 128, 0], [128, 512]), src=es.full()),
    )),)
    return isa.Kernel("softmax", (x, y), (xs, es, negmax, total), body)


SOFTMAX_NKI = '''\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def softmax(x):
    y = nl.ndarray((256, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    xs = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)  # sbuf offset 0 B
    es = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)  # sbuf offset 2048 B
    negmax = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)  # sbuf offset 3072 B
    total = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)  # sbuf offset 3076 B
    for i in nl.affine_range(2):
        nisa.dma_copy(dst=xs, src=x[i * 128:i * 128 + 128, 0:512])
        nisa.tensor_reduce(dst=negmax, op=nl.maximum, data=xs, axis=1, negate=True)
        nisa.activation(dst=es, op=nl.exp, data=xs, bias=negmax, reduce_op=nl.add, \
reduce_res=total, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        nisa.reciprocal(dst=total, data=total)
        nisa.tensor_scalar(dst=es, data=es, op0=nl.multiply, operand0=total)
        nisa.dma_copy(dst=y[i * 128:i * 128 + 128, 0:512], src=es)
    return y
'''

SOFTMAX_LEGACY = '''\
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def softmax(x):
    y = nl.ndarray((256, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    xs = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)  # sbuf offset 0 B
    es = nl.ndarray((nl.par_dim(128), 512), dtype=nl.bfloat16, buffer=nl.sbuf)  # sbuf offset 2048 B
    negmax = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)  # sbuf offset 3072 B
    total = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)  # sbuf offset 3076 B
    for i in nl.affine_range(2):
        xs[...] = nl.load(x[i * 128:i * 128 + 128, 0:512])
        negmax[...] = nisa.tensor_reduce(op=nl.maximum, data=xs, axis=1, negate=True)
        es[...] = nisa.activation_reduce(op=nl.exp, data=xs, bias=negmax, reduce_op=nl.add, \
reduce_res=total)
        total[...] = nisa.reciprocal(data=total)
        es[...] = nisa.tensor_scalar(data=es, op0=nl.multiply, operand0=total)
        nl.store(y[i * 128:i * 128 + 128, 0:512], value=es)
    return y
'''


def test_softmax_current_dialect_golden():
    assert render_nki(softmax_kernel()) == SOFTMAX_NKI


def test_softmax_legacy_dialect_golden():
    assert render_nki_legacy(softmax_kernel()) == SOFTMAX_LEGACY


def test_softmax_kernel_simulates_to_numpy():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from tvm_backend_trn.simulator import simulate

    x = np.random.default_rng(0).standard_normal((256, 512), dtype=np.float32)
    out = simulate(softmax_kernel(), {"x": x})["y"].astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    e_bf16 = e.astype(ml_dtypes.bfloat16).astype(np.float32)  # es is a bf16 tile
    ref = e_bf16 * (1 / e.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(out, ref, rtol=1e-2)


def gemm_kernel(m: int = 256, n: int = 1024, k: int = 256) -> isa.Kernel:
    at = isa.HbmTensor("AT", (k, m), "bfloat16")
    b = isa.HbmTensor("B", (k, n), "bfloat16")
    c = isa.HbmTensor("C", (m, n), "bfloat16", kind="output")
    kt = k // 128
    at_sb = isa.SbufTensor("at_sb", 128, (kt, 128), "bfloat16")
    b_sb = isa.SbufTensor("b_sb", 128, (512,), "bfloat16", offset=kt * 256)
    c_sb = isa.SbufTensor("c_sb", 128, (512,), "bfloat16", offset=kt * 256 + 1024)
    ps = isa.PsumTensor("ps", 128, (512,), bank=0)
    i, j, kk = Var("i"), Var("j"), Var("kk")
    strip = isa.AP("AT", 128, ((128 * m, kt), (1, 128)), offset=i * 128, p_stride=m)
    body = (isa.Loop("i", m // 128, (
        isa.DmaCopy(at_sb.full(), src=strip),
        isa.Loop("j", n // 512, (
            isa.Loop("kk", kt, (
                isa.DmaCopy(b_sb.full(), src=b.tile([kk * 128, j * 512], [128, 512])),
                isa.Matmul(ps.full(), stationary=at_sb.tile((0, 128), (kk, 1), (0, 128)),
                           moving=b_sb.full(), accumulate=kk),
            )),
            isa.TensorCopy(c_sb.full(), src=ps.full()),
            isa.DmaCopy(c.tile([i * 128, j * 512], [128, 512]), src=c_sb.full()),
        )),
    )),)
    return isa.Kernel("gemm", (at, b, c), (at_sb, b_sb, c_sb, ps), body)


GEMM_NKI_BODY = '''\
    for i in nl.affine_range(2):
        nisa.dma_copy(dst=at_sb, src=AT.ap(pattern=[[256, 128], [32768, 2], [1, 128]], offset=i * 128))
        for j in nl.affine_range(2):
            for kk in nl.affine_range(2):
                nisa.dma_copy(dst=b_sb, src=B[kk * 128:kk * 128 + 128, j * 512:j * 512 + 512])
                nisa.nc_matmul(dst=ps, stationary=at_sb[0:128, kk:kk + 1, 0:128], moving=b_sb, \
accumulate=(kk != 0))
            nisa.tensor_copy(dst=c_sb, src=ps)
            nisa.dma_copy(dst=C[i * 128:i * 128 + 128, j * 512:j * 512 + 512], src=c_sb)
    return C
'''


def test_gemm_current_dialect_golden():
    text = render_nki(gemm_kernel())
    assert text.endswith(GEMM_NKI_BODY)
    assert "    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)  # psum bank 0, offset 0 B\n" in text
    assert "    at_sb = nl.ndarray((128, 2, 128), dtype=nl.bfloat16, buffer=nl.sbuf)" in text


def test_gemm_kernel_simulates():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from tvm_backend_trn.simulator import simulate

    rng = np.random.default_rng(3)
    a = rng.standard_normal((256, 256), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((256, 1024), dtype=np.float32).astype(ml_dtypes.bfloat16)
    out = simulate(gemm_kernel(), {"AT": np.ascontiguousarray(a.T), "B": b})["C"]
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=1e-2, atol=5e-2)


def every_instruction_kernel() -> isa.Kernel:
    x = isa.HbmTensor("x", (128, 64), "float32")
    out = isa.HbmTensor("out", (128, 64), "bfloat16", kind="output")
    a = isa.SbufTensor("a", 128, (64,), "float32")
    b = isa.SbufTensor("b", 128, (64,), "bfloat16", offset=256)
    col = isa.SbufTensor("col", 128, (1,), "float32", offset=384)
    idx = isa.SbufTensor("idx", 128, (64,), "int32", offset=512)
    ps = isa.PsumTensor("ps", 64, (128,), bank=1)
    return isa.Kernel("every", (x, out), (a, b, col, idx, ps), (
        isa.DmaCopy(a.full(), src=x.full()),
        isa.Memset(col.full(), value=0.5),
        isa.TensorCopy(b.full(), src=a.full()),
        isa.Matmul(ps.view(partitions=64, pattern=((1, 64),)), stationary=b.view(pattern=((1, 64),)),
                   moving=b.full(), accumulate=False),
        isa.Transpose(ps.full(), data=a.full()),
        isa.Activation(a.full(), op="tanh", data=a.full(), bias=col.full(), scale=2.0),
        isa.Reciprocal(a.full(), data=a.full()),
        isa.TensorReduce(col.full(), op="add", data=a.full(), axis=(1,), keepdims=True),
        isa.TensorTensor(a.full(), data1=a.full(), data2=a.full(), op="subtract"),
        isa.TensorScalar(a.full(), data=a.full(), op0="add", operand0=1.0, reverse0=True,
                         op1="multiply", operand1=col.full()),
        isa.TensorScalar(a.full(), data=a.full(), op0="add", operand0=1.0, reduce_op="add",
                         reduce_res=col.full()),
        isa.ScalarTensorTensor(a.full(), data=a.full(), op0="multiply", operand0=col.full(),
                               op1="add", operand1=a.full(), reverse1=True),
        isa.Iota(idx.full(), pattern=((1, 64),), offset=3, channel_multiplier=64),
        isa.AffineSelect(a.full(), pattern=((-1, 64),), channel_multiplier=1, on_true_tile=a.full(),
                         on_false_value=-1e4, cmp_op="greater_equal", offset=2),
        isa.TensorCopy(b.full(), src=a.full()),
        isa.DmaCopy(out.full(), src=b.full()),
    ))


@pytest.mark.parametrize("render", [render_nki, render_nki_legacy])
def test_every_instruction_renders_and_compiles(render):
    text = render(every_instruction_kernel())
    compile(text, "<nki>", "exec")
    assert text.count("\n") > 20


def test_every_instruction_kernel_simulates():
    pytest.importorskip("ml_dtypes")
    from tvm_backend_trn.simulator import simulate

    x = np.random.default_rng(5).uniform(0.5, 1.5, (128, 64)).astype(np.float32)
    stats: dict[str, int] = {}
    out = simulate(every_instruction_kernel(), {"x": x}, stats=stats)["out"]
    assert out.shape == (128, 64) and not np.isnan(out.astype(np.float32)).any()
    assert len(stats) == 14


def test_every_instruction_current_lines():
    lines = render_nki(every_instruction_kernel()).splitlines()
    body = [ln.strip() for ln in lines if ln.strip().startswith("nisa.")]
    assert body == [
        "nisa.dma_copy(dst=a, src=x)",
        "nisa.memset(dst=col, value=0.5)",
        "nisa.tensor_copy(dst=b, src=a)",
        "nisa.nc_matmul(dst=ps[0:64, 0:64], stationary=b, moving=b, accumulate=False)",
        "nisa.nc_transpose(dst=ps, data=a)",
        "nisa.activation(dst=a, op=nl.tanh, data=a, bias=col, scale=2.0)",
        "nisa.reciprocal(dst=a, data=a)",
        "nisa.tensor_reduce(dst=col, op=nl.add, data=a, axis=1, keepdims=True)",
        "nisa.tensor_tensor(dst=a, data1=a, data2=a, op=nl.subtract)",
        "nisa.tensor_scalar(dst=a, data=a, op0=nl.add, operand0=1.0, reverse0=True, "
        "op1=nl.multiply, operand1=col)",
        "nisa.tensor_scalar_reduce(dst=a, data=a, op0=nl.add, operand0=1.0, reduce_op=nl.add, "
        "reduce_res=col)",
        "nisa.scalar_tensor_tensor(dst=a, data=a, op0=nl.multiply, operand0=col, op1=nl.add, "
        "operand1=a, reverse1=True)",
        "nisa.iota(dst=idx, pattern=[[1, 64]], offset=3, channel_multiplier=64)",
        "nisa.affine_select(dst=a, pattern=[[-1, 64]], channel_multiplier=1, on_true_tile=a, "
        "on_false_value=-10000.0, cmp_op=nl.greater_equal, offset=2)",
        "nisa.tensor_copy(dst=b, src=a)",
        "nisa.dma_copy(dst=out, src=b)",
    ]


def test_every_instruction_legacy_lines():
    text = render_nki_legacy(every_instruction_kernel())
    assert "    a[...] = nl.load(x)\n" in text
    assert "    col[...] = nisa.memset(shape=(128, 1), value=0.5, dtype=nl.float32)\n" in text
    assert "    ps[0:64, 0:64] = nisa.nc_matmul(b, b)\n" in text
    assert ("    a[...] = nisa.affine_select(pred=(2 + 1 * nl.arange(128)[:, None] + "
            "-1 * nl.arange(64)[None, :] >= 0), on_true_tile=a, on_false_value=-10000.0)\n") in text
    assert "    nl.store(out, value=b)\n" in text


def test_legacy_has_no_access_patterns():
    with pytest.raises(ValueError, match="legacy NKI has no access patterns: view of 'AT'"):
        render_nki_legacy(gemm_kernel())


def test_renderers_share_per_instruction_methods():
    # The legacy renderer overrides only what the dialect spells differently.
    shared = {"emit_tensorcopy", "emit_tensortensor", "emit_tensorreduce", "emit_reciprocal",
              "emit_tensorscalar", "emit_scalartensortensor", "emit_transpose"}
    for name in shared:
        assert name not in vars(LegacyNkiRenderer) and name not in vars(NkiRenderer)


def test_loop_accumulate_and_legacy_plus_equals():
    a = isa.SbufTensor("a", 128, (128,), "bfloat16")
    ps = isa.PsumTensor("ps", 128, (128,))
    k = isa.Kernel("k", (), (a, ps), (isa.Loop("k", 4, (
        isa.Matmul(ps.full(), stationary=a.full(), moving=a.full(), accumulate=Var("k")),
    ), kind="sequential"),))
    assert "    for k in nl.sequential_range(4):\n        nisa.nc_matmul(dst=ps, stationary=a, " \
           "moving=a, accumulate=(k != 0))\n" in render_nki(k)
    assert "        ps[...] += nisa.nc_matmul(a, a)\n" in render_nki_legacy(k)


@pytest.mark.parametrize("value,text", [
    (5, "5"), (Var("k") * 128 + 64, "k * 128 + 64"), (Var("k") * -1 + 3, "-k + 3"),
    (Affine(-3), "-3"), (Var("a") - Var("b") * 2 - 1, "a - b * 2 - 1"), (Var("i") * 0, "0"),
])
def test_expr(value, text):
    assert expr(value) == text
