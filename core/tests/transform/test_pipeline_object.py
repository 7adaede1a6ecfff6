"""``tvm.transform.Pipeline``: named stages, printed, built by every registered factory, and the
older forms ``tvm.compile`` still reads (``Pipeline.of``)."""

from __future__ import annotations

import dataclasses

import pytest

import tvm.backend
from tvm.ir import IRModule
from tvm.tirx.compilation_pipeline import PIPELINE_MAP, get_tir_pipeline
from tvm.tirx.pipeline import tirx_pipeline
from tvm.tirx.transform import StmtSimplify
from tvm.transform import Pass, Pipeline, Sequential


def test_stages_are_named_and_in_order():
    main, device = Sequential([StmtSimplify()], name="m"), Sequential([], name="d")
    pipeline = Pipeline("mine", main, device=device)
    assert list(pipeline.stages()) == [("main", main), ("device", device)]
    assert [s for s, _ in pipeline.stages(include_empty=True)] == ["main", "host", "device"]


def test_it_is_frozen_and_replace_makes_a_variant():
    pipeline = tirx_pipeline()
    with pytest.raises(dataclasses.FrozenInstanceError):
        pipeline.main = None  # type: ignore[misc]
    variant = dataclasses.replace(pipeline, name="mine", host=None)
    assert (variant.name, variant.host, variant.main) == ("mine", None, pipeline.main)


def test_it_prints_every_stage():
    text = str(Pipeline("p", Sequential([StmtSimplify()], name="m")))
    assert text.splitlines() == ["Pipeline('p',", "  main=Sequential('m', [",
                                 "    StmtSimplify(),", "  ]),", "  host=None,", "  device=None,",
                                 ")"]
    assert str(tirx_pipeline()).startswith("Pipeline('tirx',\n  main=Sequential('tirx', [")


def test_a_stage_must_be_a_pass():
    with pytest.raises(TypeError, match="Pipeline 'p': stage 'host' must be a tvm.transform.Pass "
                                        "or None, got function; wrap a function with "
                                        "tvm.transform.module_pass"):
        Pipeline("p", host=lambda mod: mod)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty name"):
        Pipeline("")


def test_of_reads_a_pass_a_function_and_the_older_tuple():
    main = Sequential([], name="m")
    assert Pipeline.of(main, name="x") == Pipeline("x", main)
    pipeline = tirx_pipeline()
    assert Pipeline.of(pipeline) is pipeline

    def identity(mod):
        return mod

    wrapped = Pipeline.of(identity).main
    assert isinstance(wrapped, Pass) and wrapped.pass_name == "identity"
    mod = IRModule({})
    assert wrapped(mod) is mod

    # the tuple: finalizers are passes, None, or factories called once, here
    calls = []

    def finalize_host():
        calls.append("host")
        return Sequential([], name="h")

    older = Pipeline.of((main, finalize_host, None), name="old")
    assert (older.name, older.main, older.host.pass_name, older.device) == ("old", main, "h", None)
    assert calls == ["host"]


def test_of_refuses_other_things():
    with pytest.raises(TypeError, match="a pipeline tuple is .* got 2 items"):
        Pipeline.of((None, None))
    with pytest.raises(TypeError, match="tir_pipeline must be a pipeline name, a Pipeline, a Pass"):
        Pipeline.of(3)
    with pytest.raises(TypeError, match="stage old.host: expected a Pass or a mod -> mod function, got int"):
        Pipeline.of((None, 3, None), name="old")


def test_a_function_stage_must_return_a_module():
    bad = Pipeline.of(lambda mod: 3).main
    with pytest.raises(TypeError, match="returned int, not an IRModule"):
        bad(IRModule({}))


def test_every_registered_pipeline_builds_a_pipeline():
    tvm.backend.load_all()
    names = sorted(PIPELINE_MAP.keys())
    assert {"default", "s_tir", "tirx"} <= set(names)
    for name in names:
        pipeline = get_tir_pipeline(name)
        assert isinstance(pipeline, Pipeline), name
        assert all(isinstance(step, Pass) for _, step in pipeline.stages()), name
        assert pipeline.main is not None and str(pipeline).startswith("Pipeline("), name
