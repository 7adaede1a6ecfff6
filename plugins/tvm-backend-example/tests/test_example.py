"""The example backend, installed: what it registers, through the public API."""

from __future__ import annotations

import importlib

import pytest

import tvm
import tvm.backend

tvm.backend._autoload()  # a no-op when import tvm already ran it


@pytest.fixture(scope="module", autouse=True)
def loaded():
    import tvm_backend_example

    tvm_backend_example.register_backend()  # installed: tvm.backend.load("example")


def test_listed_as_loaded():
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "example"]
    assert record.state == "loaded"
    assert record.distribution == "tvm-backend-example"
    assert record.target_kinds == ("example",)
    assert record.n_tags == 2 and record.pipelines == ("example",)
    assert record.namespaces == ("example",) and record.n_ops == 1


def test_aliases():
    import tvm_backend_example

    assert tvm.backend.example is tvm_backend_example
    assert tvm.tirx.example is tvm_backend_example
    assert importlib.import_module("tvm.tirx.example.tags") is tvm_backend_example.tags


def test_target_kind_and_tags():
    from tvm.error import TargetError
    from tvm.target import Target, list_tags

    assert str(Target("example/demo-board")) == "example -mcpu=demo-board -vector_width=8"
    assert Target("example").attrs["vector_width"] == 4
    assert "example/tiny" in list_tags()
    with pytest.raises(TargetError, match="vector_width must be a power of two"):
        Target({"kind": "example", "vector_width": 3})


def test_pipeline_and_default():
    from tvm.target import Target
    from tvm.tirx.compilation_pipeline import (
        PIPELINE_MAP,
        get_default_tir_pipeline,
        get_tir_pipeline,
    )
    from tvm.transform import Pipeline

    assert PIPELINE_MAP.owner_of("example") == "example"
    assert get_default_tir_pipeline(Target("example")) == "example"
    pipeline = get_tir_pipeline("example")
    assert isinstance(pipeline, Pipeline) and pipeline.name == "example"
    assert [s for s, _ in pipeline.stages()] == ["main", "host", "device"]


def test_intrinsic_call():
    from tvm.ir import Var
    from tvm.script.namespace import NAMESPACES

    a, b, c = (Var(n, "float32") for n in "abc")
    call = NAMESPACES["example"].fma(a, b, c)
    assert call.op.name == "tirx.example.fma"
    assert call.op.printer_name == "example.fma"
    assert str(call.dtype) == "float32"


def test_intrinsic_prints_and_round_trips():
    from tvm import script
    from tvm.ir import structural_equal

    source = (
        "@T.prim_func\n"
        'def f(A: T.Buffer((4,), "float32")):\n'
        "    for i in range(4):\n"
        "        A[i] = T.example.fma(A[i], A[i], T.float32(1.0))\n"
    )
    func = script.from_source(source)
    text = script.to_script(func)
    assert "        A[i] = T.example.fma(A[i], A[i], T.float32(1.0))" in text
    assert structural_equal(func, script.from_source(text))


def test_file_layout():
    """The file layout every backend has (tvm.testing.layout): `pytest tests -k layout`."""
    import tvm_backend_example
    from tvm.testing.layout import check_backend_layout

    check_backend_layout(tvm_backend_example)
