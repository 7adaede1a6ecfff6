"""mbarrier: init, arrive (local, or on a peer CTA of the cluster), arrive.expect_tx, and the
parity waits. Barriers are 64-bit words in shared memory, given as pointers or 32-bit shared
addresses."""

from __future__ import annotations

from typing import Any

from tvm.ir.expr import Call

from ._base import Emit, asm, helper, smem_addr
from ._base import str_arg as S
from ._spec import intrin


# -- emulation rules (the CPU emulator: emu/tvm_cuda_emu.h, mbar_*) -------------------------------
def _emu_init(call: Call, emit: Emit) -> str:
    bar, count = call.args
    return f"tvm_cuda_emu::mbar_init({smem_addr(emit, bar)}, (unsigned)({emit(count)}))"


def _emu_arrive(call: Call, emit: Emit) -> str:
    bar = smem_addr(emit, call.args[0])
    if len(call.args) > 1:  # on a cluster peer's barrier
        cta, pred = (emit(a) for a in call.args[1:])
        return f"tvm_cuda_emu::mbar_arrive_peer({bar}, (unsigned)({cta}), (unsigned)({pred}))"
    return f"tvm_cuda_emu::mbar_arrive({bar})"


def _emu_arrive_expect_tx(call: Call, emit: Emit) -> str:
    bar = smem_addr(emit, call.args[0])
    if len(call.args) > 2:  # on a cluster peer's barrier
        nbytes, cta, pred = (emit(a) for a in call.args[1:])
        return (f"tvm_cuda_emu::mbar_arrive_expect_tx_peer({bar}, (unsigned)({nbytes}), "
                f"(unsigned)({cta}), (unsigned)({pred}))")
    return (f"(tvm_cuda_emu::mbar_expect_tx({bar}, (unsigned)({emit(call.args[1])})), "
            f"tvm_cuda_emu::mbar_arrive({bar}))")


def _emu_wait(call: Call, emit: Emit) -> str:
    bar, phase = call.args[:2]
    return f"tvm_cuda_emu::mbar_wait({smem_addr(emit, bar)}, (unsigned)({emit(phase)}))"


def _emu_try_wait_once(call: Call, emit: Emit) -> str:
    # a try_wait that suspends until the phase completes: a valid (long) suspension, and a
    # wait the emulator can report as a deadlock when nothing will ever complete it
    return f"({_emu_wait(call, emit)}, 1u)"


def _emu_test_wait(call: Call, emit: Emit) -> str:
    bar, phase = call.args[:2]
    return f"tvm_cuda_emu::mbar_test_wait({smem_addr(emit, bar)}, (unsigned)({emit(phase)}))"


@intrin("ptx.mbarrier.init", "bar, thread_count", min_arch=80, emulate=_emu_init)
def _init(call: Call, emit: Emit) -> str:
    bar, count = call.args
    return asm(
        "mbarrier.init.shared::cta.b64 [%0], %1;",
        inputs=[f'"r"({smem_addr(emit, bar)})', f'"r"((unsigned)({emit(count)}))'],
    )


def _peer(cta_id: Any, pred: Any) -> tuple[Any, ...]:
    if (cta_id is None) != (pred is None):
        raise ValueError("give both cta_id and pred, or neither")
    return () if cta_id is None else (cta_id, pred)


def _arrive_operands(bar: Any, cta_id: Any = None, pred: Any = None) -> tuple[Any, ...]:
    """Arrive on ``bar``; with ``cta_id`` and ``pred``, on that cluster CTA's barrier if pred."""
    return (bar, *_peer(cta_id, pred))


def _arrive_expect_tx_operands(
    bar: Any, byte_count: Any, cta_id: Any = None, pred: Any = None
) -> tuple[Any, ...]:
    """Arrive on ``bar`` expecting ``byte_count`` more bytes of transactions (on a cluster peer's
    barrier with ``cta_id`` and ``pred``)."""
    return (bar, byte_count, *_peer(cta_id, pred))


def _remote(text_local: str, text_remote: str, call: Call, emit: Emit, extra: list[str]) -> str:
    bar = call.args[0]
    n_extra = len(extra)
    if len(call.args) == 1 + n_extra:
        return asm(text_local, inputs=[f'"r"({smem_addr(emit, bar)})', *extra])
    cta_id, pred = call.args[1 + n_extra :]
    ins = [
        f'"r"({smem_addr(emit, bar)})',
        *extra,
        f'"r"((unsigned)({emit(cta_id)}))',
        f'"r"((unsigned)({emit(pred)}))',
    ]
    k = 1 + n_extra
    return asm(
        "{\n.reg .pred p;\n.reg .b32 remote;\n"
        f"setp.ne.u32 p, %{k + 1}, 0;\n@p mapa.shared::cluster.u32 remote, %0, %{k};\n"
        f"@p {text_remote}\n}}",
        inputs=ins,
    )


