"""FuseRowLoops on hand-built loops: when neighbouring fusible loops fuse, and when not."""

from __future__ import annotations

from tvm.ir import Buffer, BufferStore, Evaluate, For, ForKind, LetStmt, Var, seq
from tvm.ir import expr as E
from tvm.tirx import op as T
from tvm.tirx.transform import FUSIBLE, fuse_row_loops

M, N = 8, 16


def _rows(body_fn, kind: ForKind = ForKind.SERIAL, extent: int = M, mark: bool = True) -> For:
    i = Var("i")
    return For(i, 0, extent, kind, body_fn(i), annotations={FUSIBLE: True} if mark else None)


def _cols(i: Var, store_fn) -> For:
    j = Var("j")
    return For(j, 0, N, ForKind.SERIAL, store_fn(i, j), annotations={FUSIBLE: True})


X, Y, R = Buffer("X", [M, N]), Buffer("Y", [M, N]), Buffer("R", [M, 1])


def _loops(stmt) -> list[For]:
    return [s for s in (stmt.seq if hasattr(stmt, "seq") else [stmt]) if isinstance(s, For)]


def test_row_aligned_loops_fuse_and_inner_stores_are_forwarded() -> None:
    write_r = _rows(lambda i: BufferStore(R, X[i, 0], [i, 0]), ForKind.PARALLEL)
    sub = _rows(lambda i: _cols(i, lambda i, j: BufferStore(Y, X[i, j] - R[i, 0], [i, j])))
    exp = _rows(lambda i: _cols(i, lambda i, j: BufferStore(Y, T.exp(Y[i, j]), [i, j])))
    out = fuse_row_loops(seq([write_r, sub, exp]))
    assert isinstance(out, For) and out.kind is ForKind.PARALLEL  # parallel if either was
    inner = out.body.seq
    assert len(inner) == 2 and isinstance(inner[1], For)
    store = inner[1].body
    assert isinstance(store, BufferStore) and isinstance(store.value, E.Call)  # exp(X - R)
    assert isinstance(store.value.args[0], E.Sub)


def test_loops_stay_apart_when_rows_do_not_line_up() -> None:
    write_r = _rows(lambda i: BufferStore(R, X[i, 0], [i, 0]))
    reads_other_row = _rows(lambda i: BufferStore(Y, R[M - 1 - i, 0], [i, 0]))
    assert len(_loops(fuse_row_loops(seq([write_r, reads_other_row])))) == 2
    shorter = _rows(lambda i: BufferStore(Y, R[i, 0], [i, 0]), extent=M - 1)
    assert len(_loops(fuse_row_loops(seq([write_r, shorter])))) == 2
    unmarked = _rows(lambda i: BufferStore(Y, R[i, 0], [i, 0]), mark=False)
    assert len(_loops(fuse_row_loops(seq([write_r, unmarked])))) == 2
    opaque = _rows(lambda i: Evaluate(T.call_extern("int32", "f", R[i, 0])))
    assert len(_loops(fuse_row_loops(seq([write_r, opaque])))) == 2


def test_reads_of_a_buffer_neither_loop_writes_do_not_matter() -> None:
    a = _rows(lambda i: BufferStore(R, X[0, 0], [i, 0]))
    b = _rows(lambda i: BufferStore(Y, X[M - 1, N - 1] + R[i, 0], [i, 0]))
    assert isinstance(fuse_row_loops(seq([a, b])), For)


def test_a_let_of_the_second_loop_moves_up_only_if_the_first_does_not_write_what_it_reads() -> None:
    v = Var("v", "float32")
    writes_r = _rows(lambda i: BufferStore(R, X[i, 0], [i, 0]))
    reads_r = LetStmt(v, R[0, 0], _rows(lambda i: BufferStore(Y, X[i, 1] * v, [i, 1])))
    assert len(fuse_row_loops(seq([writes_r, reads_r])).seq) == 2
    w = Var("w", "float32")
    reads_x = LetStmt(w, X[0, 0], _rows(lambda i: BufferStore(Y, R[i, 0] * w, [i, 1])))
    out = fuse_row_loops(seq([writes_r, reads_x]))
    assert isinstance(out, LetStmt) and isinstance(out.body, For)
