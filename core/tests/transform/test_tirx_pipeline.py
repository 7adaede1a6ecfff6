"""Core pipelines: shape of the factories' result, stage list, end-to-end lowering."""

from __future__ import annotations

import numpy as np
import pytest

import tvm.tirx.operator.tile_primitive  # noqa: F401 - registers the tile primitives
from tvm import ir
from tvm.codegen.signature import check_arguments, evaluate, function_signature
from tvm.ir import (
    Buffer,
    BufferLoad,
    BufferStore,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    PrimFunc,
    ScopeIdDef,
    SeqStmt,
    TilePrimitiveCall,
    Var,
)
from tvm.tirx import op
from tvm.tirx.compilation_pipeline import get_tir_pipeline
from tvm.tirx.pipeline import default_pipeline, tirx_pipeline
from tvm.transform import PassContext, Sequential

STAGES = ["TilePrimitiveDispatch", "FuseRowLoops", "LowerKernelForm", "StmtSimplify", "FlattenBuffer",
          "VectorizeLoop", "UnrollLoop", "StmtSimplify", "SplitHostDevice"]


def test_factories_return_main_and_finalizers():
    for factory, name in ((tirx_pipeline, "tirx"), (default_pipeline, "s_tir")):
        pipeline = factory()
        assert isinstance(pipeline.main, Sequential) and pipeline.main.pass_name == name
        assert [p.pass_name for p in pipeline.main] == STAGES
        assert isinstance(pipeline.host, Sequential) and isinstance(pipeline.device, Sequential)


def test_registry_builds_core_pipelines():
    main = get_tir_pipeline("tirx", disable_vectorize=True).main
    assert main[5].options() == {"enable": False}
    main = get_tir_pipeline("default", split_host_device=False, disable_unroll=True).main
    assert [p.pass_name for p in main] == [s for s in STAGES if s not in ("SplitHostDevice", "UnrollLoop")]


def test_pipeline_prints_its_stages():
    main = tirx_pipeline().main
    assert str(main).splitlines() == [
        "Sequential('tirx', [", "  TilePrimitiveDispatch(),", "  FuseRowLoops(),",
        "  LowerKernelForm(),", "  StmtSimplify(),", "  FlattenBuffer(),", "  VectorizeLoop(enable=True),",
        "  UnrollLoop(max_extent=1024),", "  StmtSimplify(),", "  SplitHostDevice(),", "])"]


def _kernel_2d(target):
    n = Var("n")
    A = Buffer("A", [n, 64], "float32")
    B = Buffer("B", [n, 64], "float32")
    bx, tx, v = Var("bx"), Var("tx"), Var("v")
    col = tx * 4 + v
    store = BufferStore(B, BufferLoad(A, [bx, col]) * 2.0, [bx, col])
    body = SeqStmt([Evaluate(op.device_entry()), ScopeIdDef("cta_id", [bx], [n]),
                    ScopeIdDef("thread_id", [tx], [16]), For(v, 0, 4, ForKind.VECTORIZED, store)])
    return PrimFunc([A.data, B.data], body, {A.data: A, B.data: B}, attrs={"target": target},
                    name="scale"), n


