"""LowerKernelForm: kernel ids -> thread-bound loops and lets."""

from __future__ import annotations

import pytest

from tvm import ir
from tvm.ir import (
    Buffer,
    BufferLoad,
    BufferStore,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    LetStmt,
    PrimFunc,
    ScopeIdDef,
    SeqStmt,
    Var,
    assert_structural_equal,
)
from tvm.tirx import op
from tvm.tirx.transform import CLUSTER_EXTENT, KernelFormError, LowerKernelForm


def _kernel(defs, body, *bufs, head=()):
    stmts = [*head, Evaluate(op.device_entry()), *defs, body]
    return PrimFunc([b.data for b in bufs], SeqStmt(stmts), {b.data: b for b in bufs}, name="k")


def _lower(func):
    return LowerKernelForm()(func)["k"]


def _loops(stmt):
    out = []
    while isinstance(stmt, (For, LetStmt)):
        out.append(stmt)
        stmt = stmt.body
    return out, stmt


def test_cta_and_thread_ids():
    A = Buffer("A", [4096], "float32")
    bx, tx = Var("bx"), Var("tx")
    store = BufferStore(A, FloatImm("float32", 0.0), [bx * 128 + tx])
    out = _lower(_kernel([ScopeIdDef("cta_id", [bx], [32]), ScopeIdDef("thread_id", [tx], [128])], store, A))
    loops, inner = _loops(out.body)
    assert [(lp.thread_tag, lp.loop_var, lp.extent.value) for lp in loops] == [
        ("blockIdx.x", bx, 32), ("threadIdx.x", tx, 128)]
    assert all(lp.kind is ForKind.THREAD_BINDING for lp in loops)
    assert inner is store
    ir.verify(out)


def test_multi_dimensional_ids():
    A = Buffer("A", [8], "float32")
    bx, by, tx, ty = Var("bx"), Var("by"), Var("tx"), Var("ty")
    defs = [ScopeIdDef("cta_id", [bx, by], [4, 2]), ScopeIdDef("thread_id", [tx, ty], [32, 4])]
    out = _lower(_kernel(defs, BufferStore(A, FloatImm("float32", 0.0), [0]), A))
    loops, _ = _loops(out.body)
    assert [lp.thread_tag for lp in loops] == ["blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y"]
    assert [lp.extent.value for lp in loops] == [4, 2, 32, 4]


def test_warp_and_lane_ids_derive_the_block_size():
    A = Buffer("A", [128], "float32")
    w, lane = Var("w"), Var("lane")
    store = BufferStore(A, FloatImm("float32", 0.0), [w * 32 + lane])
    out = _lower(_kernel([ScopeIdDef("warp_id", [w], [4]), ScopeIdDef("lane_id", [lane], [32])], store, A))
    loops, inner = _loops(out.body)
    thread_loop, let_w, let_l = loops
    assert thread_loop.thread_tag == "threadIdx.x" and thread_loop.extent.value == 128
    tid = thread_loop.loop_var
    assert let_w.var is w and let_l.var is lane
    assert_structural_equal(let_w.value, FloorDiv(tid, 32))
    assert_structural_equal(let_l.value, FloorMod(tid, 32))
    assert inner is store
    ir.verify(out)


def test_warpgroup_ids_with_thread_id():
    A = Buffer("A", [256], "float32")
    tx, wg, t_in_wg, w_in_wg = Var("tx"), Var("wg"), Var("t"), Var("wi")
    defs = [ScopeIdDef("thread_id", [tx], [256]), ScopeIdDef("warpgroup_id", [wg], [2]),
            ScopeIdDef("thread_id_in_wg", [t_in_wg], [128]), ScopeIdDef("warp_id_in_wg", [w_in_wg], [4])]
    out = _lower(_kernel(defs, BufferStore(A, FloatImm("float32", 0.0), [tx]), A))
    loops, _ = _loops(out.body)
    assert loops[0].loop_var is tx and loops[0].extent.value == 256
    lets = {lt.var.name: lt.value for lt in loops[1:]}
    assert_structural_equal(lets["wg"], FloorDiv(tx, 128))
    assert_structural_equal(lets["t"], FloorMod(tx, 128))
    assert_structural_equal(lets["wi"], FloorDiv(FloorMod(tx, 128), 32))


def test_cluster_ids():
    A = Buffer("A", [8], "float32")
    c, r = Var("c"), Var("r")
    defs = [ScopeIdDef("cluster_id", [c], [4]), ScopeIdDef("cta_id_in_cluster", [r], [2])]
    out = _lower(_kernel(defs, BufferStore(A, FloatImm("float32", 0.0), [c * 2 + r]), A))
    loops, _ = _loops(out.body)
    block = loops[0]
    assert block.thread_tag == "blockIdx.x" and block.extent.value == 8
    assert block.annotations[CLUSTER_EXTENT].value == 2
    lets = {lt.var.name: lt.value for lt in loops[1:]}
    assert_structural_equal(lets["r"], FloorMod(block.loop_var, 2))
    assert_structural_equal(lets["c"], FloorDiv(block.loop_var, 2))


