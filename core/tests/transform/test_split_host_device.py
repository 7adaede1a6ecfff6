"""SplitHostDevice (kernels + launcher, launch parameters) and launch-bounds extraction."""

from __future__ import annotations

import pytest

from tvm import ir
from tvm.codegen.signature import evaluate
from tvm.ir import (
    AllocBuffer,
    AttrStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Evaluate,
    FloatImm,
    IntImm,
    IRModule,
    LetStmt,
    PrimFunc,
    ScopeIdDef,
    SeqStmt,
    StringImm,
    Var,
    assert_structural_equal,
)
from tvm.tirx import op
from tvm.tirx.transform import (
    MAX_BLOCKS_PER_CLUSTER,
    MIN_BLOCKS_PER_SM,
    FlattenBuffer,
    LaunchParams,
    LowerKernelForm,
    SplitHostDevice,
    extract_launch_bounds,
)
from tvm.transform import PassContext, Sequential


def _vadd(target=None, *, n=None, extra=(), smem=None):
    size = n if n is not None else 4096
    A, B, C = (Buffer(x, [size], "float32") for x in "ABC")
    bx, tx = Var("bx"), Var("tx")
    grid = (size + 127) // 128 if n is not None else 32
    idx = bx * 128 + tx
    body = [BufferStore(C, BufferLoad(A, [idx]) + BufferLoad(B, [idx]), [idx])]
    if smem is not None:
        body = [AllocBuffer(smem), *body]
    stmts = [Evaluate(op.device_entry()), ScopeIdDef("cta_id", [bx], [grid]),
             ScopeIdDef("thread_id", [tx], [128]), *extra, *body]
    attrs = {"target": target} if target is not None else {}
    func = PrimFunc([A.data, B.data, C.data], SeqStmt(stmts), {b.data: b for b in (A, B, C)},
                    attrs=attrs, name="vadd")
    return func, (A, B, C)


def _split(func):
    return Sequential([LowerKernelForm(), FlattenBuffer(), SplitHostDevice()])(func)


def test_split_produces_kernel_and_launcher(gpu_target):
    func, (A, B, C) = _vadd(gpu_target)
    mod = _split(func)
    assert list(mod.functions) == ["vadd", "vadd_kernel"]
    host, kernel = mod["vadd"], mod["vadd_kernel"]
    assert host.attrs["tirx.is_host"] is True and host.buffer_map == func.buffer_map
    assert kernel.attrs["tirx.is_kernel"] is True
    assert kernel.attrs["global_symbol"] == "vadd_kernel"
    assert kernel.attrs["target"] is gpu_target
    launch = kernel.attrs["tirx.launch"]
    assert isinstance(launch, LaunchParams)
    assert [e.value for e in launch.grid] == [32, 1, 1]
    assert [e.value for e in launch.block] == [128, 1, 1]
    assert [e.value for e in launch.cluster] == [1, 1, 1]
    assert launch.dyn_smem_bytes.value == 0
    # the kernel takes the data handles in order of first use
    assert kernel.params == [A.data, B.data, C.data]
    call = host.body.value
    assert isinstance(host.body, Evaluate) and call.op.name == "tirx.launch_kernel"
    assert isinstance(call.args[0], StringImm) and call.args[0].value == "vadd_kernel"
    assert call.args[1:] == [A.data, B.data, C.data]
    ir.verify(kernel)


