"""Short names of tags (``h200`` for ``nvidia/nvidia-h200``), bare architectures (``sm_90a``)
and suggestions ranked by a tag's model name: one rule in core for every backend's tags."""

from __future__ import annotations

import pytest

from tvm._suggest import did_you_mean, suggestions
from tvm.error import TargetError
from tvm.target import Attr, Target, TargetKind, register_tag, register_target_kind
from tvm.target.tag import find_tags, short_names


@pytest.fixture
def acme(registries):
    register_target_kind(TargetKind(
        "acmegpu", attrs={"arch": Attr(str, "ac_10"), "lanes": Attr(int, 4)},
        arch_attr="arch", arch_pattern=r"ac_\d+x?"))
    register_tag("acme/acme-z900", {"kind": "acmegpu", "arch": "ac_90x", "lanes": 8})
    register_tag("acme/acme-z100", {"kind": "acmegpu", "arch": "ac_10", "lanes": 2})
    register_tag("acme/turbo-rx-7700", {"kind": "acmegpu", "arch": "ac_77"})
    register_tag("acme/cloud/acme-c5.large", {"kind": "acmegpu", "lanes": 1})


def test_short_names_rule():
    assert short_names("nvidia/nvidia-h200") == ("nvidia/h200", "nvidia-h200", "h200")
    assert short_names("aws/trn2/trn2.3xlarge") == ("aws/trn2.3xlarge", "trn2.3xlarge")
    assert short_names("apple/m1-gpu") == ("m1-gpu",)
    assert short_names("nokind") == ()


@pytest.mark.parametrize("name", ["acme/z900", "z900", "Z900", "acme/ACME-Z900", "acme-z900"])
def test_short_names_make_the_tag_target(acme, name):
    target = Target(name)
    assert target.tag == "acme/acme-z900"
    assert target == Target("acme/acme-z900")
    assert target.attrs["lanes"] == 8


def test_short_name_with_options_and_nested_tag(acme):
    assert Target("z900 -lanes=2").attrs["lanes"] == 2
    assert Target("c5.large").tag == "acme/cloud/acme-c5.large"
    assert Target("acme/c5.large").tag == "acme/cloud/acme-c5.large"


def test_trailing_words_name_one_tag(acme):
    assert Target("rx-7700").tag == "acme/turbo-rx-7700"
    assert Target("rx7700").tag == "acme/turbo-rx-7700"


def test_bare_architecture(acme):
    target = Target("ac_90x")
    assert target.kind.name == "acmegpu" and target.attrs["arch"] == "ac_90x"
    assert target.tag is None
    assert target == Target("acmegpu -arch=ac_90x")


def test_ambiguous_names(acme):
    register_tag("acme/other-z900", {"kind": "acmegpu", "lanes": 1})
    register_tag("acmeii/z900", {"kind": "acmegpu", "lanes": 1})
    assert sorted(find_tags("z900")) == ["acme/acme-z900", "acmeii/z900"]
    with pytest.raises(TargetError, match=r"target 'z900' is ambiguous: it names the tags "
                                          r"'acme/acme-z900', 'acmeii/z900'; use one of them"):
        Target("z900")
    register_target_kind(TargetKind("acmegpu2", attrs={"arch": Attr(str)}, arch_attr="arch",
                                    arch_pattern=r"ac_\d+"))
    with pytest.raises(TargetError, match=r"'ac_12' is ambiguous: it is an architecture of target "
                                          r"kinds 'acmegpu', 'acmegpu2'; use one of "
                                          r"'acmegpu -arch=ac_12', 'acmegpu2 -arch=ac_12'"):
        Target("ac_12")


def test_identical_tags_under_two_names_are_one(acme):
    register_tag("acme/z100", {"kind": "acmegpu", "arch": "ac_10", "lanes": 2})
    assert find_tags("z100") == ["acme/z100"]


def test_suggestions_rank_by_model_name(acme):
    # Spelling alone ranks "acme/z100" below longer tag names; the model name "z900" is close.
    with pytest.raises(TargetError, match=r"unknown target 'acme/z909'.*did you mean "
                                          r"'acme/acme-z900'"):
        Target("acme/z909")
    with pytest.raises(TargetError, match=r"did you mean 'acme/acme-z900'"):
        Target("z90")


def test_arch_attr_needs_a_pattern_and_an_attribute():
    with pytest.raises(ValueError, match="arch_attr must name one of its attributes"):
        TargetKind("k1", attrs={"arch": str}, arch_attr="arch")
    with pytest.raises(ValueError, match="arch_attr must name one of its attributes"):
        TargetKind("k2", attrs={"arch": str}, arch_attr="mcpu", arch_pattern="x")


def test_suggestions_helper_spellings_and_synonyms():
    tags = {"v/v-h200": ["h200"], "v/v-t2000": ["t2000"], "v/p620": ["p620"]}
    assert suggestions("v/h200x", tags, spellings=tags)[0] == "v/v-h200"
    assert suggestions("h20", tags, spellings=tags) == ["v/v-h200"]
    assert suggestions("h20", tags) == []  # by spelling alone, nothing is close
    # a mapping of anything else is a plain list of candidates (its keys)
    assert did_you_mean("alfa", {"alpha": object()}) == "did you mean 'alpha'?"
    assert did_you_mean("matmul", ["gemm", "mul", "sub"], synonyms={"matmul": "gemm"}) == (
        "did you mean 'gemm' or 'mul'?")
    # A synonym of a name that is not a candidate is not offered.
    assert did_you_mean("matmul", ["mul"], synonyms={"matmul": "gemm"}) == "did you mean 'mul'?"


def test_every_installed_tag_answers_to_its_short_names():
    """Every tag of every installed backend: each short name gives the tag's target (or one of
    the same config), or an error naming the tags it could mean."""
    from tvm.target import list_tags  # noqa: PLC0415 - beside the loop that needs it

    tags = list_tags()
    if not tags:
        pytest.skip("no backend with target tags is installed")
    for tag in tags:
        for name in short_names(tag):
            found = find_tags(name)
            assert tag in found or tags[found[0]] == tags[tag], (tag, name, found)
