"""CI (no GPU) tests of the CUDA dispatch variants of issue 12 and of ``tvm_backend_cuda.lang``.

- every variant kernel of ``lang_kernels.py`` dispatches to its variant, compiles with NVRTC
  for its archs (sm_80 where it applies, sm_90a, sm_100a), and its printed form (before and
  after dispatch) parses back to an equal function;
- the register / shared-memory ones run on the CPU emulator against numpy;
- each variant's decline reasons (forced with ``dispatch=``) name what does not fit;
- the swizzled layouts give the offsets worked out by hand here;
- the lang helpers' errors say what is wrong.
"""

from __future__ import annotations

import re
from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.ir import structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.operator.tile_primitive import lower_tile_primitives
from tvm_backend_cuda.plugin import register_backend

register_backend()

from cta_emulator import run_kernel  # noqa: E402 - after the backend is loaded
from lang_kernels import VARIANT_KERNELS, VariantKernel  # noqa: E402

ARCH_CASES = [(k, a) for k in VARIANT_KERNELS for a in k.archs]


def _target(arch: str) -> Any:
    return tvm.target.Target({"kind": "cuda", "arch": arch})


@pytest.mark.parametrize("kernel, arch", ARCH_CASES, ids=[f"{k.name}-{a}" for k, a in ARCH_CASES])
def test_variant_kernel_dispatches_and_compiles(kernel: VariantKernel, arch: str) -> None:
    func = kernel.build()
    trace: list[tuple[str, str, str]] = []
    lower_tile_primitives(func, _target(arch), trace=trace)
    op, variant = kernel.variant
    assert (f"tirx.tile.{op}", variant) in {(o, v) for o, _, v in trace}, trace
    ex = tvm.compile(func, target=_target(arch))
    assert ex.cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("kernel", VARIANT_KERNELS, ids=[k.name for k in VARIANT_KERNELS])
def test_variant_kernel_round_trips(kernel: VariantKernel) -> None:
    func = kernel.build()
    assert structural_equal(from_source(func.script()), func)
    lowered = lower_tile_primitives(func, _target(kernel.archs[-1]))
    assert structural_equal(from_source(lowered.script()), lowered)


EMULATED = [k for k in VARIANT_KERNELS if k.emulate]


@pytest.mark.parametrize("kernel", EMULATED, ids=[k.name for k in EMULATED])
def test_variant_kernel_on_the_emulator(kernel: VariantKernel) -> None:
    args = kernel.inputs(np.random.default_rng(7))
    run_kernel(kernel.build(), args)
    want = kernel.reference(*args)
    got = args[-1].astype(np.float64)
    written = ~np.isnan(want)
    assert not np.isnan(got[written]).any(), "elements left unwritten"
    np.testing.assert_allclose(got[written], want[written], rtol=kernel.rtol, atol=1e-6)


def test_vector_accesses_are_16_bytes_in_ptx() -> None:
    from lang_kernels import copy_reg_kernel

    ex = tvm.compile(copy_reg_kernel(4, 1024, "bfloat16"), target=_target("sm_90a"))
    ptx = ex.inspect_source("ptx")
    assert "ld.global.nc.v4.u32" in ptx and "st.global.v4.u32" in ptx
    assert ".local" not in ptx  # the register tile stays in registers
    assert ex.meta["kernels"]["copy_reg_kernel"]["vector_align"] == {"A": 16, "B": 16}


def test_permute_layout_uses_xor_shuffles_and_lane_selects() -> None:
    from lang_kernels import permute_kernel

    src = tvm.compile(permute_kernel(), target=_target("sm_90a")).inspect_source()
    assert "__shfl_xor_sync(4294967295U" in src
    assert re.search(r"\(\(\d+U >> \(\(unsigned int\)", src) or ">>" in src


# -- decline reasons -----------------------------------------------------------------------------


def _dispatch_error(func: Any, arch: str = "sm_90a") -> str:
    with pytest.raises(RuntimeError) as info:
        lower_tile_primitives(func, _target(arch))
    return str(info.value)


@no_type_check
def test_reg_declines_without_registers() -> None:
    @T.prim_func
    def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        tx = T.thread_id([64])  # noqa: F841
        Tx.cta.copy(B, A, dispatch="reg")

    msg = _dispatch_error(k)
    assert "predicate 'operands': neither side is in registers (global -> global)" in msg


@no_type_check
def test_gmem_smem_declines_a_conversion() -> None:
    @T.prim_func
    def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "bfloat16")):
        T.device_entry()
        tx = T.thread_id([64])  # noqa: F841
        S = T.alloc_buffer((64,), "bfloat16", scope="shared")
        Tx.cta.copy(S, A, dispatch="gmem_smem")
        Tx.cta.copy(B, S)

    assert "converts float32 -> bfloat16 (gmem_smem copies bytes)" in _dispatch_error(k)


