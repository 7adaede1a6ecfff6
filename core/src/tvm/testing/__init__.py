"""Testing helpers: the pytest plugin (markers ``gpu`` and ``macos``, fixtures), numeric helpers,
and the conformance kit (:mod:`tvm.testing.conformance`) that backends run against themselves."""

from __future__ import annotations

from .conformance import BackendConformance, run_backend_conformance
from .utils import (
    assert_allclose,
    cuda_unavailable,
    generate_random_array,
    installed_backends,
    np_dtype_from_str,
    numpy_dtype,
    random_array,
    requires_cuda,
    requires_cuda_compute_version,
    requires_gpu,
    skip_if_installed,
)

__all__ = [
    "BackendConformance", "assert_allclose", "cuda_unavailable", "generate_random_array", "installed_backends",
    "np_dtype_from_str", "numpy_dtype", "random_array", "requires_cuda",
    "requires_cuda_compute_version", "requires_gpu", "run_backend_conformance",
    "skip_if_installed",
]
