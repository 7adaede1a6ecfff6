"""Every test kernel through tvm.compile and NVRTC for sm_80, sm_90a and sm_100a (no GPU needed)."""

from __future__ import annotations

import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()

from cuda_kernels import KERNELS, KernelCase  # noqa: E402

ARCHS = ("sm_80", "sm_90a", "sm_100a")


def _num(arch: str) -> int:
    return int("".join(c for c in arch if c.isdigit()))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", KERNELS, ids=[k.name for k in KERNELS])
def test_kernel_compiles_with_nvrtc(case: KernelCase, arch: str) -> None:
    num = _num(arch)
    if num < case.min_arch or (case.archs is not None and num not in case.archs):
        pytest.skip(f"{case.name} is not built for {arch}: {case.why}")
    ex = tvm.compile(case.build(), target={"kind": "cuda", "arch": arch})
    assert ex.cubin[:4] == b"\x7fELF"
    assert ex.arch == arch
    src = ex.inspect_source()
    assert 'extern "C" __global__ void __launch_bounds__(' in src
    for name in ex.kernel_names:
        assert f" {name}(" in src


def test_nvrtc_version_supports_the_three_archs() -> None:
    from tvm_backend_cuda.compiler import _supported_archs

    supported = _supported_archs()
    assert not supported or {80, 90, 100} <= set(supported)
