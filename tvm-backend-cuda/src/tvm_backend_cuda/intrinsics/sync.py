"""Barriers and fences: ``bar.sync``/``bar.arrive``, ``barrier.cluster``, ``fence.*`` and
``griddepcontrol`` (programmatic dependent launch)."""

from __future__ import annotations

from typing import Any

from tvm.ir.expr import Call, PrimExpr

from ._base import Emit, asm, bool_arg, fail, helper
from ._base import str_arg as S
from ._spec import intrin

FENCE_SEM = ("sc", "acq_rel")
FENCE_SCOPE = ("cta", "cluster", "gpu", "sys")
PROXY_ASYNC_SPACE = ("", "global", "shared::cta", "shared::cluster")
CLUSTER_ARRIVE_SEM = ("", "release", "relaxed")


def _int_operand(emit: Emit, a: Any) -> str:
    """``a`` as a C ``int`` argument: an int32 value as printed, anything else cast."""
    text = emit(a)
    if isinstance(a, PrimExpr) and str(a.dtype) == "int32":
        return text
    return f"(int)({text})"


def _named_barrier(instr: str) -> None:
    # a helper of the seed's name (tvm_builtin_ptx_bar_sync: its tests read the source for it)
    name = "tvm_builtin_ptx_" + instr.replace(".", "_")
    body = asm(f"{instr} %0, %1;", inputs=['"r"(name_bar_id)', '"r"(thread_count)'])
    source = (f"__device__ __forceinline__ void {name}(int name_bar_id, int thread_count) {{\n"
              f"  {body};\n}}")

    def rule(call: Call, emit: Emit) -> str:
        bid, count = (_int_operand(emit, a) for a in call.args)
        return f"{helper(emit, name, source)}({bid}, {count})"

    def emulate(call: Call, emit: Emit) -> str:
        bid, count = (emit(a) for a in call.args)
        fn = "bar_sync" if instr == "bar.sync" else "bar_arrive"
        return f"tvm_cuda_emu::{fn}((unsigned)({bid}), (unsigned)({count}))"

    rule.__module__ = __name__
    intrin(f"ptx.{instr}", "name_bar_id, thread_count", emulate=emulate)(rule)


_named_barrier("bar.sync")
_named_barrier("bar.arrive")


@intrin(
    "ptx.barrier.cluster.arrive",
    "sem='', aligned=True",
    choices={"sem": CLUSTER_ARRIVE_SEM},
    min_arch=90,
    emulate=lambda call, emit: "tvm_cuda_emu::cluster_arrive()",
)
def _cluster_arrive(call: Call, emit: Emit) -> str:
    sem = S(call, 0)
    if sem not in CLUSTER_ARRIVE_SEM:
        raise fail(call, f"sem must be '', 'release' or 'relaxed', got {sem!r}")
    mods = (f".{sem}" if sem else "") + (".aligned" if bool_arg(call, 1) else "")
    return asm(f"barrier.cluster.arrive{mods};")


@intrin("ptx.barrier.cluster.wait", "acquire=False, aligned=True", min_arch=90,
        emulate=lambda call, emit: "tvm_cuda_emu::cluster_wait()")
def _cluster_wait(call: Call, emit: Emit) -> str:
    mods = (".acquire" if bool_arg(call, 0) else "") + (".aligned" if bool_arg(call, 1) else "")
    return asm(f"barrier.cluster.wait{mods};")


@intrin(
    "ptx.fence",
    "sem, scope",
    choices={"sem": FENCE_SEM, "scope": FENCE_SCOPE},
    min_arch=70,
    emulate=lambda call, emit: "__threadfence()",  # the emulator's memory is coherent
)
def _fence(call: Call, emit: Emit) -> str:
    sem, scope = S(call, 0), S(call, 1)
    if sem not in FENCE_SEM or scope not in FENCE_SCOPE:
        raise fail(call, f"no fence.{sem}.{scope}")
    return asm(f"fence.{sem}.{scope};")


@intrin(
    "ptx.fence.proxy_async",
    "space=''",
    choices={"space": PROXY_ASYNC_SPACE},
    min_arch=90,
    emulate=lambda call, emit: "__threadfence()",  # one proxy in the emulator
)
def _fence_proxy_async(call: Call, emit: Emit) -> str:
    space = S(call, 0)
    if space not in PROXY_ASYNC_SPACE:
        raise fail(call, f"no fence.proxy.async.{space}")
    return asm("fence.proxy.async" + (f".{space}" if space else "") + ";")


@intrin("ptx.fence.mbarrier_init", min_arch=90,
        emulate=lambda call, emit: "__threadfence()")
def _fence_mbarrier_init(call: Call, emit: Emit) -> str:
    return asm("fence.mbarrier_init.release.cluster;")


@intrin("ptx.griddepcontrol.wait", min_arch=90,
        emulate=lambda call, emit: "(void)0")  # launches run one after the other
def _gdc_wait(call: Call, emit: Emit) -> str:
    return asm("griddepcontrol.wait;")


@intrin("ptx.griddepcontrol.launch_dependents", min_arch=90,
        emulate=lambda call, emit: "(void)0")
def _gdc_launch(call: Call, emit: Emit) -> str:
    return asm("griddepcontrol.launch_dependents;")
