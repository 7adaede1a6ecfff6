"""Target kind ``trn`` and the Trainium target tags: data, one line per tag.

Sizes are per NeuronCore: 128 partitions; SBUF 192 KiB per partition on NeuronCore-v2 (trn1)
and 224 KiB on NeuronCore-v3 (trn2); PSUM 16 KiB per partition (8 banks of 2 KiB) on both.
``num-cores`` counts the physical NeuronCores of the instance.
"""

from __future__ import annotations

from typing import Any

from tvm.target import Attr, TargetKind

__all__ = ["KIND", "KINDS", "TAGS", "TRN1_PSUM", "TRN1_SBUF", "TRN2_PSUM", "TRN2_SBUF"]

KIND = "trn"
TRN1_SBUF = 196608
TRN1_PSUM = 16384
TRN2_SBUF = 229376
TRN2_PSUM = 16384


def _validate(attrs: dict[str, Any]) -> None:
    if attrs["partition_size"] != 128:
        raise ValueError(f"partition_size must be 128, got {attrs['partition_size']}")
    for key in ("num-cores", "max_sbuf_size_per_partition", "max_psum_size_per_partition"):
        if attrs[key] < 1:
            raise ValueError(f"{key} must be positive, got {attrs[key]}")
    if attrs["max_psum_size_per_partition"] % 2048:
        raise ValueError("max_psum_size_per_partition must be a whole number of 2 KiB banks, "
                         f"got {attrs['max_psum_size_per_partition']}")


KINDS = [TargetKind(
    KIND,
    attrs={
        "num-cores": Attr(int, 1, "NeuronCores of the instance"),
        "partition_size": Attr(int, 128, "SBUF/PSUM partitions"),
        "max_sbuf_size_per_partition": Attr(int, TRN1_SBUF, "SBUF bytes per partition"),
        "max_psum_size_per_partition": Attr(int, TRN1_PSUM, "PSUM bytes per partition"),
    },
    default_keys=(KIND,),
    device_type="trn",
    validate=_validate,
    doc="AWS Trainium NeuronCores (NKI); kernels run in the backend's simulator.",
)]


def _tag(cores: int, sbuf: int, psum: int) -> dict[str, Any]:
    return {"kind": KIND, "num-cores": cores, "partition_size": 128,
            "max_sbuf_size_per_partition": sbuf, "max_psum_size_per_partition": psum}


TAGS: dict[str, dict[str, Any]] = {
    "aws/trn1/trn1.2xlarge": _tag(2, TRN1_SBUF, TRN1_PSUM),
    "aws/trn1/trn1.32xlarge": _tag(32, TRN1_SBUF, TRN1_PSUM),
    "aws/trn1/trn1n.32xlarge": _tag(32, TRN1_SBUF, TRN1_PSUM),
    "aws/trn2/trn2.3xlarge": _tag(8, TRN2_SBUF, TRN2_PSUM),
    "aws/trn2/trn2.48xlarge": _tag(128, TRN2_SBUF, TRN2_PSUM),
}
