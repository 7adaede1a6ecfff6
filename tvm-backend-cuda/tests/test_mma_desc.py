"""Shared-memory matrix descriptors of gemm_async (wgmma / tcgen05): the seed's contiguous-axis
slicing rule, its error texts, and descriptor fields checked against values derived by hand.

Hand derivation for the seed's case (M = N = 128, K_alloc = 64, float16, 128-byte swizzle): a
swizzle atom is 8 rows x 128 bytes = 1024 bytes, atoms stacked along M, so the stride byte offset
(between 8-row groups) is 1024 (encoded 1024 >> 4 = 64); swizzled K-major layouts do not use the
leading byte offset (encoded 1, 16 bytes, as CUTLASS does). The K step of an f16 MMA is 16
elements = 32 bytes, so the i-th step of a slice starting at column k_lo starts at byte
2 * k_lo + 32 * i of row 0, which is inside the first atom for every slice of the seed's test.
"""

from __future__ import annotations

from typing import Any

import pytest

from tvm.ir import Buffer, BufferRegion, Range, Var, const
from tvm.ir.layout import TileLayout
from tvm_backend_cuda.dispatch import mma_desc
from tvm_backend_cuda.dispatch.mma_desc import MatrixDesc, plan_operand
from tvm_backend_cuda.dispatch.tma_utils import mma_shared_layout


def smem(name: str, shape: list[int], dtype: str = "float16", swizzle: int = 128) -> Buffer:
    """A shared buffer laid out by ``mma_shared_layout`` (the ``[8, W]`` atom tiled over the
    last two axes, column blocks outermost: what TMA writes and ``SMEMPool.alloc_mma`` gives)."""
    mode = {0: "none", 32: "32B", 64: "64B", 128: "128B"}[swizzle]
    return Buffer(name, shape, dtype, scope="shared.dyn",
                  layout=mma_shared_layout(dtype, mode, shape), align=1024)


def region(buf: Buffer, *ranges: tuple[Any, int]) -> BufferRegion:
    return BufferRegion(buf, [Range(lo, ext) for lo, ext in ranges])


