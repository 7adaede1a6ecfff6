"""The spellings of NVIDIA targets a newcomer tries (issue 27): short tag names and bare arches."""

from __future__ import annotations

import pytest

from tvm.error import TargetError
from tvm.target import Target


@pytest.mark.parametrize("name", ["nvidia/h200", "h200", "H200", "nvidia-h200"])
def test_short_names_of_the_h200(name):
    target = Target(name)
    assert target.tag == "nvidia/nvidia-h200"
    assert target.attrs["arch"] == "sm_90a"


def test_bare_arch_is_a_cuda_target():
    assert Target("sm_90a") == Target("cuda -arch=sm_90a")
    assert Target("sm_100a").attrs["arch"] == "sm_100a"
    with pytest.raises(TargetError, match=r"invalid CUDA arch 'sm_89a': the 'a' suffix exists "
                                          r"from sm_90 on \(use 'sm_89'\)"):
        Target("sm_89a")


def test_product_words_name_one_gpu():
    assert Target("rtx-4090").tag == "nvidia/geforce-rtx-4090"
    assert Target("titan-v").tag == "nvidia/titan-v"  # listed twice with one config


def test_suggestions_by_gpu_name():
    with pytest.raises(TargetError) as info:
        Target("nvidia/h300")
    hint = str(info.value).split("did you mean ", 1)[1].split("?")[0]
    assert set(hint.split(" or ")) == {"'nvidia/nvidia-h800'", "'nvidia/nvidia-h200'",
                                       "'nvidia/nvidia-h100'"}
    with pytest.raises(TargetError, match=r"did you mean 'nvidia/tesla-k40'"):
        Target("k40x")
