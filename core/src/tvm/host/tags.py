"""Target kind ``c`` of the host backend, as data (the host backend has no vendor tags)."""

from __future__ import annotations

from typing import Any

from ..target import Attr, TargetKind

__all__ = ["KINDS", "LLVM", "TAGS"]

#: Apache TVM's CPU kind, spelled with LLVM's triple and CPU names (the host of the seed's
#: Jetson and Apple tags): built as C for this machine, like ``c``.
LLVM = "llvm"


def _validate(attrs: dict[str, Any]) -> None:
    if not 0 <= attrs.get("opt_level", 3) <= 3:
        raise ValueError(f"opt_level must be 0..3, got {attrs['opt_level']}")
    if attrs.get("num_threads", 1) < 1:
        raise ValueError(f"num_threads must be >= 1, got {attrs['num_threads']}")


KINDS = [TargetKind(
    "c",
    attrs={
        "mcpu": Attr(str, doc="CPU to compile for: passed as -march=<mcpu> (e.g. native, "
                              "x86-64-v3); default: the best x86-64 level this CPU and "
                              "compiler support"),
        "num_threads": Attr(int, doc="OpenMP threads for parallel loops"),
        "opt_level": Attr(int, 3, "C compiler optimisation level (-O<n>)"),
        "cc": Attr(str, doc="C compiler command; default $CC, else cc"),
    },
    default_keys=("c", "cpu"),
    device_type="cpu",
    validate=_validate,
    doc="The host CPU through C and the system C compiler.",
), TargetKind(
    LLVM,
    attrs={
        "mtriple": Attr(str, doc="LLVM target triple; building needs this machine's"),
        "mcpu": Attr(str, doc="LLVM CPU name (recorded; not passed to the C compiler)"),
        "mattr": Attr(tuple, doc="LLVM CPU features (recorded)"),
        "num-cores": Attr(int, doc="CPU cores (recorded)"),
        "num_threads": Attr(int, doc="OpenMP threads for parallel loops"),
        "opt_level": Attr(int, 2, "C compiler optimisation level (-O<n>)"),
        "cc": Attr(str, doc="C compiler command; default $CC, else cc"),
    },
    default_keys=("cpu",),
    device_type="cpu",
    validate=_validate,
    doc="Apache TVM's CPU target: built as C for this machine by the system C compiler.",
)]

#: ``{"vendor/device": config}``: none for the host (``Target("c")`` is the whole story)
TAGS: dict[str, dict[str, Any]] = {}
