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
    ('asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" '
     ':: "r"(a));', "`tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32`"),
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
