"""Hand-written inline PTX under the CUDA emulator (``tvm_backend_cuda.emulator_asm``): each
``asm`` statement becomes calls of the emulator's helpers, line for line, so the emulator's
checks apply to it; an instruction it does not model is an error naming it and its line."""

from __future__ import annotations

import numpy as np
import pytest

from tvm.error import DeadlockError, NotModelledError
from tvm_backend_cuda.emulator_asm import translate
from tvm_backend_cuda.plugin import register_backend

register_backend()


def test_operands_and_lines() -> None:
    src = ('int x;\n  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, '
           '[%2];"\n               : "=r"(b0), "=r"(b1) : "r"(addr));\nint y;')
    out = translate(src)
    assert out.count("\n") == src.count("\n") and out.endswith("int y;")
    assert ("{ ::tvm_cuda_emu::ldmatrix_b16(true, 2, (unsigned)((addr)), (unsigned*)&(b0), "
            "(unsigned*)&(b1)); }") in out


def test_scoped_predicates_and_special_registers() -> None:
    out = translate('asm volatile("{\\n\\t.reg .pred p;\\n\\t'
                    'mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\n\\t'
                    'selp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(done) : "r"(bar), "r"(0) : "memory");')
    assert out == ("{ bool __asm_p; __asm_p = ::tvm_cuda_emu::mbar_test_wait((unsigned)((bar)), "
                   "(unsigned)((0))); (done) = __asm_p ? 1 : 0; }")
    assert translate('asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));') == \
        "{ (n) = ::tvm_cuda_emu::cluster_nctarank(); }"
    # guards, labels and branches stay inside the statement's block
    loop = translate('asm volatile("{\\n.reg .pred p;\\nWAIT:\\n'
                     'mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n@!p bra WAIT;\\n}"'
                     ' :: "r"(bar), "r"(ph) : "memory");')
    assert "__asm_WAIT:; __asm_p = " in loop and "if (!__asm_p) goto __asm_WAIT;" in loop


def test_wgmma_with_its_scale_predicate() -> None:
    out = translate('asm volatile("{\\n.reg .pred p;\\nsetp.ne.b32 p, %6, 0;\\n'
                    'wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, '
                    'p, 1, -1, 0, 1;\\n}" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) '
                    ': "l"(da), "l"(db), "r"(acc));')
    assert "__asm_p = (unsigned)(acc) != (unsigned)0;" in out
    assert ("wgmma_ss<__nv_bfloat16, true>(8, 16, (bool)(0), (bool)(1), 1, -1, (int)(__asm_p), "
            "(unsigned long long)((da)), (unsigned long long)((db)), *(float*)&(d0)") in out


def test_mma_k8_is_translated() -> None:
    # m16n8k8 reads a0, a1 and b0 only: the emulator's m16n8k<In, 8> gets zeros for the rest
    out = translate('asm("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, '
                    '{%4,%5}, {%6}, {%7,%8,%9,%10};" : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3) : '
                    '"r"(a0), "r"(a1), "r"(b0), "f"(c0), "f"(c1), "f"(c2), "f"(c3));')
    assert "mma_m16n8k<__nv_bfloat16, 8>((float*)&(d0), (float*)&(d1), (float*)&(d2), " \
        "(float*)&(d3), (unsigned)((a0)), (unsigned)((a1)), 0u, 0u, (unsigned)((b0)), 0u, " \
        "(float)((c0))" in out


@pytest.mark.parametrize("asm, what", [
    ('asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], 32;" '
     ':: "r"(a));', "`tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], 32` "
     "(cta_group::2"),
    ('asm volatile("tcgen05.shift.cta_group::1.down [%0];" :: "r"(a));',
     "`tcgen05.shift.cta_group::1.down [%0]`"),
    ('asm("mov.u32 %0, %%smid;" : "=r"(s));', "special register %smid"),
    ('asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, '
     '{%8,%9}, {%0,%1,%2,%3};" : "+f"(a), "+f"(b), "+f"(c), "+f"(d) : "r"(e), "r"(f), "r"(g), '
     '"r"(h), "r"(i), "r"(j));',
     "mma.sync.aligned.m16n8k8.row.col.f32.tf32"),
])
def test_what_is_not_modelled_is_named(asm: str, what: str) -> None:
    with pytest.raises(NotModelledError) as info:
        translate("int a;\n\n" + asm)
    msg = str(info.value)
    assert msg.startswith("line 3 of the CUDA source: inline PTX ") and what in msg
    assert "T.ptx intrinsics" in msg


