"""The seed's Qualcomm Adreno tags, as data (``tvm/backend/adreno/target_tags.py``), with
exactly its configs: Adreno GPUs through OpenCL (plain, with CLML, with textures) and through
Vulkan (plain, with textures). Adreno adds no target kind: its tags are targets of the
``opencl`` and ``vulkan`` kinds (from tvm-backend-opencl and tvm-backend-vulkan, which load
before this backend) carrying ``device="adreno"`` and the ``adreno`` key.
"""

from __future__ import annotations

from typing import Any

from tvm.target import TargetKind

__all__ = ["EXTRA_TAGS", "KEY", "KINDS", "SEED_TAGS", "TAGS"]

KEY = "adreno"


def _tag(kind: str, *extra_keys: str) -> dict[str, Any]:
    return {"kind": kind, "device": "adreno", "keys": [KEY, kind, "gpu", *extra_keys]}


# fmt: off
SEED_TAGS: dict[str, dict[str, Any]] = {
    "qcom/adreno-opencl":         _tag("opencl"),
    "qcom/adreno-opencl-clml":    _tag("opencl", "clml"),
    "qcom/adreno-opencl-texture": _tag("opencl", "texture"),
    "qcom/adreno-vulkan":         _tag("vulkan"),
    "qcom/adreno-vulkan-texture": _tag("vulkan", "texture"),
}
# fmt: on

EXTRA_TAGS: dict[str, dict[str, Any]] = {}

TAGS: dict[str, dict[str, Any]] = {**SEED_TAGS, **EXTRA_TAGS}

#: no kind of its own
KINDS: list[TargetKind] = []