def test_symbolic_launch_dims_are_host_expressions(gpu_target):
    n = Var("n")
    func, (A, B, C) = _vadd(gpu_target, n=n)
    mod = _split(func)
    kernel = mod["vadd_kernel"]
    launch = kernel.attrs["tirx.launch"]
    assert_structural_equal(launch.grid[0], (n + 127) // 128)
    assert evaluate(launch.grid[0], {n: 1000}) == 8
    assert kernel.params == [A.data, B.data, C.data, n]  # handles first, then scalars


def test_dynamic_shared_memory_and_cluster(gpu_target):
    smem = Buffer("S", [256], "float16", scope="shared.dyn")
    smem2 = Buffer("S2", [3], "float32", scope="shared.dyn")
    A = Buffer("A", [64], "float32")
    bx, r, tx = Var("bx"), Var("r"), Var("tx")
    body = SeqStmt([Evaluate(op.device_entry()), ScopeIdDef("cta_id", [bx], [8]),
                    ScopeIdDef("cta_id_in_cluster", [r], [2]), ScopeIdDef("thread_id", [tx], [64]),
                    AllocBuffer(smem), AllocBuffer(smem2), BufferStore(A, FloatImm("float32", 0.0), [tx])])
    func = PrimFunc([A.data], body, {A.data: A}, attrs={"target": gpu_target}, name="f")
    launch = _split(func)["f_kernel"].attrs["tirx.launch"]
    assert [e.value for e in launch.cluster] == [2, 1, 1]
    assert [e.value for e in launch.grid] == [8, 1, 1]
    assert launch.dyn_smem_bytes.value == 512 + 12  # 256 halves, then 3 floats at offset 512


def test_host_target_is_not_split(host_target):
    func, _ = _vadd(host_target)
    mod = _split(func)
    assert list(mod.functions) == ["vadd"]
    assert "tirx.is_host" not in mod["vadd"].attrs


def test_target_from_context_and_no_target(gpu_target):
    func, _ = _vadd()
    assert list(_split(func).functions) == ["vadd"]  # no target: nothing to split for
    with PassContext(config={"target": gpu_target}):
        assert list(_split(func).functions) == ["vadd", "vadd_kernel"]
    with gpu_target:
        assert list(_split(func).functions) == ["vadd", "vadd_kernel"]


def test_host_form_function_runs_as_one_thread(gpu_target):
    A = Buffer("A", [4], "float32")
    n = Var("n")
    body = BufferStore(A, FloatImm("float32", 1.0), [n])
    func = PrimFunc([A.data, n], body, {A.data: A}, attrs={"target": gpu_target}, name="h")
    mod = SplitHostDevice()(func)
    kernel = mod["h_kernel"]
    launch = kernel.attrs["tirx.launch"]
    assert [e.value for e in launch.grid + launch.block] == [1] * 6
    assert kernel.params == [A.data, n]
    assert mod["h"].body.value.args[1:] == [A.data, n]


def test_two_kernels_and_host_lets(gpu_target):
    A = Buffer("A", [64], "float32")
    m = Var("m")
    half = Var("half")
    t1, t2 = Var("t1"), Var("t2")

    def kernel(t):
        return ir.For(t, 0, half, ir.ForKind.THREAD_BINDING,
                      BufferStore(A, FloatImm("float32", 0.0), [t]), thread_tag="threadIdx.x")

    body = LetStmt(half, m // 2, SeqStmt([kernel(t1), kernel(t2)]))
    func = PrimFunc([A.data, m], body, {A.data: A}, attrs={"target": gpu_target}, name="two")
    mod = SplitHostDevice()(func)
    assert list(mod.functions) == ["two", "two_kernel", "two_kernel1"]
    for name in ("two_kernel", "two_kernel1"):
        launch = mod[name].attrs["tirx.launch"]
        assert_structural_equal(launch.block[0], m // 2)  # the host let is inlined
        assert mod[name].params == [A.data, m]  # the loop extent reads m
    launches = mod["two"].body.seq
    assert [c.value.args[0].value for c in launches] == ["two_kernel", "two_kernel1"]


def test_launch_from_host_loop_is_an_error(gpu_target):
    A = Buffer("A", [64], "float32")
    i, t = Var("i"), Var("t")
    inner = ir.For(t, 0, 4, ir.ForKind.THREAD_BINDING, BufferStore(A, FloatImm("float32", 0.0), [t]),
                   thread_tag="threadIdx.x")
    func = PrimFunc([A.data], ir.For(i, 0, 2, ir.ForKind.SERIAL, inner), {A.data: A},
                    attrs={"target": gpu_target}, name="bad")
    with pytest.raises(ValueError, match="a For encloses thread-bound loops"):
        SplitHostDevice()(func)


# -- launch bounds -----------------------------------------------------------------------------
def _bounded(gpu_target, *attrs):
    extra = [AttrStmt(None, key, value, Evaluate(0)) for key, value in attrs]
    return _vadd(gpu_target, extra=extra)[0]


def _nested(key, value, body):
    return AttrStmt(None, key, value, body)


def test_launch_bounds_move_to_the_kernel(gpu_target):
    func = _bounded(gpu_target, (MIN_BLOCKS_PER_SM, 2), (MAX_BLOCKS_PER_CLUSTER, 4))
    kernel = _split(func)["vadd_kernel"]
    assert kernel.attrs[MIN_BLOCKS_PER_SM] == 2
    assert kernel.attrs[MAX_BLOCKS_PER_CLUSTER] == 4
    found = []
    ir.post_order_visit(kernel.body, lambda n: found.append(n) if isinstance(n, AttrStmt) else None)
    assert found == []


def test_launch_bounds_absent_by_default(gpu_target):
    kernel = _split(_vadd(gpu_target)[0])["vadd_kernel"]
    assert MIN_BLOCKS_PER_SM not in kernel.attrs


def test_launch_bounds_same_value_twice_is_fine():
    body = _nested(MIN_BLOCKS_PER_SM, 1, _nested(MIN_BLOCKS_PER_SM, 1, Evaluate(0)))
    stripped, found = extract_launch_bounds(body)
    assert found == {MIN_BLOCKS_PER_SM: 1}
    assert isinstance(stripped, Evaluate)


@pytest.mark.parametrize("value, message", [
    (FloatImm("float32", 1.5), "tirx.launch_bounds_min_blocks_per_sm expects an integer value"),
    (StringImm("2"), "tirx.launch_bounds_min_blocks_per_sm expects an integer value"),
    (Var("m"), "tirx.launch_bounds_min_blocks_per_sm expects an integer value"),
    (IntImm("int32", 0), "tirx.launch_bounds_min_blocks_per_sm must be positive"),
    (IntImm("int32", -3), "tirx.launch_bounds_min_blocks_per_sm must be positive"),
])
def test_launch_bounds_bad_values(gpu_target, value, message):
    func = _bounded(gpu_target, (MIN_BLOCKS_PER_SM, value))
    with pytest.raises(ValueError, match=message):
        _split(func)


def test_launch_bounds_bool_is_not_an_integer():
    with pytest.raises(ValueError, match="expects an integer value"):
        extract_launch_bounds(_nested(MAX_BLOCKS_PER_CLUSTER, IntImm("bool", 1), Evaluate(0)))


def test_launch_bounds_conflict(gpu_target):
    func = _bounded(gpu_target, (MAX_BLOCKS_PER_CLUSTER, 2), (MAX_BLOCKS_PER_CLUSTER, 3))
    with pytest.raises(ValueError,
                       match="Conflicting tirx.launch_bounds_max_blocks_per_cluster values: 2 and 3"):
        _split(func)


def test_split_keeps_other_functions(gpu_target):
    func, _ = _vadd(gpu_target)
    other = PrimFunc([], Evaluate(0), attrs={"tirx.is_kernel": True}, name="k0")
    mod = SplitHostDevice()(IRModule({"vadd": LowerKernelForm()(func)["vadd"], "k0": other}))
    assert mod["k0"] is other and "vadd_kernel" in mod