def test_end_to_end_device_lowering(gpu_target, tmp_path):
    func, n = _kernel_2d(gpu_target)
    pipeline = tirx_pipeline()
    with PassContext(dump_dir=tmp_path):
        mod = pipeline.main(func)
        mod = pipeline.host(mod)
    assert sorted(p.name for p in tmp_path.iterdir())[:10] == [
        "00_input.py", "01_TilePrimitiveDispatch.py", "02_FuseRowLoops.py", "03_LowerKernelForm.py",
        "04_StmtSimplify.py", "05_FlattenBuffer.py", "06_VectorizeLoop.py", "07_UnrollLoop.py",
        "08_StmtSimplify.py", "09_SplitHostDevice.py"]
    kernel = mod["scale_kernel"]
    ir.verify(kernel)
    launch = kernel.attrs["tirx.launch"]
    specs = function_signature(mod["scale"])
    values = check_arguments(specs, [np.zeros((10, 64), "float32")] * 2, device_type="cpu")
    assert evaluate(launch.grid[0], values) == 10 and evaluate(launch.block[0], values) == 16
    # flat, vectorized store: B_1d[Ramp(bx * 64 + tx * 4, 1, 4)] = A_1d[...] * Broadcast(2, 4)
    stores = []
    ir.post_order_visit(kernel.body, lambda x: stores.append(x) if isinstance(x, BufferStore) else None)
    (store,) = stores
    assert len(store.indices) == 1 and isinstance(store.indices[0], ir.Ramp)
    assert store.value.dtype == "float32x4"


def test_end_to_end_host_target_keeps_one_function(host_target):
    func, _ = _kernel_2d(host_target)
    mod = tirx_pipeline().main(func)
    assert list(mod.functions) == ["scale"]
    tags = []
    ir.post_order_visit(mod["scale"].body, lambda x: tags.append(x.thread_tag) if isinstance(x, For) else None)
    assert sorted(t for t in tags if t) == ["blockIdx.x", "threadIdx.x"]


def test_tile_primitive_is_dispatched(host_target):
    A = Buffer("A", [4, 8], "float32")
    call = TilePrimitiveCall("tirx.tile.fill", [A.full_region(), FloatImm("float32", 3.0)])
    func = PrimFunc([A.data], call, {A.data: A}, attrs={"target": host_target}, name="fill")
    mod = tirx_pipeline().main(func)
    found = []
    ir.post_order_visit(mod["fill"].body, lambda x: found.append(x) if isinstance(x, (TilePrimitiveCall, BufferStore)) else None)
    assert found and all(isinstance(x, BufferStore) for x in found)
    assert all(len(x.indices) == 1 for x in found)


def _have_cc() -> bool:
    import os
    import shutil

    return shutil.which(os.environ.get("CC", "cc")) is not None


@pytest.mark.skipif(not _have_cc(), reason="no C compiler")
def test_lowered_code_runs_on_the_host_target():
    """Unrolled + vectorized + flattened loops and a kernel-form function, through tvm.compile."""
    import tvm

    A, B = Buffer("A", [8, 16], "float32"), Buffer("B", [8, 16], "float32")
    i, j, v = Var("i"), Var("j"), Var("v")
    col = j * 4 + v
    store = BufferStore(B, BufferLoad(A, [i, col]) * 2.0 + 1.0, [i, col])
    body = For(i, 0, 8, ForKind.SERIAL, For(j, 0, 4, ForKind.UNROLLED, For(v, 0, 4, ForKind.VECTORIZED, store)))
    ex = tvm.compile(PrimFunc([A.data, B.data], body, {A.data: A, B.data: B}, name="affine"), target="c")
    a = np.random.default_rng(0).random((8, 16), dtype="float32")
    b = np.zeros_like(a)
    ex(a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    with pytest.raises(ValueError, match="^affine: argument 'A': expected dtype float32, got float64$"):
        ex(a.astype("float64"), b)

    C = Buffer("C", [64], "float32")
    bx, w, lane = Var("bx"), Var("w"), Var("lane")
    kb = SeqStmt([Evaluate(op.device_entry()), ScopeIdDef("cta_id", [bx], [2]),
                  ScopeIdDef("warp_id", [w], [1]), ScopeIdDef("lane_id", [lane], [32]),
                  BufferStore(C, ir.Cast("float32", bx * 100 + lane), [bx * 32 + w * 32 + lane])])
    ex = tvm.compile(PrimFunc([C.data], kb, {C.data: C}, name="ids"), target="c")
    c = np.zeros(64, "float32")
    ex(c)
    np.testing.assert_array_equal(c, np.concatenate([np.arange(32), 100 + np.arange(32)]))
