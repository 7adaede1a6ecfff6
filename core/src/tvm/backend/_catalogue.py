"""The project's own backends, as data: used for install hints and "not installed" rows only.

No logic branches on these names; a third-party backend works the same without an entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATALOGUE", "CatalogueEntry", "find_provider"]


@dataclass(frozen=True)
class CatalogueEntry:
    name: str
    distribution: str
    namespaces: tuple[str, ...] = ()
    target_kinds: tuple[str, ...] = ()
    tag_prefixes: tuple[str, ...] = ()
    pipelines: tuple[str, ...] = ()
    description: str = ""


CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry(
        "cuda",
        "tvm-backend-cuda",
        ("cuda", "ptx", "nvshmem"),
        ("cuda",),
        ("nvidia/",),
        (),
        "NVIDIA GPUs: CUDA C++ compiled with NVRTC",
    ),
    CatalogueEntry(
        "trn",
        "tvm-backend-trn",
        ("nki",),
        ("trn",),
        ("aws/trn",),
        ("trn",),
        "AWS Trainium: NKI kernels, with a simulator",
    ),
    CatalogueEntry(
        "metal",
        "tvm-backend-metal",
        ("metal",),
        ("metal",),
        ("apple/",),
        (),
        "Apple GPUs: Metal Shading Language",
    ),
)


def find_provider(what: str, name: str) -> CatalogueEntry | None:
    """The catalogued backend providing ``what`` ``name`` (a target kind, tag, namespace, ...)."""
    for entry in CATALOGUE:
        if what == "target kind" and name in entry.target_kinds:
            return entry
        if what == "script namespace" and name in entry.namespaces:
            return entry
        if what == "target tag" and any(name.startswith(p) for p in entry.tag_prefixes):
            return entry
        if what == "tir pipeline" and name in entry.pipelines:
            return entry
        if what == "backend" and name == entry.name:
            return entry
    return None
