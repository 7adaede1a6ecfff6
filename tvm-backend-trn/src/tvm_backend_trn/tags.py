"""Trainium target tags: data, one line per tag.

Sizes are per NeuronCore: 128 partitions; SBUF 192 KiB per partition on NeuronCore-v2 (trn1)
and 224 KiB on NeuronCore-v3 (trn2); PSUM 16 KiB per partition (8 banks of 2 KiB) on both.
``num-cores`` counts the physical NeuronCores of the instance.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TAGS", "TRN1_PSUM", "TRN1_SBUF", "TRN2_PSUM", "TRN2_SBUF"]

TRN1_SBUF = 196608
TRN1_PSUM = 16384
TRN2_SBUF = 229376
TRN2_PSUM = 16384


def _tag(cores: int, sbuf: int, psum: int) -> dict[str, Any]:
    return {"kind": "trn", "num-cores": cores, "partition_size": 128,
            "max_sbuf_size_per_partition": sbuf, "max_psum_size_per_partition": psum}


TAGS: dict[str, dict[str, Any]] = {
    "aws/trn1/trn1.2xlarge": _tag(2, TRN1_SBUF, TRN1_PSUM),
    "aws/trn1/trn1.32xlarge": _tag(32, TRN1_SBUF, TRN1_PSUM),
    "aws/trn1/trn1n.32xlarge": _tag(32, TRN1_SBUF, TRN1_PSUM),
    "aws/trn2/trn2.3xlarge": _tag(8, TRN2_SBUF, TRN2_PSUM),
    "aws/trn2/trn2.48xlarge": _tag(128, TRN2_SBUF, TRN2_PSUM),
}
