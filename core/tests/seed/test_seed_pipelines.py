"""The seed's pipeline registry (``tvm/tirx/compilation_pipeline.py``) and the ``trn`` pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

import tvm
from tvm.tirx.compilation_pipeline import PIPELINE_MAP, get_tir_pipeline, register_tir_pipeline
from tvm.transform import Pipeline, Sequential

# The seed's trn pipeline, in order (tvm/backend/trn/pipeline.py).
SEED_TRN_PASSES = [
    "TrnPrivateBufferAlloc", "TrnNaiveAllocator", "TilePrimitiveDispatch", "LowerTrainiumLayout",
    "DecorateDeviceScope", "StmtSimplify", "LowerTIRxOpaque", "LoopPartition", "HoistIfThenElse",
    "StmtSimplify", "RemoveNoOp", "AnnotateEntryFunc", "SplitHostDevice", "MakePackedAPI",
]


def test_s_tir_and_default():
    assert {"s_tir", "tirx", "default"} <= set(PIPELINE_MAP.keys())
    s_tir = get_tir_pipeline("s_tir")
    assert isinstance(s_tir.main, Sequential) and s_tir.main.pass_name == "s_tir"
    assert isinstance(s_tir.host, Sequential) and isinstance(s_tir.device, Sequential)
    default = get_tir_pipeline("default")
    assert default.name == "s_tir"  # "default" maps to "s_tir", as in the seed
    assert [p.pass_name for p in default.main] == [p.pass_name for p in s_tir.main]
    assert get_tir_pipeline().__class__ is Pipeline


def test_default_follows_a_replaced_s_tir():
    seen = []
    original = PIPELINE_MAP["s_tir"]
    mine = Pipeline("mine")
    register_tir_pipeline("s_tir", lambda **kw: seen.append(kw) or mine, override=True)
    try:
        assert get_tir_pipeline("default", disable_unroll=True) is mine
        assert seen == [{"disable_unroll": True}]
    finally:
        register_tir_pipeline("s_tir", original, override=True)


def test_unknown_pipeline_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown TIR pipeline 'nope'; known pipelines: .*s_tir"):
        get_tir_pipeline("nope")


def test_registry_functions_on_tvm_tirx():
    assert tvm.tirx.register_tir_pipeline is register_tir_pipeline
    assert tvm.tirx.get_tir_pipeline is get_tir_pipeline


def test_trn_pipeline(trn):
    from tvm.backend.trn.pipeline import finalize_device_passes_trn, trn_pipeline

    trn = get_tir_pipeline("trn")
    assert trn.name == "trn"
    assert [p.pass_name for p in trn.main] == [p.pass_name for p in trn_pipeline().main]
    assert [p.pass_name for p in trn.device] == [p.pass_name for p in finalize_device_passes_trn()]
    assert tvm.tirx.compilation_pipeline.get_default_tir_pipeline("aws/trn1/trn1.2xlarge") == "trn"


def test_trn_pipeline_mapping_is_documented():
    """docs/lowering.md shows, pass by pass, where our pipeline does each seed pass's work."""
    doc = Path(__file__).resolve().parents[3] / "docs" / "lowering.md"
    if not doc.exists():
        pytest.skip("not a source checkout (no docs/)")
    text = doc.read_text()
    table = text[text.index("### The `trn` pipeline, pass by pass"):]
    rows = [line for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    names = [row.split("|")[2].strip().strip("`").rsplit(".", 1)[-1] for row in rows]
    assert names == SEED_TRN_PASSES
