"""Registration: the backend record, the ``hexagon`` kind and the seed's Hexagon tags (every one
with exactly the seed's config), and the ``hexagon`` pipeline."""

from __future__ import annotations

import hashlib
import importlib
import json

import hexagon_helpers  # noqa: F401 - loads the backend
import pytest

import tvm
import tvm.backend
from tvm.error import TargetError
from tvm.target import Target, get_tag
from tvm.tirx.compilation_pipeline import get_default_tir_pipeline

# sha256 of json.dumps({name: config}, sort_keys=True) over the seed's Hexagon tags, computed by
# running the seed's tag file (apache/tvm, tvm/target/tag_registry/hexagon.py, moved unchanged to
# tvm/backend/hexagon/target_tags.py by the seed) with a recording register_tag.
SEED_DIGEST = (6, "8271cfb445d6437a981c89e90e1b0e92b30f2e601f7ae75e1e13591c71c61996")


def test_listed_as_loaded_with_what_it_registered():
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "hexagon"]
    assert record.state == "loaded"
    assert record.distribution == "tvm-backend-hexagon"
    assert (record.target_kinds, record.n_tags, record.pipelines) == (
        ("hexagon",), 6, ("hexagon",))


def test_every_seed_tag_with_the_seed_config():
    import tvm_backend_hexagon

    names = list(tvm_backend_hexagon.target_tags.SEED_TAGS)
    registered = {name: get_tag(name) for name in names}
    digest = hashlib.sha256(json.dumps(registered, sort_keys=True).encode()).hexdigest()
    assert (len(registered), digest) == SEED_DIGEST
    assert importlib.import_module("tvm.backend.hexagon.target_tags").TAGS is \
        tvm_backend_hexagon.tags.TAGS


@pytest.mark.parametrize(("tag", "mcpu", "vtcm", "llvm_options"), [
    ("qcom/hexagon-v65", "hexagonv65", 262144, ()),
    ("qcom/hexagon-v68", "hexagonv68", 4194304, ("-force-hvx-float",)),
    ("qcom/hexagon-v75", "hexagonv75", 8388608, ()),
])
def test_tags_make_targets(tag, mcpu, vtcm, llvm_options):
    t = Target(tag)
    assert (t.kind.name, t.attrs["mcpu"], t.attrs["vtcm-capacity"], t.attrs["num-cores"],
            t.attrs["llvm-options"]) == ("hexagon", mcpu, vtcm, 4, llvm_options)
    assert t.attrs["mattr"][:2] == (f"+hvx{mcpu[7:]}", "+hvx-length128b")


@pytest.mark.parametrize(("config", "message"), [
    ({"mcpu": "cortex-a78"}, "mcpu must be a Hexagon version such as hexagonv68 (known: "
                             "hexagonv5, "),
    ({"mcpu": "hexagonv99"}, "got 'hexagonv99'"),
    ({"mtriple": "aarch64"}, "mtriple must be 'hexagon', got 'aarch64'"),
    ({"mattr": ["hvxv68"]}, "mattr entries are +feature or -feature (+hvxv68, +hvx-length128b), "
                            "got 'hvxv68'"),
])
def test_bad_targets_say_what_is_wrong(config, message):
    with pytest.raises(TargetError) as err:
        Target({"kind": "hexagon", **config})
    assert message in str(err.value)


def test_hexagon_targets_get_the_hexagon_pipeline():
    from tvm.tirx.compilation_pipeline import get_tir_pipeline

    assert get_default_tir_pipeline(Target("qcom/hexagon-v69")) == "hexagon"
    assert get_default_tir_pipeline(Target("c")) == "default"
    pipeline = get_tir_pipeline("hexagon")
    assert pipeline.name == "hexagon" and "SplitHostDevice" not in str(pipeline.main)


def test_no_host_device_split():
    from tvm.testing.conformance import KERNELS

    mod = tvm.driver.lower(KERNELS["vector_add"](), target="qcom/hexagon-v68")
    assert list(mod.functions) == ["vector_add"]
    assert not any(f.attrs.get("tirx.is_kernel") for f in mod.functions.values())
