"""Issue 28, item 3: the seed's layout and buffer methods as this project gives them.

``TileLayout.tile`` / ``tile_to`` / ``group`` / ``storage`` / ``pack`` / ``unpack`` /
``to_psum``, ``Buffer.view`` / ``local`` / ``permute`` (a ``T.decl_buffer`` over the same
memory where a script assigns them), layouts given as strings, ``allocated_addr`` and the CUDA
``tcgen05_atom_layout``. Each layout is checked by where it puts every element, not by its text.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tvm
from tvm.ir import assert_structural_equal
from tvm.ir.layout import ComposeLayout, Iter, SwizzleLayout, TileLayout
from tvm.script import from_source
from tvm.script import tirx as T


def offsets(layout, shape, axis="m"):
    """Where ``layout`` puts each element of ``shape``, as a numpy array of that shape."""
    out = np.zeros(shape, dtype=np.int64)
    for idx in itertools.product(*(range(s) for s in shape)):
        coord = layout.apply(idx, shape).get(axis)
        out[idx] = 0 if coord is None else coord.value
    return out


# -- tile, tile_to, group ------------------------------------------------------------------------


def test_tile_places_each_tile_after_the_previous_ones_span():
    inner = TileLayout.row_major([4, 4])
    tiled = inner.tile(TileLayout.row_major([2, 3]), [2, 3], [4, 4])
    got = offsets(tiled, (8, 12))
    for r, c in itertools.product(range(8), range(12)):
        (o0, i0), (o1, i1) = divmod(r, 4), divmod(c, 4)
        assert got[r, c] == (o0 * 3 + o1) * 16 + i0 * 4 + i1


def test_tile_to_stacks_an_atom_row_major():
    atom = TileLayout.row_major([8, 64])  # one 8-row swizzle atom of 128-byte rows (fp16)
    tiled = atom.tile_to([128, 128], [8, 64])
    got = offsets(tiled, (128, 128))
    r, c = np.meshgrid(np.arange(128), np.arange(128), indexing="ij")
    want = ((r // 8) * 2 + c // 64) * 512 + (r % 8) * 64 + c % 64
    assert np.array_equal(got, want)


def test_tile_to_a_shape_the_atom_does_not_divide_is_an_error():
    atom = TileLayout.row_major([8, 64])
    with pytest.raises(ValueError, match="not a multiple of the tile's 8"):
        atom.tile_to([4, 64], [8, 64])


def test_tile_scales_thread_axes_by_the_inner_span_on_them():
    inner = TileLayout([Iter(4, 1, "laneid"), Iter(2, 1)])           # 4 lanes x 2 registers
    tiled = inner.tile(TileLayout([Iter(8, 1, "laneid")]), [8], [8])  # 8 such groups
    lanes = offsets(tiled, (64,), "laneid")
    regs = offsets(tiled, (64,))
    assert list(lanes[:16]) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]
    assert set(regs) == {0, 1}


def test_swizzled_tile_keeps_its_swizzle_and_needs_whole_blocks():
    sw = SwizzleLayout(3, 3, 3)  # the 128-byte swizzle of fp16: blocks of 512 elements
    atom = ComposeLayout(sw, TileLayout.row_major([8, 64]))
    tiled = atom.tile_to([64, 64], [8, 64])
    assert isinstance(tiled, ComposeLayout) and tiled.layout_A is sw
    got = offsets(tiled, (64, 64))
    base = offsets(atom, (8, 64))
    for k in range(8):  # every 8-row tile is the atom, 512 elements further
        assert np.array_equal(got[8 * k:8 * k + 8], base + 512 * k)
    half = ComposeLayout(sw, TileLayout.row_major([4, 64]))
    with pytest.raises(ValueError, match="not a multiple of its swizzle's block"):
        half.tile_to([8, 64], [4, 64])


def test_group_splits_iterators_at_dimension_boundaries():
    lay = TileLayout([Iter(4, 1, "laneid"), Iter(8, 2), Iter(2, 1)])
    grouped, seps = lay.group([2, 32])
    assert seps == [0, 1, 4]
    assert np.array_equal(offsets(grouped, (2, 32)), offsets(lay, (2, 32)))
    assert np.array_equal(offsets(grouped, (2, 32), "laneid"), offsets(lay, (2, 32), "laneid"))
    with pytest.raises(ValueError, match="does not split"):
        TileLayout.row_major([6]).group([4])


def test_storage_drops_thread_iterators():
    lay = TileLayout([Iter(128, 1, "tid"), Iter(8, 1)])
    assert [(it.extent.value, it.axis.name) for it in lay.storage().shard] == [(8, "m")]


def test_pack_and_unpack_are_inverse_on_a_contiguous_layout():
    lay = TileLayout([Iter(4, 1, "laneid"), Iter(8, 1)])
    unpacked = lay.unpack(2)
    assert np.array_equal(offsets(unpacked, (4, 16)), np.tile(np.arange(16), (4, 1)))
    assert np.array_equal(offsets(unpacked.pack(2), (4, 8)), offsets(lay, (4, 8)))
    with pytest.raises(ValueError, match="cannot pack 3"):
        lay.pack(3)


def test_to_psum_without_the_trainium_backend_names_it(monkeypatch):
    from tvm.ir import layout as L

    monkeypatch.setattr(L, "LAYOUT_NAMES", type(L.LAYOUT_NAMES)("layout name"))
    with pytest.raises(AttributeError, match="pip install tvm-backend-trn"):
        TileLayout.row_major([4]).to_psum()


def test_to_psum_is_the_trainium_conversion(trn):
    from tvm_backend_trn.layout import to_psum_layout, trainium_layout

    lay = trainium_layout("PF", (128, 1024))
    assert_structural_equal(lay.to_psum(), to_psum_layout(lay))
    assert [it.axis.name for it in lay.to_psum().shard] == ["P", "Bank", "F"]


# -- Buffer.view / local / permute --------------------------------------------------------------


@T.prim_func
def _views(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32"),
           C: T.Buffer((32,), "float32")):
    flat = A.view(-1)
    At = A.permute(1, 0)
    for i, j in T.grid(8, 4):
        B[i, j] = At[i, j]
    for k in range(32):
        C[k] = flat[k] * T.float32(2)


def test_views_are_decl_buffers_over_the_same_memory():
    body = _views.body
    decls = [s for s in body.seq if isinstance(s, tvm.ir.stmt.DeclBuffer)]
    assert [d.buffer.name for d in decls] == ["flat", "At"]
    a = _views.buffer_map[_views.params[0]]
    assert all(d.buffer.data is a.data for d in decls)
    assert [s.value for s in decls[0].buffer.shape] == [32]


def test_views_print_and_parse_back():
    text = _views.script()
    assert "T.decl_buffer((32,), \"float32\", data=A.data)" in text
    assert_structural_equal(_views, from_source(text))


def test_views_compute_on_the_host():
    a = np.arange(32, dtype="float32").reshape(4, 8)
    b = np.zeros((8, 4), "float32")
    c = np.zeros(32, "float32")
    tvm.compile(_views, target="c")(a, b, c)
    assert np.array_equal(b, a.T)
    assert np.array_equal(c, a.reshape(-1) * 2)


def test_view_as_another_element_type_scales_the_last_dimension():
    buf = tvm.ir.Buffer("A", [4, 8], "float16")
    wide = buf.view("float32")
    assert [s.value for s in wide.shape] == [4, 4] and str(wide.dtype) == "float32"
    narrow = buf.view("int8")
    assert [s.value for s in narrow.shape] == [4, 16]
    assert wide.data is buf.data
    with pytest.raises(ValueError, match="not a multiple of 4"):
        tvm.ir.Buffer("B", [4, 6], "float16").view("float64")


def test_view_shape_errors_say_what_is_wrong():
    buf = tvm.ir.Buffer("A", [4, 8], "float32")
    with pytest.raises(ValueError, match=r"has 30 elements but A \[4, 8\] has 32"):
        buf.view(5, 6)
    with pytest.raises(ValueError, match="only one extent may be -1"):
        buf.view(-1, -1)
    with pytest.raises(ValueError, match="not a permutation"):
        buf.permute(0, 0)
    with pytest.raises(ValueError, match="has no layout"):
        buf.local()


def test_permute_of_a_laid_out_buffer_permutes_its_layout():
    lay = TileLayout([Iter(4, 1, "laneid"), Iter(8, 1)])
    buf = tvm.ir.Buffer("R", [4, 8], "float32", scope="local", layout=lay)
    t = buf.permute(1, 0)
    assert [s.value for s in t.shape] == [8, 4]
    for i, j in itertools.product(range(8), range(4)):
        assert t.layout.apply((i, j), (8, 4))["laneid"].value == j
        assert t.layout.apply((i, j), (8, 4))["m"].value == i


def test_local_is_the_threads_part_of_a_distributed_tile():
    lay = TileLayout([Iter(128, 1, "tid"), Iter(8, 1)])
    buf = tvm.ir.Buffer("R", [128, 8], "float32", scope="local", layout=lay)
    loc = buf.local()
    assert [s.value for s in loc.shape] == [8] and loc.data is buf.data
    assert loc.layout.is_memory_only()
    assert [s.value for s in buf.local(2, 4).shape] == [2, 4]


# -- layouts given as strings, allocated_addr ---------------------------------------------------


def test_default_layout_string_is_the_plain_buffer():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32", layout="default")):
        B = T.alloc_buffer((8,), "float32", layout="default")
        B[0] = A[0]

    @T.prim_func
    def g(A: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        B[0] = A[0]

    assert_structural_equal(f.body, g.body, map_free_vars=True)
    assert f.buffer_map[f.params[0]].layout is None


def test_other_layout_strings_need_a_backend_that_reads_them():
    with pytest.raises(ValueError, match="scope 'shared' has no reader"):
        T.alloc_buffer((8,), "float32", scope="shared", layout="PF")


def test_trainium_layout_strings(trn):
    from tvm_backend_trn.layout import trainium_layout

    spec = T.alloc_buffer((128, 512), "float32", scope="trn.sbuf", layout="PF")
    assert_structural_equal(spec.kwargs["layout"], trainium_layout("PF", (128, 512)))
    psum = T.alloc_buffer((128, 512), "float32", scope="trn.psum", layout="PF")
    assert [it.axis.name for it in psum.kwargs["layout"].shard] == ["P", "Bank", "F"]


def test_allocated_addr_places_a_tmem_buffer():
    @T.prim_func
    def f(addr: T.Buffer((1,), "uint32", scope="shared")):
        D = T.decl_buffer((128, 64), "float32", scope="tmem", allocated_addr=addr[0])
        T.evaluate(D.allocated_addr[0])

    decl = f.body.seq[0]
    assert decl.buffer.allocated_addr[0].buffer.name == "addr"
    assert_structural_equal(f, from_source(f.script()))
    with pytest.raises(ValueError, match="scope 'tmem'"):
        T.decl_buffer((4,), "float32", scope="shared", allocated_addr=0)


# -- tcgen05_atom_layout -------------------------------------------------------------------------


def test_tcgen05_atom_layout_32x32b_is_a_row_per_thread(cuda):
    from tvm.tirx.layout import tcgen05_atom_layout

    lay = tcgen05_atom_layout("32x32b", (128, 16), "float32")
    assert np.array_equal(offsets(lay, (128, 16), "tid_in_wg")[:, 0], np.arange(128))
    assert np.array_equal(offsets(lay, (128, 16))[5], np.arange(16))
    assert tcgen05_atom_layout("32x32b", (128, 32), "float16").size("m").value == 32
    with pytest.raises(ValueError, match="rows must be 128"):
        tcgen05_atom_layout("32x32b", (64, 16), "float32")
    with pytest.raises(ValueError, match="16 or 32 bits"):
        tcgen05_atom_layout("32x32b", (128, 16), "float64")
    with pytest.raises(ValueError, match="no whole .xN"):
        tcgen05_atom_layout("16x256b", (64, 24), "float32")
    with pytest.raises(ValueError, match="rows must be 64"):
        tcgen05_atom_layout("16x64b", (32, 16), "float32")


# The .16x* fragments as CUTLASS's SM100_TMEM_LOAD_16dp<W>b<N>x traits write them: a warp's
# (thread, value bit) -> bit of its 16 rows x W*N bits, as CuTe (shape, stride) modes.
def _cutlass_fragment(width: int, n: int):
    if width == 64:
        return ((2, 2, 8), (512 * n, 32, 64 * n)), ((32, n), (1, 64))
    if width == 128:
        return ((4, 8), (32, 128 * n)), ((32, 2, n), (1, 1024 * n, 128))
    return ((4, 8), (64, 256 * n)), ((64, 2, n), (1, 2048 * n, 256))


def _cute(index, shape, stride):
    out = 0
    for ext, st in zip(shape, stride):
        out += (index % ext) * st
        index //= ext
    return out


def _expected_owner(width, n, rows, cols32):
    """(row, 32-bit column) -> (warp, lane, register) of one warpgroup's tcgen05.ld."""
    (tshape, tstride), (vshape, vstride) = _cutlass_fragment(width, n)
    regs = width * n // 32 // 2  # registers a lane holds per issue (16 rows x W*N bits / 32)
    owner = {}
    for warp in range(4):
        for slab in range(rows // 64):
            for lane in range(32):
                for reg in range(regs):
                    bit = _cute(lane, tshape, tstride) + _cute(32 * reg, vshape, vstride)
                    row, col = divmod(bit, width * n)
                    owner[(rows // 4 * warp + 16 * slab + row, col // 32)] = (
                        warp, lane, slab * regs + reg)
    assert len(owner) == rows * cols32
    return owner


@pytest.mark.parametrize("rows", [64, 128])
@pytest.mark.parametrize(("shape", "width", "n"), [("16x64b", 64, 1), ("16x64b", 64, 4),
                                                   ("16x128b", 128, 2), ("16x256b", 256, 1),
                                                   ("16x256b", 256, 2)])
def test_tcgen05_atom_layout_16x_shapes_match_cutlass(cuda, shape, width, n, rows):
    from tvm.tirx.layout import tcgen05_atom_layout

    cols = width * n // 32
    owner = _expected_owner(width, n, rows, cols)
    lay = tcgen05_atom_layout(shape, (rows, cols), "float32")
    for (row, col), (warp, lane, reg) in owner.items():
        got = lay.apply((row, col), (rows, cols))
        assert (got["wid_in_wg"].value, got["laneid"].value, got["m"].value) == \
            (warp, lane, reg), (shape, row, col)
    half = tcgen05_atom_layout(shape, (rows, 2 * cols), "bfloat16")  # two to a register
    for (row, col), (warp, lane, reg) in list(owner.items())[:64]:
        for k in range(2):
            got = half.apply((row, 2 * col + k), (rows, 2 * cols))
            assert (got["wid_in_wg"].value, got["laneid"].value, got["m"].value) == \
                (warp, lane, 2 * reg + k)
