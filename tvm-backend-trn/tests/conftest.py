"""Load the Trainium backend for the tests (installed: through its entry point; a source
checkout on PYTHONPATH: as an in-process plugin)."""

from __future__ import annotations

import numpy as np
import pytest

import tvm  # noqa: F401 - loads the installed backends
from tvm_backend_trn import register_backend

register_backend()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
