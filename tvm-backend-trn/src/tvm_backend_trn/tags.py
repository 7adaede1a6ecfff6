"""Trainium target tags, as data: one line per tag.

Sizes are per NeuronCore: 128 partitions; SBUF 192 KiB per partition on NeuronCore-v2 (trn1)
and 224 KiB on NeuronCore-v3 (trn2); PSUM 16 KiB per partition (8 banks of 2 KiB) on both.
``num-cores`` counts the physical NeuronCores of the instance. The two ``trn1`` tags of the seed
come first, with its exact configs; the others are ours.
"""

from __future__ import annotations

from typing import Any

from tvm.target import Attr, TargetKind

__all__ = ["EXTRA_TAGS", "KIND", "KINDS", "SEED_TAGS", "TAGS", "TRN1_PSUM", "TRN1_SBUF", "TRN2_PSUM", "TRN2_SBUF"]

TRN1_SBUF = 196608
TRN1_PSUM = 16384
TRN2_SBUF = 229376
TRN2_PSUM = 16384

_TRN1: dict[str, Any] = {"kind": "trn", "partition_size": 128,
                         "max_sbuf_size_per_partition": TRN1_SBUF,
                         "max_psum_size_per_partition": TRN1_PSUM}
_TRN2: dict[str, Any] = {"kind": "trn", "partition_size": 128,
                         "max_sbuf_size_per_partition": TRN2_SBUF,
                         "max_psum_size_per_partition": TRN2_PSUM}

SEED_TAGS: dict[str, dict[str, Any]] = {
    "aws/trn1/trn1.2xlarge": {**_TRN1, "num-cores": 2},
    "aws/trn1/trn1.32xlarge": {**_TRN1, "num-cores": 32},
}

EXTRA_TAGS: dict[str, dict[str, Any]] = {
    "aws/trn1/trn1n.32xlarge": {**_TRN1, "num-cores": 32},
    "aws/trn2/trn2.3xlarge": {**_TRN2, "num-cores": 8},
    "aws/trn2/trn2.48xlarge": {**_TRN2, "num-cores": 128},
}

TAGS: dict[str, dict[str, Any]] = {**SEED_TAGS, **EXTRA_TAGS}


# -- the target kind (data, and the check of a target's attributes) ------------------------

KIND = "trn"


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
