"""Small kernels that exercise one CUDA dispatch variant (or ``lang`` helper) each, with the
variant they must dispatch to, a numpy reference, and how far they can be checked without a
GPU: every kernel compiles with NVRTC for its archs on CI (``test_lang_variants.py``), those
marked ``emulate`` also run on the CPU emulator (``cta_emulator.py``), and all run on the GPU
against numpy (``test_gpu_lang.py``, marker ``gpu``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, no_type_check

import numpy as np

from tvm.ir import TileLayout
from tvm.ir.layout import Axis, Iter

__all__ = ["VARIANT_KERNELS", "VariantKernel"]


@dataclass(frozen=True)
class VariantKernel:
    name: str
    variant: tuple[str, str]  # (op, variant) the kernel must dispatch to
    build: Callable[[], Any]
    inputs: Callable[[Any], list[np.ndarray]]  # inputs then the output(s), from an rng
    reference: Callable[..., np.ndarray]  # of the inputs -> the expected last argument
    archs: tuple[str, ...] = ("sm_90a",)
    emulate: bool = True
    tensor_maps: Callable[..., list[Any]] | None = None  # (torch tensors) -> maps, first args
    rtol: float = 1e-5


def _bf16() -> Any:
    import ml_dtypes

    return ml_dtypes.bfloat16


def _rand(rng: Any, shape: tuple[int, ...], dtype: str = "float32") -> np.ndarray:
    a = rng.standard_normal(shape).astype(np.float32)
    return a.astype(_bf16()) if dtype == "bfloat16" else a


def _empty(shape: tuple[int, ...], dtype: str = "float32") -> np.ndarray:
    return np.full(shape, np.nan, dtype=_bf16() if dtype == "bfloat16" else np.float32)


def _f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def _row_layout(chunks: int, threads: int, vec: int, axis: str = "tid") -> TileLayout:
    return TileLayout([Iter(chunks, vec), Iter(threads, 1, Axis.get(axis)), Iter(vec, 1)])


# -- copy: reg ------------------------------------------------------------------------------------


@no_type_check
def copy_reg_kernel(m: int = 4, n: int = 1024, dtype: str = "bfloat16") -> Any:
    """Each CTA loads a row into registers spread over 128 threads (16-byte vectors), doubles
    it there and stores it: copy ``reg`` both ways, elementwise ``reg`` between."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    vec = 8 if dtype == "bfloat16" else 4
    lay = _row_layout(n // (128 * vec), 128, vec)

    @T.prim_func
    def copy_reg(A: T.Buffer((m, n), dtype), B: T.Buffer((m, n), dtype)):
        T.device_entry()
        bx = T.cta_id([m])
        tx = T.thread_id([128])  # noqa: F841 - the CTA size
        r = T.alloc_buffer((n,), "float32", scope="local", layout=lay)
        Tx.cta.copy(r, A[bx, 0:n])
        Tx.cta.mul(r, r, T.float32(2))
        Tx.cta.copy(B[bx, 0:n], r)

    return copy_reg


# -- copy: gmem_smem, with a swizzled shared tile ---------------------------------------------


@no_type_check
def gmem_smem_kernel(rows: int = 64, cols: int = 128) -> Any:
    """A bf16 tile to a 128B-swizzled shared buffer (SMEMPool.alloc_mma) and back."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.lang import SMEMPool

    @T.prim_func
    def gmem_smem(A: T.Buffer((2 * rows, cols), "bfloat16"), B: T.Buffer((2 * rows, cols), "bfloat16")):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([128])  # noqa: F841 - the CTA size
        pool = SMEMPool()
        S = pool.alloc_mma((rows, cols), "bfloat16")
        Tx.cta.copy(S, A[bx * rows:bx * rows + rows, 0:cols])
        Tx.cta.copy(B[bx * rows:bx * rows + rows, 0:cols], S)

    return gmem_smem


# -- elementwise smem, reduction shared ---------------------------------------------------------


@no_type_check
def smem_math_kernel(rows: int = 16, cols: int = 256) -> Any:
    """C = A * B + 1 computed in shared memory (elementwise ``smem``), row sums of C in shared
    memory (reduction ``shared``) written after C's rows."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def smem_math(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows, cols), "float32"),
                  C: T.Buffer((rows + 1, cols), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - one CTA
        tx = T.thread_id([256])  # noqa: F841 - the CTA size
        As = T.alloc_buffer((rows, cols), "float32", scope="shared")
        Bs = T.alloc_buffer((rows, cols), "float32", scope="shared")
        Ss = T.alloc_buffer((rows,), "float32", scope="shared")
        Tx.cta.copy(As, A)
        Tx.cta.copy(Bs, B)
        Tx.cta.mul(As, As, Bs)
        Tx.cta.add(As, As, T.float32(1))
        Tx.cta.sum(Ss, As, axes=-1)
        Tx.cta.copy(C[0:rows, 0:cols], As)
        Tx.cta.copy(C[rows, 0:rows], Ss)

    return smem_math


def _smem_math_ref(a: np.ndarray, b: np.ndarray, _c: np.ndarray) -> np.ndarray:
    c = _f64(a) * _f64(b) + 1
    out = np.full((a.shape[0] + 1, a.shape[1]), np.nan)
    out[:-1] = c
    out[-1, :a.shape[0]] = c.sum(-1)
    return out


# -- ldgsts ------------------------------------------------------------------------------------


@no_type_check
def ldgsts_kernel(rows: int = 32, cols: int = 128) -> Any:
    """cp.async of a tile into shared memory, waited for, then copied out plus one."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def ldgsts(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows, cols), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - one CTA
        tx = T.thread_id([128])  # noqa: F841 - the CTA size
        As = T.alloc_buffer((rows, cols), "float32", scope="shared", align=16)
        Tx.cta.copy_async(As, A, config={"wait": 0})
        Tx.cta.add(As, As, T.float32(1))
        Tx.cta.copy(B, As)

    return ldgsts


# -- ldstmatrix --------------------------------------------------------------------------------


@no_type_check
def ldstmatrix_kernel(rows: int = 16, cols: int = 32) -> Any:
    """A bf16 tile: global -> shared -> registers (ldmatrix) -> * 2 -> shared (stmatrix) ->
    global, by one warp."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.dispatch.copy import ldmatrix_layout

    lay = ldmatrix_layout(rows, cols)

    @T.prim_func
    def ldstmatrix(A: T.Buffer((rows, cols), "bfloat16"), B: T.Buffer((rows, cols), "bfloat16")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - one CTA
        tx = T.thread_id([32])  # noqa: F841 - one warp
        As = T.alloc_buffer((rows, cols), "bfloat16", scope="shared", align=16)
        Bs = T.alloc_buffer((rows, cols), "bfloat16", scope="shared", align=16)
        r = T.alloc_buffer((rows, cols), "bfloat16", scope="local", layout=lay)
        Tx.warp.copy(As, A)
        Tx.warp.copy(r, As)
        Tx.warp.copy(Bs, r)
        Tx.warp.copy(B, Bs)

    return ldstmatrix


# -- permute_layout ---------------------------------------------------------------------------


@no_type_check
def permute_kernel() -> Any:
    """A 32x2 float32 tile held by a warp two ways: row ``l`` in lane ``l`` (registers: the
    two columns), and 2x2 blocks transposed (lane ``2h + c`` holds column ``c`` of rows ``2h``
    and ``2h + 1``): warp_xor_swizzle moves it with XOR-partner shuffles and lane selects."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    lane = Axis.get("laneid")
    by_row = TileLayout([Iter(32, 1, lane), Iter(2, 1)])
    blocked = TileLayout([Iter(16, 2, lane), Iter(2, 1), Iter(2, 1, lane)])

    @T.prim_func
    def permute(A: T.Buffer((32, 2), "float32"), B: T.Buffer((32, 2), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - one CTA
        tx = T.thread_id([32])
        r = T.alloc_buffer((32, 2), "float32", scope="local", layout=by_row)
        s = T.alloc_buffer((32, 2), "float32", scope="local", layout=blocked)
        for c in T.serial(2):
            r[tx, c] = A[tx, c]
        Tx.warp.permute_layout(s, r)
        for b in T.serial(2):
            B[tx // 2 * 2 + b, tx % 2] = s[tx // 2 * 2 + b, tx % 2]

    return permute


# -- TMA (GPU and NVRTC only: tensor maps are encoded on the host) -----------------------------


@no_type_check
def tma_kernel(rows: int = 64, cols: int = 128, swizzle: str = "128B", derived: bool = False
               ) -> Any:
    """A bf16 tile loaded by TMA into a swizzled shared tile (completing on a TMABar), plus one
    in shared memory, stored by TMA. ``derived``: the tensor maps are derived at launch from A
    and B (the function takes ``A, B``); else explicit ``T.TensorMap`` parameters ``TA, TB``
    come first, encoded by the caller."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.dispatch.tma_utils import tma_shared_layout
    from tvm_backend_cuda.lang import SMEMPool, TMABar

    nbytes = rows * cols * 2
    layout = tma_shared_layout("bfloat16", swizzle, (rows, cols))

    if derived:
        @T.prim_func
        def tma_derived(A: T.Buffer((2 * rows, cols), "bfloat16"),
                        B: T.Buffer((2 * rows, cols), "bfloat16")):
            T.device_entry()
            bx = T.cta_id([2])
            tx = T.thread_id([128])
            pool = SMEMPool()
            S = pool.alloc((rows, cols), "bfloat16", layout=layout, align=1024)
            bar = TMABar(pool, 1, init_thread=tx == 0)
            if tx == 0:
                bar.arrive(0, nbytes)
            Tx.cta.copy_async(S, A[bx * rows:bx * rows + rows, 0:cols], dispatch="tma",
                              config={"mbar": bar[0]})
            bar.wait(0, 0)
            Tx.cta.add(S, S, T.float32(1))
            Tx.cta.copy_async(B[bx * rows:bx * rows + rows, 0:cols], S, dispatch="tma")

        return tma_derived

    @T.prim_func
    def tma(TA: T.TensorMap, TB: T.TensorMap, A: T.Buffer((2 * rows, cols), "bfloat16"),
            B: T.Buffer((2 * rows, cols), "bfloat16")):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([128])
        pool = SMEMPool()
        S = pool.alloc((rows, cols), "bfloat16", layout=layout, align=1024)
        bar = TMABar(pool, 1, init_thread=tx == 0)
        if tx == 0:
            bar.arrive(0, nbytes)
        Tx.cta.copy_async(S, A[bx * rows:bx * rows + rows, 0:cols], dispatch="tma",
                          config={"mbar": bar[0], "tensor_map": TA})
        bar.wait(0, 0)
        Tx.cta.add(S, S, T.float32(1))
        Tx.cta.copy_async(B[bx * rows:bx * rows + rows, 0:cols], S, dispatch="tma",
                          config={"tensor_map": TB})

    return tma


def _tma_maps(rows: int = 64, cols: int = 128, swizzle: str = "128B") -> Callable[..., list[Any]]:
    def maps(a: Any, b: Any) -> list[Any]:
        from tvm_backend_cuda.dispatch.tma_utils import encode_tensor_map

        return [encode_tensor_map(a, (rows, cols), swizzle), encode_tensor_map(b, (rows, cols), swizzle)]

    return maps


# -- dsmem (a cluster of two CTAs) ---------------------------------------------------------------


@no_type_check
def dsmem_kernel(n: int = 1024) -> Any:
    """CTA 0 of a cluster of 2 sends its shared copy of A to CTA 1's shared memory; CTA 1
    waits on its barrier and writes it to B."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.lang import SMEMPool, TMABar

    @T.prim_func
    def dsmem(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.device_entry()
        cid = T.cta_id_in_cluster([2])
        cl = T.cluster_id([1])  # noqa: F841 - one cluster
        tx = T.thread_id([128])
        pool = SMEMPool()
        S = pool.alloc((n,), "float32")
        R = pool.alloc((n,), "float32")
        bar = TMABar(pool, 1, init_thread=tx == 0)
        T.cuda.cluster_sync()
        if cid == 1:
            if tx == 0:
                bar.arrive(0, n * 4)
        if cid == 0:
            Tx.cta.copy(S, A)
            Tx.cta.copy_async(R, S, config={"cta_id": 1, "mbar": bar[0]})
        if cid == 1:
            bar.wait(0, 0)
            Tx.cta.copy(B, R)
        T.cuda.cluster_sync()

    return dsmem


# -- tensor memory (sm_100a, compiled only) -------------------------------------------------------


@no_type_check
def tmem_kernel() -> Any:
    """Registers -> TMEM -> registers through tcgen05.st/ld, one warpgroup (sm_100a)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.lang import SMEMPool, TMEMPool

    @T.prim_func
    def tmem(A: T.Buffer((128, 32), "float32"), B: T.Buffer((128, 32), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - one CTA
        tx = T.thread_id([128])
        pool = SMEMPool()
        tm = TMEMPool(pool, 32, warp=tx < 32)
        D = tm.alloc((128, 32), "float32")
        r = T.alloc_buffer((32,), "float32", scope="local")
        for c in T.serial(32):
            r[c] = A[tx, c]
        Tx.warpgroup.copy_async(D[0:128, 0:32], r)
        Tx.warpgroup.copy_async(r, D[0:128, 0:32])
        for c in T.serial(32):
            B[tx, c] = r[c]
        T.cuda.cta_sync()
        tm.dealloc()

    return tmem


def _same(a: np.ndarray, _b: np.ndarray) -> np.ndarray:
    return _f64(a)


VARIANT_KERNELS: list[VariantKernel] = [
    VariantKernel("copy_reg", ("copy", "reg"), copy_reg_kernel,
                  lambda rng: [_rand(rng, (4, 1024), "bfloat16"), _empty((4, 1024), "bfloat16")],
                  lambda a, _b: _f64(a) * 2, archs=("sm_80", "sm_90a", "sm_100a")),
    VariantKernel("gmem_smem_swizzled", ("copy", "gmem_smem"), gmem_smem_kernel,
                  lambda rng: [_rand(rng, (128, 128), "bfloat16"), _empty((128, 128), "bfloat16")],
                  _same, archs=("sm_80", "sm_90a", "sm_100a")),
    VariantKernel("smem_math", ("add", "smem"), smem_math_kernel,
                  lambda rng: [_rand(rng, (16, 256)), _rand(rng, (16, 256)), _empty((17, 256))],
                  _smem_math_ref, archs=("sm_80", "sm_90a", "sm_100a"), rtol=1e-5),
    VariantKernel("ldgsts", ("copy_async", "ldgsts"), ldgsts_kernel,
                  lambda rng: [_rand(rng, (32, 128)), _empty((32, 128))],
                  lambda a, _b: _f64(a) + 1, archs=("sm_80", "sm_90a", "sm_100a")),
    VariantKernel("ldstmatrix", ("copy", "ldstmatrix"), ldstmatrix_kernel,
                  lambda rng: [_rand(rng, (16, 32), "bfloat16"), _empty((16, 32), "bfloat16")],
                  _same, archs=("sm_90a", "sm_100a"), emulate=False),
    VariantKernel("permute_layout", ("permute_layout", "warp_xor_swizzle"), permute_kernel,
                  lambda rng: [_rand(rng, (32, 2)), _empty((32, 2))],
                  _same, archs=("sm_80", "sm_90a", "sm_100a")),
    VariantKernel("tma_128B", ("copy_async", "tma"), tma_kernel,
                  lambda rng: [_rand(rng, (128, 128), "bfloat16"), _empty((128, 128), "bfloat16")],
                  lambda a, _b: _f64(a) + 1, archs=("sm_90a", "sm_100a"), emulate=False,
                  tensor_maps=_tma_maps(), rtol=1e-2),
    VariantKernel("tma_none", ("copy_async", "tma"), lambda: tma_kernel(swizzle="none"),
                  lambda rng: [_rand(rng, (128, 128), "bfloat16"), _empty((128, 128), "bfloat16")],
                  lambda a, _b: _f64(a) + 1, archs=("sm_90a", "sm_100a"), emulate=False,
                  tensor_maps=_tma_maps(swizzle="none"), rtol=1e-2),
    VariantKernel("tma_128B_derived", ("copy_async", "tma"), lambda: tma_kernel(derived=True),
                  lambda rng: [_rand(rng, (128, 128), "bfloat16"), _empty((128, 128), "bfloat16")],
                  lambda a, _b: _f64(a) + 1, archs=("sm_90a", "sm_100a"), emulate=False,
                  rtol=1e-2),
    VariantKernel("dsmem", ("copy_async", "dsmem"), dsmem_kernel,
                  lambda rng: [_rand(rng, (1024,)), _empty((1024,))],
                  _same, archs=("sm_90a", "sm_100a"), emulate=False),
    VariantKernel("tmem", ("copy_async", "tmem<->local"), tmem_kernel,
                  lambda rng: [_rand(rng, (128, 32)), _empty((128, 32))],
                  _same, archs=("sm_100a",), emulate=False),
]
