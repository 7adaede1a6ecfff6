"""Targets: kinds (registered by backends), tags (named configs) and ``Target``.

>>> from tvm.target import Target
>>> Target("c")                                   # a kind
>>> Target("nvidia/nvidia-h100")                  # a tag (needs tvm-backend-cuda)
>>> Target({"kind": "cuda", "arch": "sm_90a"})    # a config

Core registers no kind by itself: the host backend ``c`` registers its kind through the plugin
hooks like every other backend.
"""

from __future__ import annotations

from .kind import (
    KIND_REGISTRY,
    Attr,
    TargetKind,
    get_target_kind,
    list_target_kinds,
    register_target_kind,
)
from .tag import TAG_REGISTRY, get_tag, list_tags, register_tag
from .target import Target

__all__ = [
    "KIND_REGISTRY",
    "TAG_REGISTRY",
    "Attr",
    "Target",
    "TargetKind",
    "get_tag",
    "get_target_kind",
    "list_tags",
    "list_target_kinds",
    "register_tag",
    "register_target_kind",
]