@no_type_check
def test_tma_load_needs_an_mbarrier_and_sm90() -> None:
    @T.prim_func
    def k(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        T.device_entry()
        tx = T.thread_id([128])  # noqa: F841
        S = T.alloc_buffer((64, 64), "float32", scope="shared.dyn", align=128)
        Tx.cta.copy_async(S, A, dispatch="tma")
        Tx.cta.copy(B, S)

    msg = _dispatch_error(k)
    assert "a TMA load completes on an mbarrier: pass config={'mbar': bar[stage]}" in msg
    assert ("TMA needs sm_90 or newer; the target's arch is sm_80 (compile with "
            "target={'kind': 'cuda', 'arch': 'sm_90a'} or target='nvidia/nvidia-h100')"
            ) in _dispatch_error(k, "sm_80")


@no_type_check
def test_ldgsts_declines_a_tma_style_call_and_local_memory() -> None:
    @T.prim_func
    def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        tx = T.thread_id([64])  # noqa: F841
        r = T.alloc_buffer((64,), "float32", scope="local")
        Tx.thread.copy_async(r, A, dispatch="ldgsts")
        Tx.thread.copy(B, r)

    assert "copies global -> local; cp.async moves global -> shared" in _dispatch_error(k)


@no_type_check
def test_dsmem_names_its_config() -> None:
    @T.prim_func
    def k(A: T.Buffer((64,), "float32")):
        T.device_entry()
        tx = T.thread_id([64])  # noqa: F841
        S = T.alloc_buffer((64,), "float32", scope="shared")
        R = T.alloc_buffer((64,), "float32", scope="shared")
        Tx.cta.copy(S, A)
        Tx.cta.copy_async(R, S, dispatch="dsmem")

    assert "dsmem needs config['remote_cta_id']" in _dispatch_error(k)


@no_type_check
def test_tmem_variants_decline_before_sm100() -> None:
    from lang_kernels import tmem_kernel

    msg = _dispatch_error(tmem_kernel(), "sm_90a")
    assert "tcgen05 needs sm_100 or newer; the target's arch is sm_90a" in msg


@no_type_check
def test_elementwise_variants_say_which_operand_is_where() -> None:
    @T.prim_func
    def k(A: T.Buffer((64,), "float32")):
        T.device_entry()
        tx = T.thread_id([64])  # noqa: F841
        S = T.alloc_buffer((64,), "float32", scope="shared")
        Tx.cta.add(S, A, A, dispatch="reg")

    assert "S is in 'shared' memory (reg needs all local)" in _dispatch_error(k)

    @T.prim_func
    def k2(A: T.Buffer((64,), "float32")):
        T.device_entry()
        tx = T.thread_id([64])  # noqa: F841
        S = T.alloc_buffer((64,), "float32", scope="shared")
        Tx.cta.add(S, A, S, dispatch="smem")

    assert "A is in 'global' memory (smem needs all shared)" in _dispatch_error(k2)


@no_type_check
def test_local_reduction_declines_a_private_source() -> None:
    @T.prim_func
    def k(A: T.Buffer((8,), "float32")):
        T.device_entry()
        tx = T.thread_id([32])  # noqa: F841
        r = T.alloc_buffer((8,), "float32", scope="local")
        s = T.alloc_buffer((1,), "float32", scope="local")
        Tx.warp.sum(s, r, dispatch="local")
        A[0] = s[0]

    assert "src is private to each thread" in _dispatch_error(k)


@no_type_check
def test_ldstmatrix_needs_registers_spread_over_threads() -> None:
    @T.prim_func
    def k(A: T.Buffer((16, 16), "float16")):
        T.device_entry()
        tx = T.thread_id([32])  # noqa: F841
        S = T.alloc_buffer((16, 16), "float16", scope="shared")
        r = T.alloc_buffer((16, 16), "float16", scope="local")
        Tx.warp.copy(r, S, dispatch="ldstmatrix")
        A[0, 0] = r[0, 0]

    assert "r is not spread over the threads by its layout" in _dispatch_error(k)


@no_type_check
def test_permute_layout_declines_a_cta_scope() -> None:
    lay = T.TileLayout(T.S[(32, 2):(1 @ T.laneid, 1)])

    @T.prim_func
    def k(A: T.Buffer((32, 2), "float32")):
        T.device_entry()
        tx = T.thread_id([32])  # noqa: F841
        r = T.alloc_buffer((32, 2), "float32", scope="local", layout=lay)
        s = T.alloc_buffer((32, 2), "float32", scope="local", layout=lay)
        Tx.cta.permute_layout(s, r, dispatch="warp_xor_swizzle")
        A[0, 0] = s[0, 0]

    assert "scope cta (warp_xor_swizzle exchanges within a warp)" in _dispatch_error(k)


# -- swizzled layouts ----------------------------------------------------------------------------


def test_mma_shared_layout_offsets_by_hand() -> None:
    from tvm_backend_cuda.dispatch.tma_utils import (
        SwizzleMode,
        get_swizzle_mode_from_layout,
        mma_atom_shape,
        mma_shared_layout,
        tma_box,
    )

    lay = mma_shared_layout("bfloat16", SwizzleMode.SWIZZLE_128B_ATOM, (16, 128))
    assert mma_atom_shape("bfloat16", "128B") == [8, 64]
    assert mma_atom_shape("float32", "64B") == [8, 16]

    def off(r: int, c: int) -> int:
        return lay.apply([r, c], [16, 128])["m"].value

    # row 0: no swizzle; element (r, c) of column block c // 64 starts at (c // 64) * 16 * 64
    assert off(0, 0) == 0 and off(0, 9) == 9
    # row 1 of the atom: the 16-byte chunk index (c // 8) XORs with 1
    assert off(1, 0) == 64 + 8 and off(1, 8) == 64 + 0 and off(1, 9) == 64 + 1
    # row 5, chunk 2 -> chunk 2 ^ 5 = 7
    assert off(5, 16) == 5 * 64 + 7 * 8
    # the second column block, row 3, chunk 1 -> chunk 1 ^ 3 = 2
    assert off(3, 64 + 8) == 16 * 64 + 3 * 64 + 2 * 8
    assert get_swizzle_mode_from_layout(lay) is SwizzleMode.SWIZZLE_128B_ATOM
    assert get_swizzle_mode_from_layout(
        mma_shared_layout("float16", "32B", (8, 16))) is SwizzleMode.SWIZZLE_32B_ATOM
    assert get_swizzle_mode_from_layout(None) is SwizzleMode.SWIZZLE_NONE
    assert tma_box((64, 128), "bfloat16", "128B") == [64, 64]
    assert tma_box((64, 128), "bfloat16", "none") == [64, 128]


def test_swizzled_layout_prints_and_parses_back() -> None:
    from tvm_backend_cuda.dispatch.tma_utils import mma_shared_layout

    lay = mma_shared_layout("float16", "64B", (2, 16, 64))
    text = lay.script() if hasattr(lay, "script") else repr(lay)
    assert "T.SwizzleLayout(per_element=3, swizzle_len=2, atom_len=3)" in text

    @T.prim_func
    def k(A: T.Buffer((2, 16, 64), "float16", layout=lay)):
        A[0, 0, 0] = T.float16(1)

    assert structural_equal(from_source(k.script()), k)


def test_swizzle_mode_errors() -> None:
    from tvm_backend_cuda.dispatch.tma_utils import SwizzleMode, mma_shared_layout

    with pytest.raises(ValueError, match="unknown swizzle mode 'wide'"):
        SwizzleMode.parse("wide")
    with pytest.raises(ValueError, match=r"shape \[12, 64\] does not tile the SWIZZLE_128B_ATOM "
                                         r"atom \[8, 64\] of bfloat16"):
        mma_shared_layout("bfloat16", "128B", (12, 64))


@no_type_check
def test_cta_register_reduction_barriers_depend_on_loops() -> None:
    """One barrier after the per-warp partials; a second (before the scratch is written again)
    only when the call sits in a loop and so runs again."""
    lay = T.TileLayout(T.S[(2, 128, 4):(4, 1 @ T.tid, 1)])

    @T.prim_func
    def once(A: T.Buffer((1024,), "float32"), S: T.Buffer((1,), "float32")):
        T.device_entry()
        tx = T.thread_id([128])  # noqa: F841
        r = T.alloc_buffer((1024,), "float32", scope="local", layout=lay)
        s = T.alloc_buffer((1,), "float32", scope="local")
        Tx.cta.copy(r, A)
        Tx.cta.sum(s, r)
        S[0] = s[0]

    @T.prim_func
    def looped(A: T.Buffer((4, 1024), "float32"), S: T.Buffer((4,), "float32")):
        T.device_entry()
        tx = T.thread_id([128])  # noqa: F841
        r = T.alloc_buffer((1024,), "float32", scope="local", layout=lay)
        s = T.alloc_buffer((1,), "float32", scope="local")
        for i in T.serial(4):
            Tx.cta.copy(r, A[i, 0:1024])
            Tx.cta.sum(s, r)
            S[i] = s[0]

    def syncs(f: Any) -> int:
        return tvm.compile(f, target=_target("sm_90a")).inspect_source().count("__syncthreads()")

    assert syncs(once) == 1
    assert syncs(looped) == 2
    args = [np.random.default_rng(3).standard_normal((4, 1024)).astype(np.float32),
            np.full(4, np.nan, np.float32)]
    run_kernel(looped, args)
    np.testing.assert_allclose(args[1], args[0].astype(np.float64).sum(-1), rtol=1e-5)
