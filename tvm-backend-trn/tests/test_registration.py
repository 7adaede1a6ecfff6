"""What the backend registers: target kind and tags, pipeline, the T.nki namespace and its ops."""

from __future__ import annotations

import importlib

import pytest

import tvm
from tvm import script
from tvm.ir import Op, structural_equal
from tvm.target import Target, list_tags


def test_backend_loaded_and_aliases():
    import tvm_backend_trn

    (rec,) = [r for r in tvm.backend.list_backends() if r.name == "trn"]
    assert rec.state == "loaded" and rec.target_kinds == ("trn",)
    assert rec.namespaces == ("nki",) and rec.pipelines == ("trn",) and rec.n_ops == 16
    assert tvm.backend.trn is tvm_backend_trn and tvm.tirx.trn is tvm_backend_trn
    assert importlib.import_module("tvm.tirx.trn.transform").TrnNaiveAllocator is not None
    assert tvm_backend_trn.register_backend() is tvm_backend_trn  # idempotent


def test_tags():
    tags = list_tags()
    assert tags["aws/trn1/trn1.2xlarge"] == {
        "kind": "trn", "num-cores": 2, "partition_size": 128,
        "max_sbuf_size_per_partition": 196608, "max_psum_size_per_partition": 16384}
    assert tags["aws/trn1/trn1.32xlarge"]["num-cores"] == 32
    assert tags["aws/trn2/trn2.48xlarge"]["max_sbuf_size_per_partition"] == 229376
    t = Target("aws/trn1/trn1.2xlarge")
    assert t.kind.name == "trn" and t.attrs["num-cores"] == 2


def test_target_validation():
    from tvm.error import TargetError

    assert Target("trn").attrs["partition_size"] == 128
    with pytest.raises(TargetError, match="partition_size must be 128"):
        Target({"kind": "trn", "partition_size": 64})


def test_default_pipeline():
    from tvm.tirx.compilation_pipeline import get_default_tir_pipeline, get_tir_pipeline

    assert get_default_tir_pipeline(Target("aws/trn1/trn1.2xlarge")) == "trn"
    pipeline = get_tir_pipeline("trn")
    assert [p.pass_name for p in pipeline.device] == ["StmtSimplify"] and not pipeline.host
    assert [p.pass_name for p in pipeline.main] == [
        "TrnPrivateBufferAlloc", "TrnNaiveAllocator", "TilePrimitiveDispatch",
        "tirx.backend.trn.LowerTrainiumLayout", "StmtSimplify"]


NKI_OPS = ["load", "store", "tensor_copy", "matmul", "activation", "activation_reduce",
           "reciprocal", "tensorreduce", "tensortensor", "tensorscalar", "tensorscalar_reduce",
           "scalar_tensor_tensor", "scalar_tensor_scalar", "memset", "identity",
           "affine_select"]


@pytest.mark.parametrize("name", NKI_OPS)
def test_ops_are_device_intrinsics(name):
    from tvm.script import tirx as T

    op = Op.get(f"tirx.nki.{name}")
    assert op.category.value == "device_intrin" and op.namespace == "nki"
    assert op.printer_name == f"nki.{name}"
    assert getattr(T.nki, name).__tir_op_name__ == f"tirx.nki.{name}"


def test_not_root_exports():
    import tvm.tirx
    from tvm.script import tirx as T

    assert not hasattr(tvm.tirx, "nki_load") and not hasattr(T, "nki_load")
    assert hasattr(tvm.tirx.trn.op, "nki_load")


# The seed's printed forms (digest §9, §11) and one line for each of the 16 ops.
LINES = [
    "T.nki.load(A, B)",
    "T.nki.store(B, A)",
    "T.nki.tensor_copy(A, B)",
    "T.nki.matmul(A, A, B, T.bool(True))",
    'T.nki.activation(A, B, "relu", T.float32(0.0), T.float32(1.0))',
    'T.nki.activation_reduce(C, A, B, "exp", "sum", T.float32(0.0), T.float32(1.0))',
    "T.nki.reciprocal(A, B)",
    'T.nki.tensorreduce(A, B, "sum", T.bool(False), 0)',
    'T.nki.tensortensor(A, A, B, "add")',
    'T.nki.tensorscalar(A, B, T.float32(2.0), "mul", T.bool(False))',
    'T.nki.tensorscalar_reduce(A, A, T.float32(1.0), "mul", "sum", T.bool(False), T.bool(False))',
    'T.nki.scalar_tensor_tensor(A, B, T.float32(2.0), A, "mul", "add", T.bool(False), '
    'T.bool(False))',
    'T.nki.scalar_tensor_scalar(A, B, T.float32(2.0), T.float32(1.0), "mul", "add", '
    'T.bool(False), T.bool(False))',
    "T.nki.memset(A, T.float32(0.0))",
    "T.nki.identity(A[0:1, 0:1], 1)",
    'T.nki.affine_select(A, nki_i0 >= nki_i1, B, T.float32(0.0))',
]


def _source(line: str) -> str:
    return ("@T.prim_func\n"
            'def f(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), '
            'C: T.Buffer((128, 1), "float32")):\n'
            + ("    nki_i0 = T.int32()\n    nki_i1 = T.int32()\n" if "nki_i" in line else "")
            + f"    {line}\n")


@pytest.mark.parametrize("line", LINES, ids=[ln.split("(")[0] for ln in LINES])
def test_printed_form_and_round_trip(line):
    func = script.from_source(_source(line))
    text = script.to_script(func)
    assert f"    {line}\n" in text
    again = script.from_source(text)
    # affine_select's predicate uses free index variables (nki_i0, ...)
    assert structural_equal(func, again, map_free_vars="nki_i" in line)
    assert script.to_script(again) == text


def test_defaults_are_appended():
    from tvm.ir import Buffer
    from tvm.script import tirx as T

    a, b = Buffer("A", (128, 128)), Buffer("B", (128, 128))
    call = T.nki.matmul(a, a, b)
    assert str(call.args[3].dtype) == "bool" and call.args[3].value == 1
    act = T.nki.activation(a, b, "exp")
    assert [x.value for x in act.args[3:]] == [0.0, 1.0]
    # the seed test passes 6 args to the 7-parameter builder: reverse=False is appended
    tsr = T.nki.tensorscalar_reduce(a, a, 1.0, "mul", "sum", False)
    assert len(tsr.args) == 7 and tsr.args[6].value == 0
