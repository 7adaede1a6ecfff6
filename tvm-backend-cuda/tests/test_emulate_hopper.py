"""The library's Hopper kernels under the CUDA emulator (CPU, no GPU): TMA loads and stores
through tensor maps derived at launch or encoded by the caller (128-byte swizzle, out-of-bounds
zero fill, clipped stores), TMA reductions, wgmma from shared-memory descriptors (K- and
MN-major) and from registers, mbarrier transaction bytes, warp specialisation. Each result is
checked against numpy."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()

ml_dtypes = pytest.importorskip("ml_dtypes")
TARGET = {"kind": "cuda", "arch": "sm_90a"}


def _emulated(func: Any) -> Any:
    return tvm.compile(func, target=TARGET, emulate=True)


def _check_bf16(got: np.ndarray, ref: np.ndarray) -> None:
    """f32 accumulation then one rounding to bfloat16: half a bfloat16 spacing (2^-8 of the
    value) plus the accumulation's own error, which matters only near zero."""
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=2.0 ** -8, atol=1e-3)


@pytest.mark.parametrize("m, n, k", [(256, 512, 192), (200, 264, 64)])
def test_gemm_bf16(m: int, n: int, k: int) -> None:
    """C = A @ B^T (TMA + wgmma + a producer warpgroup); 200 x 264 x 64: every tile edge
    crosses the arrays' ends (loads read zeros, stores are clipped)."""
    from tvm_backend_cuda import kernels

    ex = _emulated(kernels.gemm_func(m, n, k, "bfloat16", arch="sm_90a"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((n, k)).astype(ml_dtypes.bfloat16)
    c = np.full((m, n), 7.0, ml_dtypes.bfloat16)
    start = time.perf_counter()
    ex(a, b, c)
    assert time.perf_counter() - start < 30
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    _check_bf16(c, ref)


def test_gemm_float8_scaled() -> None:
    """e4m3 operands (8-bit wgmma, 128-byte rows of 128 elements) with scale_a * scale_b."""
    from tvm_backend_cuda import kernels

    m, n, k = 256, 512, 192
    ex = _emulated(kernels.gemm_func(m, n, k, "float8_e4m3fn", arch="sm_90a"))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((n, k)).astype(ml_dtypes.float8_e4m3fn)
    sa, sb = np.array([0.5], np.float32), np.array([0.25], np.float32)
    c = np.zeros((m, n), ml_dtypes.bfloat16)
    ex(a, b, sa, sb, c)
    ref = (a.astype(np.float32) @ b.astype(np.float32).T) * 0.125
    _check_bf16(c, ref)


def test_gemm_float16_tails() -> None:
    """float16 in and out, 129 x 520 x 64 (the GPU test's shape)."""
    from tvm_backend_cuda import kernels

    m, n, k = 129, 520, 64
    ex = _emulated(kernels.gemm_func(m, n, k, "float16", arch="sm_90a"))
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    ex(a, b, c)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2.0 ** -10, atol=1e-3)


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def test_gemm_fused_epilogue() -> None:
    """act(A @ B^T + bias) + residual in the consumer warpgroups' epilogue."""
    from tvm_backend_cuda import kernels

    m, n, k = 256, 512, 128
    ex = _emulated(kernels.gemm_func(m, n, k, "bfloat16", arch="sm_90a", bias=True,
                                     activation="silu", residual=True))
    rng = np.random.default_rng(4)
    bf = ml_dtypes.bfloat16
    a = rng.standard_normal((m, k)).astype(bf)
    b = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(bf)
    bias = rng.standard_normal(n).astype(bf)
    res = rng.standard_normal((m, n)).astype(bf)
    c = np.full((m, n), np.nan, bf)
    ex(a, b, bias, res, c)
    f32 = np.float32
    want = _silu(a.astype(f32) @ b.astype(f32).T + bias.astype(f32)) + res.astype(f32)
    got = c.astype(f32)
    assert np.isfinite(got).all()
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-2


def _attention_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    d = q.shape[-1]
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    v = np.repeat(v, q.shape[1] // v.shape[1], axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.exp(s - mx)
    total = p.sum(-1, keepdims=True)
    return (p / total) @ v, (np.log(total) + mx)[..., 0]


# (batch, heads_q, heads_kv, seq_q, seq_k, d, dtype, causal): the GPU test's cases
# (test_kernels_attention.CASES) and a GQA d 64 one
ATTENTION_CASES = [
    (1, 2, 2, 200, 300, 128, "bfloat16", False),  # tails of queries and keys
    (1, 4, 2, 200, 136, 64, "bfloat16", True),  # GQA, causal, d 64
    (2, 4, 1, 256, 256, 64, "bfloat16", True),  # MQA, causal, whole blocks
    (1, 4, 2, 333, 333, 128, "float16", True),  # GQA, causal, tails
    (1, 1, 1, 1, 77, 64, "bfloat16", False),  # one query
    (1, 2, 1, 130, 520, 128, "bfloat16", True),  # causal with seq_k > seq_q
    (1, 2, 2, 200, 250, 256, "bfloat16", True),  # d 256: blocks of 64 keys, tails
    (2, 2, 1, 128, 192, 256, "float16", False),  # d 256, MQA
]


@pytest.mark.parametrize("case", ATTENTION_CASES,
                         ids=lambda c: "-".join(str(x) for x in c[:6]) + f"-{c[6]}"
                         + ("-causal" if c[7] else ""))
def test_attention_forward(case: tuple[Any, ...]) -> None:
    """FlashAttention forward: S = Q K^T (both operands in shared memory), O += P V (P from
    registers, V MN-major), key and query tails, GQA/MQA, causal, d 64 to 256."""
    from tvm_backend_cuda import kernels

    batch, hq, hk, sq, sk, d, dtype, causal = case
    shape = (batch, hq, hk, sq, sk, d)
    ex = _emulated(kernels.attention_func(*shape, dtype, arch="sm_90a", causal=causal))
    rng = np.random.default_rng(2)
    bf = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    q = rng.standard_normal((batch * hq * sq, d)).astype(bf)
    k = rng.standard_normal((batch * hk * sk, d)).astype(bf)
    v = rng.standard_normal((batch * hk * sk, d)).astype(bf)
    o = np.zeros((batch * hq * sq, d), bf)
    lse = np.zeros((batch * hq * sq,), np.float32)
    ex(q, k, v, o, lse)
    f32 = np.float32
    o_ref, lse_ref = _attention_ref(q.astype(f32).reshape(batch, hq, sq, d),
                                    k.astype(f32).reshape(batch, hk, sk, d),
                                    v.astype(f32).reshape(batch, hk, sk, d), causal)
    # P is rounded to bfloat16 before P V, as on the GPU
    np.testing.assert_allclose(o.astype(f32).reshape(o_ref.shape), o_ref, atol=2e-2)
    np.testing.assert_allclose(lse.reshape(lse_ref.shape), lse_ref, atol=1e-4)


def test_tensor_maps_the_caller_encoded_are_not_modelled() -> None:
    """A tensor map passed in (encoded by the driver) is refused, naming the parameter; the
    same kernel with maps derived at launch runs (``tma_128B_derived``, a gpu test)."""
    from lang_kernels import tma_kernel

    from tvm.error import NotModelledError

    ex = _emulated(tma_kernel())
    a = np.zeros((128, 128), ml_dtypes.bfloat16)
    b = np.zeros((128, 128), ml_dtypes.bfloat16)
    with pytest.raises(NotModelledError, match="tensor map"):
        ex(bytes(128), bytes(128), a, b)


def _tma_reduce_kernel(op: str, dtype: str, rows: int, cols: int, box: int) -> Any:
    """B op= A box by box: each CTA stages its box of A in shared memory (plain loads, zeros
    past the edges), then one thread reduces it into B with ``cp.reduce.async.bulk.tensor``
    through the caller's map of B (the boxes at the edges are clipped)."""
    from tvm.script import tirx as T

    @T.prim_func
    def tma_reduce(A: T.Buffer((rows, cols), dtype), TM: T.TensorMap):
        T.device_entry()
        bx, by = T.cta_id([(cols + box - 1) // box, (rows + box - 1) // box])
        tx = T.thread_id([128])
        tile = T.alloc_buffer((box, box), dtype, scope="shared.dyn", align=128)
        for i in T.serial(box * box // 128):
            r = by * box + (i * 128 + tx) // box
            c = bx * box + (i * 128 + tx) % box
            tile[(i * 128 + tx) // box, (i * 128 + tx) % box] = T.if_then_else(
                r < rows and c < cols, A[T.min(r, rows - 1), T.min(c, cols - 1)],
                T.Cast(dtype, 0))
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.cp_async.bulk.tensor.s2g_reduce(2, tile[0, 0], TM, "", op, bx * box, by * box)
            T.ptx.cp_async.bulk.commit_group()
            T.ptx.cp_async.bulk.wait_group(0)

    return tma_reduce


@pytest.mark.parametrize("op, dtype", [("add", "float32"), ("max", "float32"),
                                       ("add", "bfloat16"), ("xor", "int32")])
def test_tma_reduction_into_an_encoded_map(op: str, dtype: str) -> None:
    """``cp.reduce.async.bulk.tensor`` (add, max, xor; float32, bfloat16 rounded once per
    element, int32) into a map the caller encoded for the CPU array, twice, at a shape no box
    divides."""
    from tvm_backend_cuda.runtime import encode_tiled_tensor_map

    rows, cols, box = 40, 24, 16
    ex = _emulated(_tma_reduce_kernel(op, dtype, rows, cols, box))
    rng = np.random.default_rng(5)
    npt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    if dtype == "int32":
        a, b = (rng.integers(0, 1 << 20, (rows, cols)).astype(npt) for _ in range(2))
    else:
        a, b = (rng.standard_normal((rows, cols)).astype(npt) for _ in range(2))
    want = b.copy()
    combine = {"add": np.add, "max": np.maximum, "xor": np.bitwise_xor}[op]
    for _ in range(2):
        if dtype == "bfloat16":  # one rounding per element per reduction, as the GPU's
            want = combine(want.astype(np.float32), a.astype(np.float32)).astype(npt)
        else:
            want = combine(want, a)
    tm = encode_tiled_tensor_map(b.ctypes.data, b.shape, (cols, 1), dtype, (box, box), 0,
                                 emulated=True)
    ex(a, tm)
    ex(a, tm)
    np.testing.assert_array_equal(b, want)


def test_tma_reductions_the_emulator_lacks_are_named() -> None:
    from tvm.error import NotModelledError

    with pytest.raises(NotModelledError,
                       match=r"shared_to_global_reduce with \.inc: the CUDA emulator does not"):
        _emulated(_tma_reduce_kernel("inc", "uint32", 32, 32, 16))


def _tma_expecting(extra_bytes: int, rows: int = 64, cols: int = 64, box: int = 32) -> Any:
    """B = A + 1 through one TMA load per CTA whose mbarrier expects ``extra_bytes`` more than
    the box brings."""
    from tvm.script import tirx as T

    nbytes = box * box * 4

    @T.prim_func
    def tma_expect(TM: T.TensorMap, B: T.Buffer((rows, cols), "float32")):
        T.device_entry()
        bx, by = T.cta_id([cols // box, rows // box])
        tx = T.thread_id([128])
        tile = T.alloc_buffer((box, box), "float32", scope="shared.dyn", align=128)
        bar = T.alloc_buffer((1,), "uint64", scope="shared.dyn", align=8)
        if tx == 0:
            T.ptx.mbarrier.init(bar[0], 1)
            T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.mbarrier.arrive.expect_tx(bar[0], nbytes + extra_bytes)
            T.ptx.cp_async.bulk.tensor.g2c(2, tile[0, 0], bar[0], TM, 0, 1, "", bx * box,
                                           by * box)
        T.ptx.mbarrier.try_wait(bar[0], 0)
        for i in T.serial(box * box // 128):
            B[by * box + (i * 128 + tx) // box, bx * box + (i * 128 + tx) % box] = \
                tile[(i * 128 + tx) // box, (i * 128 + tx) % box] + T.float32(1)

    return tma_expect


def test_mbarrier_expecting_more_bytes_than_arrive_is_a_deadlock_report() -> None:
    """A planted bug: the mbarrier expects 16 bytes more than the TMA load completes. The
    emulator reports the blocked threads with the barrier's phase and pending bytes instead of
    hanging; with the right count the same kernel runs."""
    from tvm.error import DeadlockError
    from tvm_backend_cuda.runtime import encode_tiled_tensor_map

    a = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    tm = encode_tiled_tensor_map(a.ctypes.data, a.shape, (64, 1), "float32", (32, 32), 0,
                                 emulated=True)
    b = np.zeros_like(a)
    _emulated(_tma_expecting(0))(tm, b)
    np.testing.assert_array_equal(b, a + np.float32(1))
    with pytest.raises(DeadlockError) as info:
        _emulated(_tma_expecting(16))(tm, b)
    msg = str(info.value)
    assert "kernel 'tma_expect_kernel'" in msg and "deadlock" in msg
    assert "waiting on the mbarrier at shared address" in msg
    assert "phase 0: 0 of 1 arrivals pending, 16 transaction bytes expected" in msg


def _wgmma_reading(order: str, out: str, k: int = 32) -> Any:
    """D (64x8) = A (64xk) @ Bt (8xk)^T with k/16 wgmma.m64n8k16 (operands in shared memory,
    the no-swizzle K-major layout), the accumulators stored as ``out`` ``"wait, read"`` (right),
    ``"read, wait"`` or ``"read"`` (no wait at all)."""
    from tvm.script import tirx as T

    kc = k // 8
    wait_first = order == "wait, read"
    wait_after = order == "read, wait"

    @T.prim_func
    def wgmma_read(A: T.Buffer((64, k), "float16"), Bt: T.Buffer((8, k), "float16"),
                   D: T.Buffer((64, 8), out)):
        T.device_entry()
        tx = T.thread_id([128])
        As = T.alloc_buffer((64 * k,), "float16", scope="shared.dyn", align=128)
        Bs = T.alloc_buffer((8 * k,), "float16", scope="shared.dyn", align=128)
        desc = T.alloc_buffer((2,), "uint64", scope="local")
        acc = T.alloc_buffer((4,), "float32", scope="local")
        for i in T.serial(64 * k // 128):
            As[(((i * 128 + tx) // k) // 8 * kc + ((i * 128 + tx) % k) // 8) * 64
               + ((i * 128 + tx) // k) % 8 * 8 + (i * 128 + tx) % 8] = \
                A[(i * 128 + tx) // k, (i * 128 + tx) % k]
        for i in T.serial(8 * k // 128):
            Bs[((i * 128 + tx) % k) // 8 * 64 + ((i * 128 + tx) // k) * 8 + (i * 128 + tx) % 8] = \
                Bt[(i * 128 + tx) // k, (i * 128 + tx) % k]
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        T.ptx.wgmma.fence()
        for kk in T.unroll(k // 16):
            T.ptx.wgmma.encode_matrix_descriptor(desc[0], As[kk * 128], 8, kc * 8, 0)
            T.ptx.wgmma.encode_matrix_descriptor(desc[1], Bs[kk * 128], 8, kc * 8, 0)
            T.ptx.wgmma.mma_async.ss(desc[0], desc[1], acc[0], acc[1], acc[2], acc[3],
                                     M=64, N=8, K=16, in_dtype="f16", out_dtype="f32",
                                     transA=False, transB=False, scaleA=1.0, scaleB=1.0,
                                     scaleD=kk)
        T.ptx.wgmma.commit_group()
        if wait_first:
            T.ptx.wgmma.wait_group(0)
        w, lane = tx // 32, tx % 32
        for i in T.unroll(4):
            D[16 * w + 8 * (i // 2) + lane // 4, 2 * (lane % 4) + i % 2] = T.Cast(out, acc[i])
        if wait_after:
            T.ptx.wgmma.wait_group(0)

    return wgmma_read


@pytest.mark.parametrize("out", ["float32", "float16"])
@pytest.mark.parametrize("order", ["wait, read", "read, wait", "read"])
def test_wgmma_accumulator_read_before_its_wait_is_reported(order: str, out: str) -> None:
    """A planted bug: the epilogue reads the accumulators before ``wgmma.wait_group``. Until the
    wait, the emulator keeps the result aside and the registers hold a placeholder; its value
    reaching a conversion (float16) or global memory (float32), or a thread ending with the
    wgmma in flight, is an error naming the read, not a wrong number."""
    from tvm.error import EmulatorError

    rng = np.random.default_rng(4)
    a = rng.standard_normal((64, 32)).astype(np.float16)
    bt = rng.standard_normal((8, 32)).astype(np.float16)
    d = np.zeros((64, 8), out)
    ex = _emulated(_wgmma_reading(order, out))
    if order == "wait, read":
        ex(a, bt, d)
        want = a.astype(np.float32) @ bt.astype(np.float32).T
        np.testing.assert_allclose(d.astype(np.float32), want, rtol=1e-3, atol=1e-2)
        return
    with pytest.raises(EmulatorError, match="wgmma accumulator was read before its "
                                             "wgmma.wait_group|wgmma accumulators in flight"):
        ex(a, bt, d)