@intrin("ptx.mbarrier.arrive", _arrive_operands, nargs=(1, 3), min_arch=80,
        emulate=_emu_arrive)
def _arrive(call: Call, emit: Emit) -> str:
    return _remote(
        "mbarrier.arrive.shared::cta.b64 _, [%0];",
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];",
        call,
        emit,
        [],
    )


@intrin("ptx.mbarrier.arrive.expect_tx", _arrive_expect_tx_operands, nargs=(2, 4), min_arch=90,
        emulate=_emu_arrive_expect_tx)
def _arrive_expect_tx(call: Call, emit: Emit) -> str:
    nbytes = f'"r"((unsigned)({emit(call.args[1])}))'
    return _remote(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;",
        "mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [remote], %1;",
        call,
        emit,
        [nbytes],
    )


# try_wait suspends in hardware for a while (sm_90); sm_80 spins on test_wait.
_WAIT = """\
__device__ __forceinline__ unsigned tvm_mbarrier_try_wait_once(unsigned bar, unsigned phase,
                                                               unsigned ticks) {
  unsigned done;
#if __CUDA_ARCH__ >= 900
  asm volatile("{\\n\\t.reg .pred p;\\n\\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;"
               "\\n\\tselp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(done) : "r"(bar), "r"(phase), "r"(ticks)
               : "memory");
#else
  asm volatile("{\\n\\t.reg .pred p;\\n\\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;"
               "\\n\\tselp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(done) : "r"(bar), "r"(phase) : "memory");
#endif
  return done;
}
__device__ __forceinline__ void tvm_mbarrier_wait(unsigned bar, unsigned phase) {
  while (!tvm_mbarrier_try_wait_once(bar, phase, 0x989680u)) {
  }
}"""


@intrin("ptx.mbarrier.try_wait", "bar, phase", min_arch=80, emulate=_emu_wait)
def _try_wait(call: Call, emit: Emit) -> str:
    helper(emit, "tvm_mbarrier_wait", _WAIT)
    bar, phase = call.args
    return f"tvm_mbarrier_wait({smem_addr(emit, bar)}, (unsigned)({emit(phase)}))"


@intrin("ptx.mbarrier.try_wait_once", "bar, phase, ticks", dtype="uint32", min_arch=80,
        emulate=_emu_try_wait_once)
def _try_wait_once(call: Call, emit: Emit) -> str:
    helper(emit, "tvm_mbarrier_wait", _WAIT)
    bar, phase, ticks = call.args
    return (
        f"tvm_mbarrier_try_wait_once({smem_addr(emit, bar)}, (unsigned)({emit(phase)}), "
        f"(unsigned)({emit(ticks)}))"
    )


def _test_wait_parity_operands(
    barrier: Any, phase: Any, *, sem: str = "", scope: str = "", space: str = "shared::cta"
) -> tuple[Any, ...]:
    """``mbarrier.test_wait.parity``: 1 when the phase of ``phase``'s parity has completed."""
    if bool(sem) != bool(scope):
        raise ValueError("mbarrier.test_wait.parity: give sem and scope together")
    return (barrier, phase, sem, scope, space)


@intrin(
    "ptx.mbarrier_test_wait_parity",
    _test_wait_parity_operands,
    nargs=5,
    dtype="uint32",
    min_arch=80,
    emulate=_emu_test_wait,
)
def _test_wait_parity(call: Call, emit: Emit) -> str:
    bar, phase = call.args[:2]
    sem, scope, space = S(call, 2), S(call, 3), S(call, 4)
    mods = "".join(f".{m}" for m in (sem, scope) if m) + f".{space}"
    fn = "tvm_mbarrier_test_wait" + mods.replace(".", "_").replace(":", "_")
    src = (
        f"__device__ __forceinline__ unsigned {fn}(unsigned bar, unsigned phase) {{\n"
        "  unsigned done;\n"
        f'  asm volatile("{{\\n\\t.reg .pred p;\\n\\tmbarrier.test_wait.parity{mods}.b64 p, '
        '[%1], %2;\\n\\tselp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(done) : "r"(bar), "r"(phase) '
        ': "memory");\n  return done;\n}'
    )
    helper(emit, fn, src)
    return f"{fn}({smem_addr(emit, bar)}, (unsigned)({emit(phase)}))"
