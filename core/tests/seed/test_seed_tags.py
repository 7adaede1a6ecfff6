"""The seed's tag files (``tvm/backend/{cuda,metal,trn}/target_tags.py``): every tag, with its
exact name and config, and ours beside them."""

from __future__ import annotations

import hashlib
import json

import pytest

from tvm.target import Target, get_tag, list_tags

# sha256 of json.dumps({name: config}, sort_keys=True) over the seed's own tags of each vendor,
# computed from the seed's tag files (apache/tvm bb6f8aec55): a changed, missing or renamed tag
# changes it.
SEED_DIGESTS = {
    "cuda": (244, "1720d230937574a72c0c87f6e9cf7375aae774c200a06710502d06223c067a9b"),
    "metal": (3, "1fdd34d393f329fcf2d6a29673e5a2cb454b6618d624eb802c66403ae31cdcd1"),
    "trn": (2, "19dd1aa5156e1068c018c89fbb272127d49d8c097ec0d48bffd11a972eaf438e"),
}


def _digest(configs: dict) -> str:
    return hashlib.sha256(json.dumps(configs, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("backend", sorted(SEED_DIGESTS))
def test_every_seed_tag_is_registered_with_the_seed_config(backend, request):
    module = request.getfixturevalue(backend)
    seed_names = list(module.target_tags.SEED_TAGS)
    registered = {name: get_tag(name) for name in seed_names}
    count, digest = SEED_DIGESTS[backend]
    assert len(registered) == count
    assert _digest(registered) == digest
    for name in seed_names:  # and each one makes a target
        t = Target(name)
        assert t.tag == name


def test_nvidia_tags_of_every_family(cuda):
    tags = list_tags()
    expect = {
        "nvidia/nvidia-a100": ("sm_80", 65536, 41943040),
        "nvidia/geforce-rtx-5060-ti": ("sm_120", 65536, 33554432),
        "nvidia/quadro-k2000d": ("sm_30", 65536, None),  # Quadro desktop
        "nvidia/quadro-m5500m": ("sm_52", 65536, None),  # Quadro notebook
        "nvidia/nvs-5400m": ("sm_21", 32768, None),  # NVS, Fermi
        "nvidia/geforce-gt-730-ddr3,128bit": ("sm_21", 32768, None),
        "nvidia/geforce-gtx-860m-sm-50": ("sm_50", 65536, None),  # GeForce notebook
        "nvidia/geforce-410m": ("sm_21", 32768, None),
        "nvidia/tegra-x1": ("sm_53", 32768, None),
        "nvidia/jetson-tx2": ("sm_62", 32768, None),
    }
    for name, (arch, regs, l2) in expect.items():
        cfg = tags[name]
        assert (cfg["arch"], cfg["registers_per_block"], cfg.get("l2_cache_size_bytes")) == (
            arch, regs, l2), name
        assert cfg["keys"] == ["cuda", "gpu"]


def test_the_four_titan_spellings_are_the_seeds(cuda):
    for name, arch in [("nvidia/nvidia-titan-rtx", "sm_75"), ("nvidia/nvidia-titan-v", "sm_70"),
                       ("nvidia/nvidia-titan-xp", "sm_61"), ("nvidia/nvidia-titan-x", "sm_61")]:
        assert Target(name).attrs["arch"] == arch
    # the GTX TITANs are separate parts with their own tags
    assert Target("nvidia/geforce-gtx-titan-x").attrs["arch"] == "sm_52"


def test_jetson_modules_name_an_llvm_host(cuda):
    xavier = Target("nvidia/jetson-agx-xavier")
    assert xavier.attrs["arch"] == "sm_72"
    assert xavier.keys == ("cuda", "gpu")  # the seed's Jetson configs give no keys: the kind's
    assert xavier.host.kind.name == "llvm"
    host = xavier.host.attrs
    assert (host["mtriple"], host["mcpu"], host["num-cores"]) == ("aarch64-linux-gnu", "carmel", 8)
    assert get_tag("nvidia/jetson-orin-nano")["host"] == {
        "kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "carmel", "num-cores": 6}


def test_our_extra_tags_are_kept(cuda, metal, trn):
    for name, arch in [("nvidia/nvidia-h200", "sm_90a"), ("nvidia/nvidia-b200", "sm_100a")]:
        assert Target(name).attrs["arch"] == arch
    assert set(cuda.target_tags.EXTRA_TAGS).isdisjoint(cuda.target_tags.SEED_TAGS)
    assert Target("apple/m4-gpu").attrs["gpu_family"] == "apple9"
    assert Target("aws/trn2/trn2.48xlarge").attrs["num-cores"] == 128


def test_apple_and_aws_tags(metal, trn):
    m1 = Target("apple/m1-gpu-restricted")
    assert m1.attrs["max_threads_per_block"] == 256
    assert (m1.host.kind.name, m1.host.attrs["mtriple"], m1.host.attrs["mcpu"]) == (
        "llvm", "arm64-apple-macos", "apple-m1")
    trn1 = Target("aws/trn1/trn1.32xlarge")
    assert (trn1.attrs["num-cores"], trn1.attrs["max_sbuf_size_per_partition"],
            trn1.attrs["max_psum_size_per_partition"]) == (32, 196608, 16384)


@pytest.mark.parametrize("backend", ["cuda", "metal", "trn"])
def test_target_tags_module_path(backend, request):
    """``tvm.backend.<b>.target_tags`` (and ``tvm.tirx.<b>.target_tags``), as in the seed."""
    import importlib

    request.getfixturevalue(backend)
    for path in (f"tvm.backend.{backend}.target_tags", f"tvm.tirx.{backend}.target_tags"):
        module = importlib.import_module(path)
        assert set(module.TAGS) <= set(list_tags())
