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
from tvm.transform import Pipeline, Sequential


def test_core_pipelines_are_registered_lazily():
    assert PIPELINE_MAP.owner_of("default") == "core"
    assert PIPELINE_MAP.owner_of("tirx") == "core"


def test_register_get_and_kwargs(backends):
    seen = []
    register_tir_pipeline("mine", lambda **kw: seen.append(kw) or Pipeline("mine"))
    assert get_tir_pipeline("mine", opt=3) == Pipeline("mine") and seen == [{"opt": 3}]

    @register_tir_pipeline("decorated")
    def decorated(**kw):
        return Pipeline("decorated")

    assert get_tir_pipeline("decorated").name == "decorated"


def test_a_factory_returning_the_older_tuple_is_read_as_a_pipeline(backends):
    main = Sequential([], name="main")
    register_tir_pipeline("tupled", lambda **kw: (main, None, lambda: Sequential([], name="d")))
    pipeline = get_tir_pipeline("tupled")
    assert (pipeline.name, pipeline.main, pipeline.host) == ("tupled", main, None)
    assert pipeline.device.pass_name == "d"


def test_a_factory_returning_something_else_is_an_error(backends):
    register_tir_pipeline("junk", lambda **kw: "junk")
    with pytest.raises(TypeError, match="TIR pipeline 'junk': its factory returned str, not a "
                                        "tvm.transform.Pipeline"):
        get_tir_pipeline("junk")


def test_conflict_and_override(backends):
    register_tir_pipeline("mine", lambda **kw: Pipeline("one"))
    with pytest.raises(RegistrationConflict, match="tir pipeline 'mine' is registered twice"):
        register_tir_pipeline("mine", lambda **kw: Pipeline("two"))
    register_tir_pipeline("mine", lambda **kw: Pipeline("three"), override=True)
    assert get_tir_pipeline("mine").name == "three"


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