_WAIT_FOREVER = r"""
extern "C" __global__ void wait_forever(float* out, unsigned expected) {
  __shared__ __align__(8) unsigned long long bar;
  unsigned addr = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(addr), "r"(expected));
  __syncthreads();
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(addr) : "memory");
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 "selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(addr) : "memory");
  }
  out[threadIdx.x] = 1.0f;
}
"""


def test_a_planted_mbarrier_deadlock_in_inline_ptx_is_reported() -> None:
    from tvm_backend_cuda.emulator import load_source

    mod = load_source(_WAIT_FOREVER, {"wait_forever": [("out", "ptr"), ("expected", "uint32")]})
    out = np.zeros(32, dtype="float32")
    mod.launch("wait_forever", 1, 32, [out, 32])  # 32 arrivals of 32 expected: phase 0 done
    assert (out == 1).all()
    with pytest.raises(DeadlockError) as info:
        # 32 arrivals, 33 expected: the phase never completes; the emulator says so, at the
        # line of the polling asm statement, instead of spinning
        mod.launch("wait_forever", 1, 32, [out, 33])
    msg = str(info.value)
    assert "kernel 'wait_forever', block (0, 0, 0): deadlock: every thread" in msg
    assert ("thread (0, 0, 0) waiting on the mbarrier at shared address 0 for phase parity 0 "
            "(phase 0: 1 of 33 arrivals pending, 0 transaction bytes expected) (line 11)") in msg


# One warpgroup: thread t stores x = in[t] + j to TMEM lane t, columns j = 0..7 (.32x32b.x8,
# floats as "f" operands), then each warp reads its 16 rows back as .16x256b.x1 (lane l: row
# l / 4 and row l / 4 + 8, columns 2 (l % 4) and + 1). `lane_base` 0 puts every warp's store
# in warp 0's quarter.
_TMEM_ROUNDTRIP = r"""
extern "C" __global__ void tmem_roundtrip(float* out, const float* in, unsigned lane_base) {
  __shared__ unsigned taddr_s;
  const unsigned warp = threadIdx.x / 32;
  if (warp == 0)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;"
                 :: "r"((unsigned)__cvta_generic_to_shared(&taddr_s)));
  __syncthreads();
  const unsigned taddr = taddr_s, lane = lane_base ? warp * 32 : 0;
  float x[8];
  for (int j = 0; j < 8; ++j) x[j] = in[threadIdx.x] + (float)j;
  asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};"
               :: "r"(taddr + (lane << 16)), "f"(x[0]), "f"(x[1]), "f"(x[2]), "f"(x[3]),
                  "f"(x[4]), "f"(x[5]), "f"(x[6]), "f"(x[7]));
  asm volatile("tcgen05.wait::st.sync.aligned;");
  __syncthreads();
  unsigned r0, r1, r2, r3;
  asm volatile("tcgen05.ld.sync.aligned.16x256b.x1.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(taddr + ((warp * 32) << 16)));
  asm volatile("tcgen05.wait::ld.sync.aligned;");
  out[4 * threadIdx.x + 0] = __uint_as_float(r0);
  out[4 * threadIdx.x + 1] = __uint_as_float(r1);
  out[4 * threadIdx.x + 2] = __uint_as_float(r2);
  out[4 * threadIdx.x + 3] = __uint_as_float(r3);
  __syncthreads();
  if (warp == 0)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" :: "r"(taddr));
}
"""


def test_tensor_memory_through_inline_ptx(monkeypatch: pytest.MonkeyPatch) -> None:
    import tvm_backend_cuda.emulator as emulator
    from tvm.error import EmulatorError
    from tvm_backend_cuda.emulator import load_source

    monkeypatch.setattr(emulator, "DEVICE_ARCH", "sm_100a")
    mod = load_source(_TMEM_ROUNDTRIP, {"tmem_roundtrip": [
        ("out", "ptr"), ("in", "ptr"), ("lane_base", "uint32")]})
    x = np.arange(128, dtype="float32") * 10
    tile = x[:, None] + np.arange(8, dtype="float32")  # TMEM lane t, columns 0..7
    out = np.zeros(512, dtype="float32")
    mod.launch("tmem_roundtrip", 1, 128, [out, x, 1])
    got = out.reshape(128, 4)
    for t in range(128):
        w, lane = divmod(t, 32)
        row = 32 * w + lane // 4
        cols = [2 * (lane % 4), 2 * (lane % 4) + 1]
        np.testing.assert_array_equal(got[t], [*tile[row, cols], *tile[row + 8, cols]])
    with pytest.raises(EmulatorError, match=r"thread 32 \(warp 1\) reaches TMEM lane 0, but "
                                            r"warp 1 may access only lanes 32-63"):
        mod.launch("tmem_roundtrip", 1, 128, [out, x, 0])
