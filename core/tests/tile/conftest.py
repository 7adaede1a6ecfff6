"""Fixtures of the tile-primitive tests: a registry sandbox and two target kinds.

``c`` stands for the host target (serial threads; registered here only if the host backend has
not registered it) and ``fakegpu`` for a GPU-like target whose scopes have a real barrier op.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tvm.tirx.operator.tile_primitive  # noqa: F401 - registers core's ops and fallbacks first
from tvm._registry import snapshot_all
from tvm.ir import Evaluate, Op
from tvm.target import KIND_REGISTRY, Target, TargetKind, register_target_kind
from tvm.tirx.operator.tile_primitive import register_scope_barrier


def _load_builtin_backends() -> None:
    # Registrations made lazily inside a test would be undone by the sandbox below while the
    # backend stays "loaded"; load the host backend before any snapshot is taken.
    try:
        from tvm.driver import ensure_builtin_backends
    except ImportError:  # no driver in this checkout yet
        return
    ensure_builtin_backends()
    import contextlib
    import importlib

    for name in ("tvm.tirx.compilation_pipeline", "tvm.tirx.pipeline", "tvm.tirx.transform"):
        with contextlib.suppress(ImportError):  # they register pipelines and passes on import
            importlib.import_module(name)


_load_builtin_backends()


@pytest.fixture(autouse=True)
def registry_sandbox() -> Iterator[None]:
    restore = snapshot_all()
    try:
        yield
    finally:
        restore()


@pytest.fixture
def fakegpu() -> Target:
    register_target_kind(TargetKind("fakegpu", default_keys=("fakegpu", "gpu")))
    barrier = Op.register("tirx.test_scope_barrier")
    register_scope_barrier("fakegpu", "*",
                           lambda sctx, scope: Evaluate(barrier(scope)))
    return Target("fakegpu")


@pytest.fixture
def host_target() -> Target:
    if "c" not in KIND_REGISTRY:
        register_target_kind(TargetKind("c"))
    return Target("c")
