"""WebGPU's TVMScript namespace: ``T.webgpu`` stays in core, as in the seed
(:class:`tvm.tirx.op.WebGPUNamespace`: ``subgroup_shuffle``, ``subgroup_shuffle_up``,
``subgroup_shuffle_down``). This backend registers no namespace; it gives those ops their WGSL
(:mod:`.op`)."""

from __future__ import annotations

__all__ = ["NAMESPACES"]

NAMESPACES: dict[str, object] = {}
