"""Target kind ``hexagon`` and the seed's Qualcomm Hexagon tags, as data.

``SEED_TAGS`` are the seed's (``tvm/backend/hexagon/target_tags.py``), with exactly its configs:
one tag per Hexagon version with HVX, 4 hardware threads, the VTCM capacity of the version, the
HVX features (``mattr``) and, for v68, the LLVM option that makes HVX compute in IEEE float.
The attributes are Apache TVM's Hexagon target attributes (LLVM-style names, with dashes).
"""

from __future__ import annotations

import re
from typing import Any

from tvm.target import Attr, TargetKind

__all__ = ["EXTRA_TAGS", "KIND", "KINDS", "SEED_TAGS", "TAGS", "VERSIONS"]

KIND = "hexagon"
_ONE_MB = 2**20
_HVX_FLOAT = ("+hvx-qfloat", "-hvx-ieee-fp")

#: every Hexagon version the kind accepts (``mcpu = "hexagon" + version``)
VERSIONS = ("v5", "v55", "v60", "v62", "v65", "v66", "v67", "v67t", "v68", "v69", "v71", "v73",
            "v75", "v79")


def _tag(version: str, vtcm: int, mattr: list[str], **extra: Any) -> dict[str, Any]:
    return {"kind": KIND, "mtriple": "hexagon", "mcpu": f"hexagon{version}", "mattr": mattr,
            "num-cores": 4, "vtcm-capacity": vtcm, **extra}


# fmt: off
SEED_TAGS: dict[str, dict[str, Any]] = {
    "qcom/hexagon-v65": _tag("v65", _ONE_MB // 4, ["+hvxv65", "+hvx-length128b"]),
    "qcom/hexagon-v66": _tag("v66", _ONE_MB // 4, ["+hvxv66", "+hvx-length128b"]),
    "qcom/hexagon-v68": _tag("v68", 4 * _ONE_MB, ["+hvxv68", "+hvx-length128b", *_HVX_FLOAT],
                             **{"llvm-options": ["-force-hvx-float"]}),
    "qcom/hexagon-v69": _tag("v69", 8 * _ONE_MB, ["+hvxv69", "+hvx-length128b", *_HVX_FLOAT]),
    "qcom/hexagon-v73": _tag("v73", 8 * _ONE_MB, ["+hvxv73", "+hvx-length128b", *_HVX_FLOAT]),
    "qcom/hexagon-v75": _tag("v75", 8 * _ONE_MB, ["+hvxv75", "+hvx-length128b", *_HVX_FLOAT]),
}
# fmt: on

EXTRA_TAGS: dict[str, dict[str, Any]] = {}

TAGS: dict[str, dict[str, Any]] = {**SEED_TAGS, **EXTRA_TAGS}

_MCPU = re.compile(r"^hexagon(v[0-9]+t?)$")


def _validate(attrs: dict[str, Any]) -> None:
    found = _MCPU.match(attrs["mcpu"])
    if found is None or found.group(1) not in VERSIONS:
        raise ValueError(f"mcpu must be a Hexagon version such as hexagonv68 (known: "
                         f"{', '.join('hexagon' + v for v in VERSIONS)}), got {attrs['mcpu']!r}")
    if attrs["mtriple"] != "hexagon":
        raise ValueError(f"mtriple must be 'hexagon', got {attrs['mtriple']!r}")
    for feature in attrs["mattr"]:
        if not (isinstance(feature, str) and feature[:1] in "+-" and len(feature) > 1):
            raise ValueError(f"mattr entries are +feature or -feature (+hvxv68, "
                             f"+hvx-length128b), got {feature!r}")
    if attrs["num-cores"] < 1:
        raise ValueError(f"num-cores must be positive, got {attrs['num-cores']}")


KINDS = [TargetKind(
    KIND,
    attrs={
        "mtriple": Attr(str, "hexagon", "the LLVM triple"),
        "mcpu": Attr(str, "hexagonv68", "the Hexagon version (hexagonv68, ...)"),
        "mattr": Attr(tuple, (), "LLVM target features (+hvxv68, +hvx-length128b, ...)"),
        "num-cores": Attr(int, 4, "hardware threads"),
        "vtcm-capacity": Attr(int, 0, "VTCM bytes (0: none assumed)"),
        "llvm-options": Attr(tuple, (), "options for LLVM (-force-hvx-float, ...)"),
    },
    default_keys=(KIND,),
    device_type="hexagon",
    validate=_validate,
    doc="Qualcomm Hexagon DSPs: C compiled for the DSP (running needs the Hexagon SDK).",
    arch_attr="mcpu",  # Target("hexagonv68") is Target("hexagon -mcpu=hexagonv68")
    arch_pattern=r"hexagonv\d+",
)]