def core_matrix_layout(rows: int, cols: int) -> TileLayout:
    """No-swizzle K-major: core matrices of 8 rows x 8 halves (128 contiguous bytes), the core
    matrix (r/8, c/8) at ((r/8) * (cols/8) + c/8) * 64 elements (as test_gpu_dsl_kernels)."""
    from tvm.ir.layout import S

    return TileLayout(S[(rows // 8, 8, cols // 8, 8):(cols * 8, 8, 64, 1)])


# -- the seed's parametrisation ---------------------------------------------------------------------
SEED_SLICES = [(0, 16), (0, 32), (16, 32), (16, 48), (32, 64)]


@pytest.mark.parametrize(("k_lo", "k_hi"), SEED_SLICES)
def test_contiguous_kslice_partial_k_descriptors(k_lo: int, k_hi: int) -> None:
    """M = N = 128, K_alloc = 64, float16, 128B swizzle: A[0:128, lo:hi], B[0:128, lo:hi]."""
    A = smem("A", [128, 64])
    B = smem("B", [128, 64])
    steps = (k_hi - k_lo) // 16
    for buf, mma_mn in ((A, 128), (B, 128), (A, 64)):  # tcgen05 M=128, wgmma A tiles of 64 rows
        plan = plan_operand(region(buf, (0, 128), (k_lo, k_hi - k_lo)), transposed=False,
                            mma_mn=mma_mn, mma_k=16)
        assert plan.desc == MatrixDesc(swizzle=128, mn_major=False, lbo=16, sbo=1024)
        assert (plan.mn, plan.k) == (128, k_hi - k_lo)
        # the region starts at row 0, column k_lo: byte 2 * k_lo of the buffer
        want = {(t, i): t * mma_mn * 128 + 32 * i for t in range(128 // mma_mn)
                for i in range(steps)}
        assert plan.offsets == want
    # encoded descriptors (start address 0): SBO 64 in bits 32-45, LBO 1 in bits 16-29
    d = MatrixDesc(128, False, 16, 1024)
    assert d.wgmma_bits() == (1 << 62) | (64 << 32) | (1 << 16)
    assert d.tcgen05_bits() == (2 << 61) | (1 << 46) | (64 << 32) | (1 << 16)


def test_sub_atom_slice_start_must_be_16_byte_aligned() -> None:
    A = smem("A", [128, 64])
    with pytest.raises(ValueError) as err:
        plan_operand(region(A, (0, 128), (4, 16)), transposed=False, mma_mn=128, mma_k=16)
    assert str(err.value) == (
        "gemm_async: contiguous-axis slice start 4 is not 16B-aligned (=8 elements, dtype "
        "float16). A sub-atom contiguous slice must start on a 16B boundary; otherwise keep that "
        "axis full and split on a stride/outer axis instead (lay the operand out MN-major).")
    F = smem("F", [128, 128], "float8_e4m3fn")
    with pytest.raises(ValueError, match=r"slice start 8 is not 16B-aligned \(=16 elements, "
                                         r"dtype float8_e4m3fn\)"):
        plan_operand(region(F, (0, 128), (8, 32)), transposed=False, mma_mn=128, mma_k=32)


def test_region_that_tiles_no_atom() -> None:
    # plain row-major: no atom tiles 128-byte rows, and the buffer has no physical swizzle
    P = Buffer("P", [128, 64], "float16", scope="shared.dyn")
    with pytest.raises(ValueError) as err:
        plan_operand(region(P, (0, 128), (0, 64)), transposed=False, mma_mn=128, mma_k=16)
    assert str(err.value) == ("gemm_async: no MMA SMEM descriptor matches region shape [128, 64] "
                              "for dtype float16.")
    # swizzled, but the rows start inside an atom: the hint names the physical swizzle
    A = smem("A", [128, 64])
    with pytest.raises(ValueError) as err:
        plan_operand(region(A, (4, 64), (0, 64)), transposed=False, mma_mn=64, mma_k=16)
    assert str(err.value) == (
        "gemm_async: no MMA SMEM descriptor matches region shape [64, 64] for dtype float16. The "
        "buffer is physically SWIZZLE_128B_ATOM-swizzled (contiguous atom = 64 elements / 128 B); "
        "the region's layout does not tile it.")


def test_k_step_straddling_an_atom_is_refused() -> None:
    # 16B-aligned sub-atom start (the seed accepts it), but the 2nd K step would run from byte
    # 112 to 144 of a 128-byte atom row: refused instead of mis-addressed
    A = smem("A", [128, 128])
    with pytest.raises(ValueError, match="not addressable by one SWIZZLE_128B_ATOM K-major "
                                         "descriptor"):
        plan_operand(region(A, (0, 128), (40, 32)), transposed=False, mma_mn=128, mma_k=16)


@pytest.mark.parametrize("swizzle", [128, 64, 32])
def test_k_major_swizzles_and_multi_atom_k(swizzle: int) -> None:
    """K = 128 halves spans 256 / swizzle atoms along K: atom j of K starts after all M atoms."""
    A = smem("A", [64, 128], swizzle=swizzle)
    plan = plan_operand(region(A, (0, 64), (0, 128)), transposed=False, mma_mn=64, mma_k=16)
    atom = 8 * swizzle
    assert plan.desc == MatrixDesc(swizzle, False, 16, atom)
    w = swizzle // 2  # halves per atom row
    for i in range(8):
        k0 = 16 * i
        assert plan.offsets[(0, i)] == (k0 // w) * 8 * atom + (k0 % w) * 2


@pytest.mark.parametrize("swizzle", [128, 64, 32])
def test_mn_major_swizzled(swizzle: int) -> None:
    """B stored [K, N] with N contiguous (transposed): LBO = MN atom step, SBO = 8 K rows."""
    K, N = 64, 128
    B = smem("B", [K, N], swizzle=swizzle)  # atoms [8, W] along N, stacked along K
    plan = plan_operand(region(B, (0, K), (0, N)), transposed=True, mma_mn=N, mma_k=16)
    w = swizzle // 2
    atom = 8 * swizzle
    assert plan.desc == MatrixDesc(swizzle, True, lbo=(K // 8) * atom, sbo=atom)
    assert plan.offsets == {(0, i): 2 * i * atom for i in range(K // 16)}
    assert w * (N // w) == N


def test_no_swizzle_core_matrices() -> None:
    A = Buffer("A", [64, 32], "float16", scope="shared.dyn", layout=core_matrix_layout(64, 32))
    plan = plan_operand(region(A, (0, 64), (0, 32)), transposed=False, mma_mn=64, mma_k=16)
    # the values test_gpu_dsl_kernels.wgmma_tile passes by hand: LBO 128, SBO (k/8) * 128
    assert plan.desc == MatrixDesc(0, False, 128, 4 * 128)
    assert plan.offsets == {(0, 0): 0, (0, 1): 256}


def test_symbolic_stage_and_row_start() -> None:
    """As[stage, 64 * wg : +64, 0:64] of a 4-stage ring: offsets checked for every stage/wg."""
    A = smem("A", [4, 128, 64], "bfloat16")
    stage, wg = Var("stage", "int32"), Var("wg", "int32")
    plan = plan_operand(region(A, (stage, 1), (wg * 64, 64), (0, 64)), transposed=False,
                        mma_mn=64, mma_k=16)
    assert plan.desc == MatrixDesc(128, False, 16, 1024)
    assert plan.offsets == {(0, i): 32 * i for i in range(4)}
    # a start that may land inside an atom's rows is refused
    with pytest.raises(ValueError, match="not addressable|no MMA SMEM descriptor"):
        plan_operand(region(A, (stage, 1), (wg * 4, 64), (0, 64)), transposed=False,
                     mma_mn=64, mma_k=16)


def test_known_divisor() -> None:
    v = Var("v", "int32")
    assert mma_desc.known_divisor(v * 64) == 64
    assert mma_desc.known_divisor(v * 64 + 16) == 16
    assert mma_desc.known_divisor(const(0, "int32")) % 1024 == 0
    assert mma_desc.known_divisor(v) == 1


def test_physical_swizzle_detection() -> None:
    for sw in (128, 64, 32):
        assert mma_desc.physical_swizzle(smem("X", [64, 64], swizzle=sw)) == sw
    assert mma_desc.physical_swizzle(Buffer("P", [64, 64], "float16", scope="shared")) is None
