"""The TIR pipeline registry and the default-pipeline hook."""

from __future__ import annotations

import pytest

import tvm.backend
from tvm.error import BackendError, RegistrationConflict
from tvm.testing import skip_if_installed
from tvm.tirx.compilation_pipeline import (
    PIPELINE_MAP,
    get_default_tir_pipeline,
    get_tir_pipeline,
    register_tir_pipeline,
)


def test_core_pipelines_are_registered_lazily():
    assert PIPELINE_MAP.owner_of("default") == "core"
    assert PIPELINE_MAP.owner_of("tirx") == "core"


def test_register_get_and_kwargs(backends):
    register_tir_pipeline("mine", lambda **kw: ("mine", kw))
    assert get_tir_pipeline("mine", opt=3) == ("mine", {"opt": 3})

    @register_tir_pipeline("decorated")
    def decorated(**kw):
        return "decorated"

    assert get_tir_pipeline("decorated") == "decorated"


def test_conflict_and_override(backends):
    register_tir_pipeline("mine", lambda **kw: 1)
    with pytest.raises(RegistrationConflict, match="tir pipeline 'mine' is registered twice"):
        register_tir_pipeline("mine", lambda **kw: 2)
    register_tir_pipeline("mine", lambda **kw: 3, override=True)
    assert get_tir_pipeline("mine") == 3


@skip_if_installed("trn")
def test_unknown_lists_known_and_hints(backends):
    with pytest.raises(ValueError, match="unknown TIR pipeline 'nope'; known pipelines: .*default"):
        get_tir_pipeline("nope")
    with pytest.raises(ValueError, match=r"pip install --find-links \S+ tvm-backend-trn"):
        get_tir_pipeline("trn")


def test_invalid_registration(backends):
    with pytest.raises(TypeError, match="must be callable"):
        register_tir_pipeline("x", "not callable")


def test_default_pipeline_hook(backends):
    backends.add(
        "alpha",
        """
        @hookimpl
        def tvm_target_kinds():
            from tvm.target import TargetKind
            return [TargetKind("alpha_kind"), TargetKind("alpha_other")]

        @hookimpl
        def tvm_tir_pipelines():
            return {"alpha": lambda **kw: "alpha pipeline"}

        @hookimpl
        def tvm_default_pipeline(target):
            return "alpha" if target.kind.name == "alpha_kind" else None
        """,
    )
    tvm.backend.load("alpha")
    assert get_default_tir_pipeline("alpha_kind") == "alpha"
    assert get_default_tir_pipeline("alpha_other") == "default"
    assert PIPELINE_MAP.owner_of("alpha") == "alpha"


def test_backend_pipeline_conflicting_with_core(backends):
    backends.add(
        "alpha",
        """
        @hookimpl
        def tvm_tir_pipelines():
            return {"default": lambda **kw: None}
        """,
    )
    with pytest.raises(
        BackendError,
        match="tir pipeline 'default' is registered twice: by tvm-core and by tvm-backend-alpha",
    ):
        tvm.backend.load("alpha")
    assert PIPELINE_MAP.owner_of("default") == "core"
