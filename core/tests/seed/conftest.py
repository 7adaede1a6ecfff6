"""The seed's own tests, restated against this project's API (issue 18).

Each file restates one group of the seed's tests (``../shared/design/seed-digest.md`` section 11)
as programs of our API: same programs, same expected text and behaviour. A test that needs a
backend skips when that backend is not installed (core's own session); the ``all`` session and
each backend's session run them.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


def load_backend(name: str) -> ModuleType:
    """Load backend ``name`` (through its entry point, or in process from a source checkout);
    skip the test when its package is not importable."""
    package = pytest.importorskip(f"tvm_backend_{name}")
    package.register_backend()
    import tvm.driver

    tvm.driver.ensure_builtin_backends()  # the host kinds (c, llvm) some tags name
    return importlib.import_module(f"tvm.backend.{name}")


@pytest.fixture(scope="module")
def cuda() -> ModuleType:
    return load_backend("cuda")


@pytest.fixture(scope="module")
def trn() -> ModuleType:
    return load_backend("trn")


@pytest.fixture(scope="module")
def metal() -> ModuleType:
    return load_backend("metal")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Compiled kernels go to a cache of the test's own, never the user's."""
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path_factory.mktemp("tvm-cache")))
