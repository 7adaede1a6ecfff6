"""UnrollLoop, VectorizeLoop, FlattenBuffer."""

from __future__ import annotations

from tvm import ir
from tvm.ir import (
    AllocBuffer,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Call,
    DeclBuffer,
    FloatImm,
    For,
    ForKind,
    IntImm,
    PrimFunc,
    Ramp,
    Range,
    S,
    SeqStmt,
    TileLayout,
    Var,
    assert_structural_equal,
)
from tvm.tirx.transform import FlattenBuffer, UnrollLoop, VectorizeLoop, flat_index
from tvm.transform import PassContext


def _func(body, *bufs):
    return PrimFunc([b.data for b in bufs], body, {b.data: b for b in bufs}, name="f")


# -- unroll ------------------------------------------------------------------------------------
def test_unroll_constant_extent():
    A = Buffer("A", [8], "int32")
    i = Var("i")
    body = For(i, 2, 3, ForKind.UNROLLED, BufferStore(A, i * 2, [i]))
    out = UnrollLoop()(_func(body, A))["f"].body
    assert isinstance(out, SeqStmt) and len(out.seq) == 3
    for k, st in enumerate(out.seq):
        assert st.indices[0].value == 2 + k
        # the loop variable is substituted; folding is left to StmtSimplify
        assert_structural_equal(st.value, ir.Mul(IntImm("int32", 2 + k), 2))


def test_unroll_symbolic_min():
    A = Buffer("A", [64], "int32")
    i, k = Var("i"), Var("k")
    body = For(i, k * 4, 2, ForKind.UNROLLED, BufferStore(A, 0, [i]))
    out = UnrollLoop()(_func(For(k, 0, 8, ForKind.SERIAL, body), A))["f"].body.body
    assert_structural_equal(out.seq[0].indices[0], k * 4)
    assert_structural_equal(out.seq[1].indices[0], k * 4 + 1)


def test_unroll_leaves_serial_symbolic_and_declaring_loops():
    A = Buffer("A", [8], "int32")
    i, n = Var("i"), Var("n")
    serial = For(i, 0, 4, ForKind.SERIAL, BufferStore(A, 0, [i]))
    symbolic = For(i, 0, n, ForKind.UNROLLED, BufferStore(A, 0, [i]))
    L = Buffer("L", [1], "int32", scope="local")
    declaring = For(i, 0, 4, ForKind.UNROLLED, SeqStmt([AllocBuffer(L), BufferStore(A, 0, [i])]))
    big = For(i, 0, 4096, ForKind.UNROLLED, BufferStore(A, 0, [0]))
    for loop in (serial, symbolic, declaring, big):
        assert UnrollLoop()(_func(loop, A))["f"].body is loop
    assert UnrollLoop(max_extent=8000)(_func(big, A))["f"].body.__class__ is SeqStmt


def test_unroll_nested():
    A = Buffer("A", [4], "int32")
    i, j = Var("i"), Var("j")
    body = For(i, 0, 2, ForKind.UNROLLED, For(j, 0, 2, ForKind.UNROLLED, BufferStore(A, 0, [i * 2 + j])))
    out = UnrollLoop()(_func(body, A))["f"].body
    assert [str(s.indices[0]) for s in out.seq] == [
        str(ir.Add(ir.Mul(IntImm("int32", a), 2), b)) for a in (0, 1) for b in (0, 1)]


# -- vectorize ---------------------------------------------------------------------------------
def test_vectorize_elementwise():
    A, B, C = (Buffer(n, [64], "float32") for n in "ABC")
    i, o = Var("i"), Var("o")
    idx = o * 4 + i
    store = BufferStore(C, BufferLoad(A, [idx]) + BufferLoad(B, [idx]) * 2.0, [idx])
    body = For(o, 0, 16, ForKind.SERIAL, For(i, 0, 4, ForKind.VECTORIZED, store))
    out = VectorizeLoop()(_func(body, A, B, C))["f"].body.body
    assert isinstance(out, BufferStore)
    ramp = out.indices[0]
    assert isinstance(ramp, Ramp) and ramp.lanes == 4 and ramp.stride.value == 1
    assert_structural_equal(ramp.base, o * 4)
    assert out.value.dtype == "float32x4"
    mul = out.value.b
    assert isinstance(mul.b, Broadcast) and mul.b.lanes == 4  # the scalar 2.0 is broadcast
    assert isinstance(out.value.a, BufferLoad) and out.value.a.dtype == "float32x4"


def test_vectorize_broadcasts_invariant_loads_and_strides():
    A, B = Buffer("A", [64], "float32"), Buffer("B", [1], "float32")
    i = Var("i")
    body = For(i, 0, 8, ForKind.VECTORIZED, BufferStore(A, BufferLoad(B, [0]), [i * 2]))
    out = VectorizeLoop()(_func(body, A, B))["f"].body
    assert isinstance(out.value, Broadcast) and isinstance(out.value.value, BufferLoad)
    assert out.indices[0].stride.value == 2


def test_vectorize_math_call_and_cast():
    A, B = Buffer("A", [8], "float32"), Buffer("B", [8], "int32")
    i = Var("i")
    from tvm.tirx import op

    body = For(i, 0, 8, ForKind.VECTORIZED,
               BufferStore(A, op.exp(ir.Cast("float32", BufferLoad(B, [i]))), [i]))
    out = VectorizeLoop()(_func(body, A, B))["f"].body
    assert isinstance(out.value, Call) and out.value.dtype == "float32x8"
    assert out.value.args[0].dtype == "float32x8"


