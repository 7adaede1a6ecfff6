"""Registration: the backend record, aliases, the ``rocm`` kind (``mcpu`` validated, the
wavefront size) and the AMD Instinct and Radeon tags."""

from __future__ import annotations

import importlib

import pytest
import rocm_helpers  # noqa: F401 - loads the backend

import tvm
import tvm.backend
from tvm.error import TargetError
from tvm.target import Target, list_tags


def test_listed_as_loaded_with_what_it_registered():
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "rocm"]
    assert record.state == "loaded"
    assert record.distribution == "tvm-backend-rocm"
    assert record.target_kinds == ("rocm",)
    assert record.n_tags == 25
    assert (record.namespaces, record.n_ops) == ((), 0)


def test_aliases_and_the_seeds_module_name():
    import tvm_backend_rocm

    assert tvm.backend.load("rocm") is tvm_backend_rocm
    assert tvm.tirx.rocm is tvm_backend_rocm
    tags = importlib.import_module("tvm.backend.rocm.target_tags")
    assert tvm_backend_rocm.target_tags is tags and tags.TAGS is tvm_backend_rocm.tags.TAGS
    assert tags.SEED_TAGS == {}  # the seed has no AMD tags: every one is ours


def test_kind_defaults():
    t = Target("rocm")
    assert t.kind.device_type == "rocm" and t.keys == ("rocm", "gpu")
    assert (t.attrs["mcpu"], t.attrs["thread_warp_size"], t.attrs["mtriple"]) == (
        "gfx90a", 64, "amdgcn-amd-amdhsa-hcc")
    assert (t.attrs["max_threads_per_block"], t.attrs["max_shared_memory_per_block"]) == (
        1024, 65536)


@pytest.mark.parametrize(("mcpu", "wave"), [("gfx906", 64), ("gfx1030", 32), ("gfx1100", 32),
                                            ("gfx942", 64)])
def test_the_wavefront_defaults_to_the_architectures(mcpu, wave):
    assert Target({"kind": "rocm", "mcpu": mcpu}).attrs["thread_warp_size"] == wave


@pytest.mark.parametrize(("config", "message"), [
    ({"mcpu": "sm_80"}, "mcpu must be an AMD GPU architecture such as gfx90a or gfx1100, got "
                        "'sm_80'"),
    ({"mcpu": "gfx999"}, "unknown AMD GPU architecture 'gfx999'; known: gfx600, "),
    ({"mcpu": "gfx90a", "thread_warp_size": 32},
     "thread_warp_size (the wavefront size) must be 64 on gfx90a, got 32"),
    ({"mcpu": "gfx1030", "thread_warp_size": 64},  # the hardware could; HIP cannot
     "thread_warp_size (the wavefront size) must be 32 on gfx1030, got 64"),
    ({"mattr": ["+wavefrontsize64"]}, "mattr entries are +feature or -feature with a feature of "
                                      "the target ID (xnack, sramecc), got '+wavefrontsize64'"),
    ({"max_threads_per_block": 2048}, "max_threads_per_block must be 1..1024 on AMD GPUs, got "
                                      "2048"),
])
def test_bad_targets_say_what_is_wrong(config, message):
    with pytest.raises(TargetError) as err:
        Target({"kind": "rocm", **config})
    assert message in str(err.value)


@pytest.mark.parametrize(("tag", "mcpu", "wave"), [
    ("amd/instinct-mi300x", "gfx942", 64),
    ("amd/instinct-mi250x", "gfx90a", 64),
    ("amd/instinct-mi100", "gfx908", 64),
    ("amd/instinct-mi50", "gfx906", 64),
    ("amd/radeon-rx-7900-xtx", "gfx1100", 32),
    ("amd/radeon-rx-6900-xt", "gfx1030", 32),
    ("amd/radeon-vii", "gfx906", 64),
])
def test_instinct_and_radeon_tags(tag, mcpu, wave):
    t = Target(tag)
    assert (t.kind.name, t.attrs["mcpu"], t.attrs["thread_warp_size"], t.tag) == (
        "rocm", mcpu, wave, tag)


def test_every_amd_tag_makes_a_target():
    names = [n for n in list_tags() if n.startswith("amd/")]
    assert len(names) == 25
    instinct = [n for n in names if n.startswith("amd/instinct-")]
    radeon = [n for n in names if n.startswith("amd/radeon-")]
    assert (len(instinct), len(radeon)) == (9, 16)
    for name in names:
        assert Target(name).attrs["mcpu"].startswith("gfx")