def test_symbolic_grid():
    n = Var("n")
    A = Buffer("A", [n], "float32")
    bx, tx = Var("bx"), Var("tx")
    defs = [ScopeIdDef("cta_id", [bx], [(n + 127) // 128]), ScopeIdDef("thread_id", [tx], [128])]
    out = _lower(_kernel(defs, BufferStore(A, FloatImm("float32", 0.0), [bx * 128 + tx]), A))
    assert_structural_equal(out.body.extent, (n + 127) // 128)


def test_statements_before_device_entry_stay_outside():
    A = Buffer("A", [8], "float32")
    tx = Var("tx")
    pre = BufferStore(A, FloatImm("float32", 1.0), [0])
    out = _lower(_kernel([ScopeIdDef("thread_id", [tx], [8])],
                         BufferStore(A, FloatImm("float32", 0.0), [tx]), A, head=[pre]))
    assert out.body.seq[0] is pre and out.body.seq[1].thread_tag == "threadIdx.x"


def test_function_without_kernel_form_is_untouched():
    A = Buffer("A", [8], "float32")
    func = PrimFunc([A.data], BufferStore(A, FloatImm("float32", 0.0), [0]), {A.data: A}, name="k")
    assert _lower(func) is func


@pytest.mark.parametrize("with_wg", [False, True])
@pytest.mark.parametrize("warps", [1, 2])
def test_a_warpgroup_of_fewer_warps(warps, with_wg):
    # as the seed allows: T.warp_id_in_wg([k]) with k < 4 in a CTA of one warpgroup is k warps
    A = Buffer("A", [warps * 32], "float32")
    wi, lane = Var("wi"), Var("lane")
    defs = [ScopeIdDef("warp_id_in_wg", [wi], [warps]), ScopeIdDef("lane_id", [lane], [32])]
    if with_wg:
        defs.insert(0, ScopeIdDef("warpgroup_id", [Var("g")], [1]))
    out = _lower(_kernel(defs, BufferStore(A, FloatImm("float32", 0.0), [wi * 32 + lane]), A))
    loops, _ = _loops(out.body)
    assert loops[0].thread_tag == "threadIdx.x" and loops[0].extent.value == warps * 32
    lets = {lt.var.name: lt.value for lt in loops[1:]}
    assert_structural_equal(lets["wi"], FloorDiv(FloorMod(loops[0].loop_var, 128), 32))


@pytest.mark.parametrize("defs, message", [
    (lambda: [ScopeIdDef("warpgroup_id", [Var("g")], [2]), ScopeIdDef("warp_id_in_wg", [Var("w")], [2])],
     r"T.warp_id_in_wg extent must be 4 \(fewer warps, 1 to 3, only in a CTA of one warpgroup\), "
     "got 2"),
    (lambda: [ScopeIdDef("thread_id", [Var("t")], [128]), ScopeIdDef("warp_id_in_wg", [Var("w")], [2])],
     r"inconsistent thread counts: T.thread_id\(\[128\]\) gives 128 threads but "
     r"T.warp_id_in_wg\(\[2\]\) \* 32 gives 64"),
    (lambda: [ScopeIdDef("thread_id", [Var("t")], [128]), ScopeIdDef("warp_id", [Var("w")], [8])],
     r"inconsistent thread counts: T.thread_id\(\[128\]\) gives 128 threads but T.warp_id\(\[8\]\) \* 32 gives 256"),
    (lambda: [ScopeIdDef("lane_id", [Var("l")], [16])], "T.lane_id extent must be 32, got 16"),
    (lambda: [ScopeIdDef("thread_id", [Var("t")], [96]), ScopeIdDef("warpgroup_id", [Var("g")], [1])],
     "inconsistent thread counts"),
    (lambda: [ScopeIdDef("thread_id", [Var("a"), Var("b")], [32, 2]), ScopeIdDef("lane_id", [Var("l")], [32])],
     "T.lane_id needs a one-dimensional T.thread_id"),
    (lambda: [ScopeIdDef("thread_id", [Var("a")], [32]), ScopeIdDef("thread_id", [Var("b")], [16])],
     "T.thread_id is defined twice with different extents \\(\\[32\\] and \\[16\\]\\)"),
    (lambda: [ScopeIdDef("cta_id", [Var("b")], [6]), ScopeIdDef("cta_id_in_cluster", [Var("r")], [4])],
     "the grid extent 6 along x is not a multiple of the cluster extent 4"),
    (lambda: [ScopeIdDef("cta_id", [Var("b")], [6]), ScopeIdDef("cluster_id", [Var("c")], [2]),
              ScopeIdDef("cta_id_in_cluster", [Var("r")], [2])],
     "inconsistent grid along x: T.cta_id gives 6 but T.cluster_id \\* T.cta_id_in_cluster gives 4"),
])
def test_inconsistent_ids_raise(defs, message):
    A = Buffer("A", [8], "float32")
    with pytest.raises(KernelFormError, match=f"function k: {message}"):
        _lower(_kernel(defs(), BufferStore(A, FloatImm("float32", 0.0), [0]), A))


def test_nested_scope_id_holds_for_the_whole_kernel():
    # as in the seed, an id first defined in a loop or branch is defined for the kernel
    A = Buffer("A", [8], "float32")
    i, t = Var("i"), Var("t")
    nested = For(i, 0, 2, ForKind.SERIAL, SeqStmt([ScopeIdDef("thread_id", [t], [4]),
                                                   BufferStore(A, BufferLoad(A, [t]), [t])]))
    func = PrimFunc([A.data], SeqStmt([Evaluate(op.device_entry()), nested]), {A.data: A}, name="k")
    out = _lower(func)
    assert isinstance(out.body, For) and out.body.thread_tag == "threadIdx.x"
    assert out.body.loop_var is t and out.body.extent.value == 4
    assert isinstance(out.body.body, For) and out.body.body.loop_var is i


def test_nested_scope_id_extent_may_not_use_what_the_kernel_binds():
    A = Buffer("A", [8], "float32")
    i, t = Var("i"), Var("t")
    nested = For(i, 1, 2, ForKind.SERIAL, SeqStmt([ScopeIdDef("thread_id", [t], [i * 4]),
                                                   BufferStore(A, BufferLoad(A, [t]), [t])]))
    func = PrimFunc([A.data], SeqStmt([Evaluate(op.device_entry()), nested]), {A.data: A}, name="k")
    with pytest.raises(KernelFormError, match="the extent of T.thread_id uses 'i'"):
        _lower(func)


# -- attribute statements and lets among the ids (the seed's launch-bounds programs) ----------
def _script_kernel(order: str):
    """The seed's launch-bounds kernel, with ``T.attr`` before, between or after the ids."""
    from tvm.script import tirx as T

    if order == "attr_first":
        @T.prim_func
        def k(A: T.Buffer((4,), "int32")):
            T.device_entry()
            T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
            bx = T.cta_id([4])
            tx = T.thread_id([128])
            if tx == 0:
                A[bx] = A[bx] + 1
    elif order == "attr_between":
        @T.prim_func
        def k(A: T.Buffer((4,), "int32")):
            T.device_entry()
            bx = T.cta_id([4])
            T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
            tx = T.thread_id([128])
            if tx == 0:
                A[bx] = A[bx] + 1
    else:
        @T.prim_func
        def k(A: T.Buffer((4,), "int32")):
            T.device_entry()
            bx = T.cta_id([4])
            b2: T.int32 = bx * 2
            tx = T.thread_id([128])
            if tx == 0:
                A[bx] = A[bx] + b2
    return k


@pytest.mark.parametrize("order", ["attr_first", "attr_between", "let_between"])
def test_attrs_and_lets_may_stand_among_the_ids(order):
    func = _script_kernel(order)
    out = LowerKernelForm()(func)["k"]
    loops, inner = _loops(out.body)
    assert [(lp.thread_tag, lp.extent.value) for lp in loops[:2]] == [
        ("blockIdx.x", 4), ("threadIdx.x", 128)]
    kinds = {type(n).__name__ for n in _walk(inner)}
    assert "ScopeIdDef" not in kinds
    if order.startswith("attr"):
        assert isinstance(inner, ir.AttrStmt)
        assert inner.attr_key == "tirx.launch_bounds_min_blocks_per_sm" and inner.value.value == 1
    else:
        assert isinstance(loops[-1], LetStmt) and loops[-1].var.name == "b2"
    ir.verify(out)
    # the printed function parses back to the same function
    from tvm.script import from_source

    assert_structural_equal(from_source(func.script()), func)


def _walk(stmt):
    found = []
    ir.post_order_visit(stmt, found.append)
    return found


def test_id_extent_using_an_earlier_let_is_an_error():
    A = Buffer("A", [8], "float32")
    n, t = Var("n"), Var("t")
    body = LetStmt(n, 4, SeqStmt([ScopeIdDef("thread_id", [t], [n * 2]),
                                  BufferStore(A, FloatImm("float32", 0.0), [t])]))
    func = PrimFunc([A.data], SeqStmt([Evaluate(op.device_entry()), body]), {A.data: A}, name="k")
    with pytest.raises(KernelFormError, match="the extent of T.thread_id uses 'n', a let defined "
                                              "before it in the kernel"):
        _lower(func)
