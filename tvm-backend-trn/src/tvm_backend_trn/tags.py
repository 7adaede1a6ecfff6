"""Trainium target tags, as data: one line per tag.

Sizes are per NeuronCore: 128 partitions; SBUF 192 KiB per partition on NeuronCore-v2 (trn1)
and 224 KiB on NeuronCore-v3 (trn2); PSUM 16 KiB per partition (8 banks of 2 KiB) on both.
``num-cores`` counts the physical NeuronCores of the instance. The two ``trn1`` tags of the seed
come first, with its exact configs; the others are ours.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXTRA_TAGS", "SEED_TAGS", "TAGS", "TRN1_PSUM", "TRN1_SBUF", "TRN2_PSUM", "TRN2_SBUF"]

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
