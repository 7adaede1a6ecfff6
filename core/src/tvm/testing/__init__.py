"""Testing helpers: the pytest plugin (markers ``gpu`` and ``macos``, fixtures), numeric helpers,
and the conformance kit (:mod:`tvm.testing.conformance`) that backends run against themselves."""

from __future__ import annotations

import contextlib
import importlib

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


def _register_numpy_dtype_names() -> None:
    """Make numpy read the names ``"bfloat16"``, ``"float8_e4m3fn"``, ... as the seed's tests
    write them (``np.zeros(shape, dtype="bfloat16")``): importing ml_dtypes registers them. Done
    by ``import tvm.testing`` (test code), never by ``import tvm``; nothing happens without
    ml_dtypes."""
    with contextlib.suppress(ImportError):
        importlib.import_module("ml_dtypes")


_register_numpy_dtype_names()

__all__ = [
    "BackendConformance", "assert_allclose", "cuda_unavailable", "generate_random_array", "installed_backends",
    "np_dtype_from_str", "numpy_dtype", "random_array", "requires_cuda",
    "requires_cuda_compute_version", "requires_gpu", "run_backend_conformance",
    "skip_if_installed",
]