def test_vectorize_falls_back_to_serial():
    A = Buffer("A", [64], "float32")
    i = Var("i")
    cases = [
        BufferStore(A, BufferLoad(A, [i]), [i + 1]),                     # loop-carried
        BufferStore(A, FloatImm("float32", 0.0), [i // 2]),             # not linear
        BufferStore(A, FloatImm("float32", 0.0), [0]),                  # every lane to one place
        ir.IfThenElse(i < 3, BufferStore(A, FloatImm("float32", 0.0), [i])),  # control flow
    ]
    for stmt in cases:
        loop = For(i, 0, 4, ForKind.VECTORIZED, stmt)
        out = VectorizeLoop()(_func(loop, A))["f"].body
        assert isinstance(out, For) and out.kind is ForKind.SERIAL and out.body is stmt


def test_vectorize_in_place_is_allowed():
    A = Buffer("A", [8], "float32")
    i = Var("i")
    loop = For(i, 0, 8, ForKind.VECTORIZED, BufferStore(A, BufferLoad(A, [i]) * 2.0, [i]))
    assert isinstance(VectorizeLoop()(_func(loop, A))["f"].body, BufferStore)


def test_vectorize_disabled():
    A = Buffer("A", [8], "float32")
    i = Var("i")
    loop = For(i, 0, 8, ForKind.VECTORIZED, BufferStore(A, FloatImm("float32", 0.0), [i]))
    assert VectorizeLoop(enable=False)(_func(loop, A))["f"].body.kind is ForKind.SERIAL
    with PassContext(config={"tir.disable_vectorize": True}):
        assert VectorizeLoop()(_func(loop, A))["f"].body.kind is ForKind.SERIAL


# -- flatten -----------------------------------------------------------------------------------
def test_flatten_param_buffers_row_major():
    A = Buffer("A", [4, 8], "float32")
    B = Buffer("B", [32], "float32")
    i, j = Var("i"), Var("j")
    body = For(i, 0, 4, ForKind.SERIAL, For(j, 0, 8, ForKind.SERIAL,
               BufferStore(B, BufferLoad(A, [i, j]), [i * 8 + j])))
    func = _func(body, A, B)
    out = FlattenBuffer()(func)["f"]
    assert out.buffer_map[A.data] is A  # parameters keep their N-D buffers
    decl = out.body.seq[0]
    assert isinstance(decl, DeclBuffer) and decl.buffer.data is A.data
    assert [d.value for d in decl.buffer.shape] == [32]
    store = out.body.seq[1].body.body
    assert store.buffer is B  # already flat: used directly
    load = store.value
    assert load.buffer is decl.buffer
    assert_structural_equal(load.indices[0], i * 8 + j)
    ir.verify(out)


def test_flatten_with_strides_and_offset():
    A = Buffer("A", [4, 4], "float32", strides=[16, 1], elem_offset=3)
    i, j = Var("i"), Var("j")
    assert_structural_equal(flat_index(A, [i, j]), i * 16 + j + 3)
    body = BufferStore(A, FloatImm("float32", 0.0), [i, j])
    out = FlattenBuffer()(_func(For(i, 0, 4, ForKind.SERIAL, For(j, 0, 4, ForKind.SERIAL, body)), A))["f"]
    decl = out.body.seq[0]
    assert decl.buffer.shape[0].value == 3 * 16 + 3 + 1


def test_flatten_tile_layout():
    layout = TileLayout(S[(2, 4):(1, 2)])  # column-major 2x4
    A = Buffer("A", [2, 4], "float32", scope="shared", layout=layout)
    i, j = Var("i"), Var("j")
    from tvm.arith import Analyzer

    ana = Analyzer()
    ana.bind(i, Range(0, 2))
    ana.bind(j, Range(0, 4))
    assert_structural_equal(flat_index(A, [i, j], ana), j * 2 + i)
    body = SeqStmt([AllocBuffer(A), BufferStore(A, FloatImm("float32", 1.0), [i, j])])
    out = FlattenBuffer()(PrimFunc([], For(i, 0, 2, ForKind.SERIAL, For(j, 0, 4, ForKind.SERIAL, body)), name="f"))["f"]
    alloc = out.body.body.body.seq[0]
    assert isinstance(alloc, AllocBuffer) and alloc.buffer.layout is None
    assert [d.value for d in alloc.buffer.shape] == [8] and alloc.buffer.scope == "shared"
    assert_structural_equal(out.body.body.body.seq[1].indices[0], j * 2 + i)


def test_flatten_alloc_and_region():
    L = Buffer("L", [2, 3], "float32", scope="local")
    i = Var("i")
    call = ir.Evaluate(Call("int32", "tirx.address_of", [BufferRegion(L, [Range(1, 1), Range(0, 3)])]))
    body = SeqStmt([AllocBuffer(L), BufferStore(L, FloatImm("float32", 0.0), [i, 2]), call])
    out = FlattenBuffer()(PrimFunc([i], body, name="f"))["f"]
    flat = out.body.seq[0].buffer
    assert [d.value for d in flat.shape] == [6]
    assert_structural_equal(out.body.seq[1].indices[0], i * 3 + 2)
    region = out.body.seq[2].value.args[0]
    assert region.buffer is flat
    assert region.region[0].min.value == 3 and region.region[0].extent.value == 3


def test_flatten_unused_param_gets_no_decl():
    A = Buffer("A", [4, 4], "float32")
    B = Buffer("B", [4], "float32")
    body = BufferStore(B, FloatImm("float32", 0.0), [0])
    out = FlattenBuffer()(_func(body, A, B))["f"]
    assert out.body is body
