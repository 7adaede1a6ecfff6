"""Testing helpers: the pytest plugin (markers ``gpu`` and ``macos``, fixtures), numeric helpers,
and the conformance kit (:mod:`tvm.testing.conformance`) that backends run against themselves."""

from __future__ import annotations

from .conformance import BackendConformance, run_backend_conformance
from .utils import assert_allclose, installed_backends, random_array, skip_if_installed

__all__ = [
    "BackendConformance", "assert_allclose", "installed_backends", "random_array",
    "run_backend_conformance", "skip_if_installed",
]
