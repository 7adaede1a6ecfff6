"""``Tx.gemm_async`` variants ``wgmma`` (sm_90a) and ``tcgen05`` (sm_100a): the generated
instructions and descriptors, the decline reasons, NVRTC compiles of every test kernel for its
arch (CI), and on the H200 (marker ``gpu``) the wgmma variant over every swizzle mode, both
majors of A and B, A from registers, several N, float8. (The GEMM built on it is tested in ``test_kernels_gemm.py``.)
"""

from __future__ import annotations

from typing import Any, no_type_check

import pytest

import tvm
from tvm.ir import DataType
from tvm_backend_cuda.dispatch.gemm_tcgen05 import instr_descriptor
from tvm_backend_cuda.dispatch.gemm_wgmma import wgmma_accumulator_layout
from tvm_backend_cuda.dispatch.tma_utils import mma_shared_layout
from tvm_backend_cuda.plugin import register_backend

register_backend()

SWIZZLES = ("128B", "64B", "32B", "none")


# -- test kernels ----------------------------------------------------------------------------------
@no_type_check
def wgmma_kernel(n: int, swizzle: str = "128B", a_mn: bool = False, b_mn: bool = False,
                 dtype: str = "bfloat16", a_regs: bool = False, dispatch: str | None = None) -> Any:
    """D[64, n] (f32) = A[64, K] @ B[n, K]^T with one ``Tx.wg.gemm_async`` call (K = one
    128-byte row of ``dtype``). A is stored [K, 64] when ``a_mn`` (M contiguous), B [K, n] when
    ``b_mn``; both laid out by ``mma_shared_layout`` with ``swizzle``. ``a_regs``: A in
    registers (the fragment layout). The operands are copied in by plain element loops."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    K = 128 // DataType(dtype).bytes
    a_shape = (K, 64) if a_mn else (64, K)
    b_shape = (K, n) if b_mn else (n, K)
    la = mma_shared_layout(dtype, swizzle, a_shape)
    lb = mma_shared_layout(dtype, swizzle, b_shape)
    ld = wgmma_accumulator_layout(64, n)
    lr = wgmma_accumulator_layout(64, K)
    a_iters = 64 * K // 128
    b_iters = -(-n * K // 128)
    b_elems = n * K
    a_cols, b_cols = a_shape[1], b_shape[1]

    @T.prim_func
    def wgmma_test(A: T.Buffer(a_shape, dtype), B: T.Buffer(b_shape, dtype),
                   D: T.Buffer((64, n), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        As = T.alloc_buffer(a_shape, dtype, scope="shared.dyn", layout=la, align=1024)
        Bs = T.alloc_buffer(b_shape, dtype, scope="shared.dyn", layout=lb, align=1024)
        Ar = T.alloc_buffer((64, K), dtype, scope="local", layout=lr)
        ar = T.decl_buffer((K // 2,), dtype, data=Ar.data, scope="local")
        acc = T.alloc_buffer((64, n), "float32", scope="local", layout=ld)
        regs = T.decl_buffer((n // 2,), "float32", data=acc.data, scope="local")
        if a_regs:
            for e in T.unroll(K // 2):
                ar[e] = A[tx // 32 * 16 + e // 2 % 2 * 8 + tx % 32 // 4,
                          e // 4 * 8 + tx % 4 * 2 + e % 2]
        else:
            for i in T.serial(a_iters):
                As[(i * 128 + tx) // a_cols, (i * 128 + tx) % a_cols] = \
                    A[(i * 128 + tx) // a_cols, (i * 128 + tx) % a_cols]
        for i in T.serial(b_iters):
            if i * 128 + tx < b_elems:
                Bs[(i * 128 + tx) // b_cols, (i * 128 + tx) % b_cols] = \
                    B[(i * 128 + tx) // b_cols, (i * 128 + tx) % b_cols]
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        if a_regs:
            Tx.wg.gemm_async(acc, Ar, Bs, transpose_B=b_mn, accum=False, config={"wait": 0},
                             dispatch=dispatch)
        else:
            Tx.wg.gemm_async(acc, As, Bs, transpose_A=a_mn, transpose_B=b_mn, accum=False,
                             config={"wait": 0}, dispatch=dispatch)
        for r in T.unroll(n // 2):
            D[tx // 32 * 16 + r // 2 % 2 * 8 + tx % 32 // 4, r // 4 * 8 + tx % 4 * 2 + r % 2] = \
                regs[r]

    return wgmma_test


WGMMA_CASES = [
    *[dict(n=n, swizzle=sw) for sw in SWIZZLES for n in (8, 64, 256)],
    *[dict(n=64, swizzle=sw, a_mn=True) for sw in SWIZZLES],
    *[dict(n=n, swizzle=sw, b_mn=True) for sw in SWIZZLES for n in (64, 256)],
    dict(n=128, swizzle="128B", a_mn=True, b_mn=True),
    dict(n=128, swizzle="64B", a_regs=True),
    dict(n=128, swizzle="128B", a_regs=True, b_mn=True),
    dict(n=256, swizzle="128B", dtype="float8_e4m3fn"),
    dict(n=64, swizzle="64B", dtype="float8_e4m3fn"),
    dict(n=96, swizzle="128B", dtype="float16"),
]


def _id(case: dict[str, Any]) -> str:
    parts = [f"n{case['n']}", case["swizzle"]]
    parts += [k for k in ("a_mn", "b_mn", "a_regs") if case.get(k)]
    parts += [case["dtype"]] if "dtype" in case else []
    return "-".join(parts)


def _compile(func: Any, arch: str = "sm_90a") -> Any:
    return tvm.compile(func, target={"kind": "cuda", "arch": arch})


# -- CI: what the wgmma variant generates -------------------------------------------------------
@pytest.mark.parametrize("case", WGMMA_CASES, ids=_id)
def test_wgmma_kernel_compiles_with_nvrtc(case: dict[str, Any]) -> None:
    ex = _compile(wgmma_kernel(**case))
    assert ex.cubin[:4] == b"\x7fELF"
    src = ex.inspect_source()
    dtype = case.get("dtype", "bfloat16")
    t = {"bfloat16": "bf16", "float16": "f16", "float8_e4m3fn": "e4m3"}[dtype]
    k = 32 if dtype.startswith("float8") else 16
    steps = (128 // DataType(dtype).bytes) // k
    mma = f"wgmma.mma_async.sync.aligned.m64n{case['n']}k{k}.f32.{t}.{t}"
    assert src.count(mma) == steps
    assert src.count("wgmma.fence.sync.aligned") == 1
    assert src.count("wgmma.commit_group.sync.aligned") == 1
    assert "wgmma.wait_group.sync.aligned 0" in src


def test_wgmma_descriptor_bits_in_source() -> None:
    """128B swizzle, K-major, 64 rows: layout type 1, SBO 1024 (64), LBO 16 (1): the constant
    part of the descriptor; the 4 K steps add 32 bytes (2 in 16-byte units) each."""
    src = _compile(wgmma_kernel(64)).inspect_source()
    bits = (1 << 62) | (64 << 32) | (1 << 16)
    assert f"{bits}ULL" in src
    for step in (2, 4, 6):
        assert f"wgmma_desc_a + {step}ULL" in src and f"wgmma_desc_b + {step}ULL" in src


def test_wgmma_transpose_flags() -> None:
    src = _compile(wgmma_kernel(128, "128B", a_mn=True, b_mn=True)).inspect_source()
    assert "p, 1, 1, 1, 1;" in src  # scale-a, scale-b, then imm-trans-a, imm-trans-b
    src = _compile(wgmma_kernel(128, "128B", a_regs=True, b_mn=True)).inspect_source()
    assert "p, 1, 1, 1;" in src and "m64n128k16.f32.bf16.bf16" in src


def test_wgmma_declines_say_why() -> None:
    with pytest.raises(RuntimeError) as err:
        _compile(wgmma_kernel(64, dispatch="wgmma"), arch="sm_100a")
    assert ("wgmma needs sm_90a; the target's arch is sm_100a (compile with target={'kind': "
            "'cuda', 'arch': 'sm_90a'} or target='nvidia/nvidia-h100')") in str(err.value)


@no_type_check
def test_wgmma_scope_and_accumulator_layout_are_checked() -> None:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    la = mma_shared_layout("bfloat16", "128B", (64, 64))

    @T.prim_func
    def cta_scope(D: T.Buffer((64, 64), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        As = T.alloc_buffer((64, 64), "bfloat16", scope="shared.dyn", layout=la, align=1024)
        acc = T.alloc_buffer((64, 64), "float32", scope="local")
        Tx.wg.gemm_async(acc, As, As, dispatch="wgmma")
        D[tx % 64, 0] = T.float32(0)

    with pytest.raises(RuntimeError) as err:
        _compile(cta_scope)
    assert "D needs the layout wgmma_accumulator_layout(64, 64)" in str(err.value)


def test_misaligned_slice_error_reaches_the_user() -> None:
    """The seed's ValueError appears in the dispatch table of a forced wgmma call."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    la = mma_shared_layout("float16", "128B", (64, 64))
    ld = wgmma_accumulator_layout(64, 64)

    @no_type_check
    @T.prim_func
    def misaligned(D: T.Buffer((64, 64), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        As = T.alloc_buffer((64, 64), "float16", scope="shared.dyn", layout=la, align=1024)
        acc = T.alloc_buffer((64, 64), "float32", scope="local", layout=ld)
        Tx.wg.gemm_async(acc, As[0:64, 4:20], As[0:64, 4:20], dispatch="wgmma")
        D[tx % 64, 0] = T.float32(0)

    with pytest.raises(RuntimeError) as err:
        _compile(misaligned)
    assert ("ValueError: gemm_async: contiguous-axis slice start 4 is not 16B-aligned (=8 "
            "elements, dtype float16)") in str(err.value)


# -- CI: tcgen05 ----------------------------------------------------------------------------------
@no_type_check
def tcgen05_kslice_kernel(k_lo: int, k_hi: int, n: int = 128, b_plain: bool = False,
                          cta_group: int = 1) -> Any:
    """The seed's test_gemm_tcgen05_contiguous_kslice_partial_k: M = N = 128, K_alloc = 64,
    float16, 128B swizzle; one thread issues ``Tx.gemm_async(tmem[0:128, 0:N],
    A_smem[0:M, k_lo:k_hi], B_smem[0:N, k_lo:k_hi], dispatch="tcgen05")``, commits to an
    mbarrier, and the epilogue warps read the accumulators back with tcgen05.ld. With
    ``cta_group=2`` the CTA pair of a 2-CTA cluster makes one M = 256 MMA: each CTA holds 128
    rows of A and ``n / 2`` rows of B, and its D has all ``n`` columns."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.lang import MBarrier, SMEMPool, TMEMPool

    nb = n // cta_group
    la = mma_shared_layout("float16", "128B", (128, 64))
    lb = None if b_plain else mma_shared_layout("float16", "128B", (nb, 64))

    @T.prim_func
    def kslice(A: T.Buffer((128, 64), "float16"), B: T.Buffer((nb, 64), "float16"),
               D: T.Buffer((128, n), "float32")):
        T.device_entry()
        tx = T.thread_id([128])
        pool = SMEMPool()
        As = pool.alloc((128, 64), "float16", layout=la, align=1024)
        Bs = pool.alloc((nb, 64), "float16", layout=lb, align=1024)
        bar = MBarrier(pool, 1, 1, init_thread=tx == 0)
        tmem = TMEMPool(pool, max(n, 32), warp=tx // 32 == 0, cta_group=cta_group)
        acc = tmem.alloc((128, n), "float32")
        regs = T.alloc_buffer((32,), "float32", scope="local")
        for i in T.serial(64):
            As[i * 2 + tx // 64, tx % 64] = A[i * 2 + tx // 64, tx % 64]
        for i in T.serial(nb // 2):
            Bs[i * 2 + tx // 64, tx % 64] = B[i * 2 + tx // 64, tx % 64]
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.tcgen05.fence.after_thread_sync()
            Tx.gemm_async(acc[0:128, 0:n], As[0:128, k_lo:k_hi], Bs[0:nb, k_lo:k_hi],
                          dispatch="tcgen05", config={"cta_group": cta_group})
            T.ptx.tcgen05.commit(bar[0], cta_group, 0 if cta_group == 1 else 3)
        bar.wait(0, 0)
        T.ptx.tcgen05.fence.after_thread_sync()
        for c in T.serial(n // 32):
            _ld32(tmem.addr, tx // 32 * 32, c * 32, regs)
            T.ptx.tcgen05.wait.ld()
            for j in T.unroll(32):
                D[tx, c * 32 + j] = regs[j]
        T.cuda.cta_sync()
        tmem.dealloc()

    return kslice


def _ld32(addr: Any, lane: Any, col: Any, regs: Any) -> Any:
    from tvm.script import tirx as T

    return T.ptx.tcgen05.ld(addr, lane, col, "32x32b", 32, False, *[regs[i] for i in range(32)])


@pytest.mark.parametrize(("k_lo", "k_hi"), [(0, 16), (0, 32), (16, 32), (16, 48), (32, 64)])
def test_tcgen05_contiguous_kslice_compiles(k_lo: int, k_hi: int) -> None:
    """Compiled for sm_100a; the descriptors start at the slice (2 * k_lo bytes into row 0) and
    the i-th K step adds 32 * i bytes (2 * i in 16-byte units), as derived in test_mma_desc."""
    ex = _compile(tcgen05_kslice_kernel(k_lo, k_hi), "sm_100a")
    src = ex.inspect_source()
    steps = (k_hi - k_lo) // 16
    assert src.count("tcgen05.mma.cta_group::1.kind::f16") == steps
    bits = (2 << 61) | (1 << 46) | (64 << 32) | (1 << 16)  # 128B swizzle, SBO 1024, LBO 16
    assert src.count(f"{bits}ULL") == 2
    for i in range(1, steps):
        assert f"tcgen05_desc_a + {2 * i}ULL" in src and f"tcgen05_desc_b + {2 * i}ULL" in src
    # the region origin: As[0, k_lo] (row 0 is not swizzled: element offset k_lo)
    assert f"&As[{k_lo}]" in src or (k_lo == 0 and "&As[0]" in src), src[:0]


def test_tcgen05_cta_group_2_compiles() -> None:
    """One M = 256 MMA over a CTA pair: ``.cta_group::2`` on the alloc, the MMA (instruction M
    256 in the descriptor, N = 256) and the multicast commit; B's descriptor covers the CTA's
    128 local rows."""
    src = _compile(tcgen05_kslice_kernel(0, 64, n=256, cta_group=2), "sm_100a").inspect_source()
    assert src.count("tcgen05.mma.cta_group::2.kind::f16") == 4
    assert "tcgen05.alloc.cta_group::2" in src
    assert "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast" in src
    idesc = instr_descriptor("float16", 256, 256, False, False)
    assert f"{idesc}U" in src


def test_tcgen05_misaligned_and_non_tiling_slices_raise_the_seed_errors() -> None:
    with pytest.raises(RuntimeError) as err:
        _compile(tcgen05_kslice_kernel(4, 20), "sm_100a")
    assert ("ValueError: gemm_async: contiguous-axis slice start 4 is not 16B-aligned (=8 "
            "elements, dtype float16). A sub-atom contiguous slice must start on a 16B boundary; "
            "otherwise keep that axis full and split on a stride/outer axis instead (lay the "
            "operand out MN-major).") in str(err.value)
    with pytest.raises(RuntimeError) as err:
        _compile(tcgen05_kslice_kernel(0, 64, b_plain=True), "sm_100a")
    assert ("ValueError: gemm_async: no MMA SMEM descriptor matches region shape [128, 64] for "
            "dtype float16.") in str(err.value)


def test_tcgen05_instruction_descriptor_by_hand() -> None:
    # bf16 x bf16 -> f32, M=128, N=256, both K-major: D fmt 1 (bit 4), A/B fmt 1 (bits 7, 10),
    # N>>3 = 32 at bit 17, M>>4 = 8 at bit 24
    assert instr_descriptor("bfloat16", 128, 256, False, False) == \
        (1 << 4) | (1 << 7) | (1 << 10) | (32 << 17) | (8 << 24)
    assert instr_descriptor("float8_e4m3fn", 256, 128, True, False) == \
        (1 << 4) | (1 << 15) | (16 << 17) | (16 << 24)


# -- GPU ------------------------------------------------------------------------------------------
def _torch_dtype(dtype: str) -> Any:
    import torch

    return getattr(torch, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("case", WGMMA_CASES, ids=_id)
def test_wgmma_variant_on_gpu(case: dict[str, Any], device: str) -> None:
    """On the GPU, or under the CUDA emulator (which decodes the same descriptors); the
    operands are torch tensors, so a session without torch (CI's cuda session) skips it and
    the emulate session runs it."""
    torch = pytest.importorskip("torch")

    dtype = case.get("dtype", "bfloat16")
    n, K = case["n"], 128 // DataType(dtype).bytes
    ex = _compile(wgmma_kernel(**case))
    g = torch.Generator(device=device).manual_seed(n)
    a = torch.randn(64, K, device=device, generator=g).to(_torch_dtype(dtype))
    b = torch.randn(n, K, device=device, generator=g).to(_torch_dtype(dtype))
    A = a.T.contiguous() if case.get("a_mn") else a
    B = b.T.contiguous() if case.get("b_mn") else b
    D = torch.full((64, n), float("nan"), device=device)
    ex(A, B, D)
    if device == "cuda":
        torch.cuda.synchronize()
    ref = a.double() @ b.double().T
    err = float((D.double() - ref).norm() / ref.norm())
    # exact products and float32 sums for 16-bit inputs; float8 wgmma accumulates with fewer
    # mantissa bits (seen here: 1.3e-4 on the H200)
    assert err < (1e-3 if dtype.startswith("float8") else 1e-5), err
