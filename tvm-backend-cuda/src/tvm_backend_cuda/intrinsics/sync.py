"""Barriers and fences: ``bar.sync``/``bar.arrive``, ``barrier.cluster``, ``fence.*`` and
``griddepcontrol`` (programmatic dependent launch)."""

from __future__ import annotations

from ._base import asm, bool_arg, fail, intrin
from ._base import str_arg as S


@intrin("ptx.bar.sync", nargs=2)
def _bar_sync(call, emit):
    bid, count = (emit(a) for a in call.args)
    return asm("bar.sync %0, %1;", inputs=[f'"r"((int)({bid}))', f'"r"((int)({count}))'])


@intrin("ptx.bar.arrive", nargs=2)
def _bar_arrive(call, emit):
    bid, count = (emit(a) for a in call.args)
    return asm("bar.arrive %0, %1;", inputs=[f'"r"((int)({bid}))', f'"r"((int)({count}))'])


@intrin("ptx.barrier.cluster.arrive", nargs=2, min_arch=90)
def _cluster_arrive(call, emit):
    sem = S(call, 0)
    if sem not in ("", "release", "relaxed"):
        raise fail(call, f"sem must be '', 'release' or 'relaxed', got {sem!r}")
    mods = (f".{sem}" if sem else "") + (".aligned" if bool_arg(call, 1) else "")
    return asm(f"barrier.cluster.arrive{mods};")


@intrin("ptx.barrier.cluster.wait", nargs=2, min_arch=90)
def _cluster_wait(call, emit):
    mods = (".acquire" if bool_arg(call, 0) else "") + (".aligned" if bool_arg(call, 1) else "")
    return asm(f"barrier.cluster.wait{mods};")


@intrin("ptx.fence", nargs=2, flat="fence", min_arch=70)
def _fence(call, emit):
    sem, scope = S(call, 0), S(call, 1)
    if sem not in ("sc", "acq_rel") or scope not in ("cta", "cluster", "gpu", "sys"):
        raise fail(call, f"no fence.{sem}.{scope}")
    return asm(f"fence.{sem}.{scope};")


@intrin("ptx.fence.proxy_async", nargs=1, flat="fence_proxy_async", min_arch=90)
def _fence_proxy_async(call, emit):
    space = S(call, 0)
    if space not in ("", "global", "shared::cta", "shared::cluster"):
        raise fail(call, f"no fence.proxy.async.{space}")
    return asm("fence.proxy.async" + (f".{space}" if space else "") + ";")


@intrin("ptx.fence.mbarrier_init", flat="fence_mbarrier_init", min_arch=90)
def _fence_mbarrier_init(call, emit):
    return asm("fence.mbarrier_init.release.cluster;")


@intrin("ptx.griddepcontrol.wait", min_arch=90)
def _gdc_wait(call, emit):
    return asm("griddepcontrol.wait;")


@intrin("ptx.griddepcontrol.launch_dependents", min_arch=90)
def _gdc_launch(call, emit):
    return asm("griddepcontrol.launch_dependents;")
