"""The seed's ``tests/python/tirx/test_op_namespace_cleanup.py``, restated against this API.

Where the seed reads C++ op attributes (``TIRxOpCategory``, ``TDeviceIntrinsicNamespace``,
``TScriptPrinterName``, ``TCallEffectKind``) this project has :class:`tvm.ir.Op` fields
(``category``, ``namespace``, ``printer_name``, ``effect``). The seed's
``test_backend_load_updates_tirx_alias_and_script_facades`` (the ``register_backend()``
contract) is ``core/tests/plugin/test_loader.py::test_legacy_register_backend_contract`` and
``test_aliases.py`` here, on fake installed backends.
"""

from __future__ import annotations

from typing import Any

import pytest

import tvm
from tvm.ir import (
    Call,
    Op,
    OpCategory,
    TilePrimitiveCall,
    assert_structural_equal,
    post_order_visit,
)
from tvm.ir.op import OP_REGISTRY
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def _nodes(func: Any, cls: type) -> list[Any]:
    found: list[Any] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


def _has_path(root: Any, path: str) -> bool:
    cur = root
    for part in path.split("."):
        if not hasattr(cur, part):
            return False
        cur = getattr(cur, part)
    return True


def test_tx_is_tile_shorthand_only():
    assert T.tile is Tx
    assert T.tile.copy is Tx.copy
    assert not hasattr(T, "copy")
    for name in ("SMEMPool", "ScopedOp", "meta_class"):
        assert not hasattr(Tx, name)
    assert T.cast is not Tx.cast
    assert T.sqrt is not Tx.sqrt


def test_tx_rejects_expression_overloads():
    x, y = tvm.tirx.Var("x", "float32"), tvm.tirx.Var("y", "int32")
    for call in (lambda: Tx.sqrt(x), lambda: T.tile.sqrt(x), lambda: Tx.cast(y, "float32"),
                 lambda: T.tile.cast(y, "float32")):
        with pytest.raises(TypeError, match="tile-only"):
            call()


def test_builtin_expression_ops_are_not_tile_primitives():
    x, y = tvm.tirx.Var("x", "int32"), tvm.tirx.Var("y", "float32")
    cast = T.cast(x, "float32")
    assert isinstance(cast, tvm.tirx.Cast) and cast.dtype == "float32"
    assert T.sqrt(y).op.name == "tirx.sqrt"
    assert T.fma(y, y, y).op.name == "tirx.fma"


def test_kernel_replace_point_is_builtin_marker_not_tile_primitive():
    assert Op.get("tirx.tvm_kernel_replace_point").category is OpCategory.BUILTIN
    assert not Op.exists("tirx.tile.tvm_kernel_replace_point")
    assert hasattr(T, "tvm_kernel_replace_point")
    assert not hasattr(Tx, "tvm_kernel_replace_point")

    @T.prim_func(check_well_formed=False)
    def marker():
        T.tvm_kernel_replace_point()

    assert [c.op.name for c in _nodes(marker, Call)] == ["tirx.tvm_kernel_replace_point"]
    assert _nodes(marker, TilePrimitiveCall) == []
    code = marker.script()
    assert "T.tvm_kernel_replace_point()" in code
    assert "T.tile.tvm_kernel_replace_point" not in code
    assert_structural_equal(marker, tvm.script.from_source(code))


def test_tile_shorthand_and_scoped_aliases_use_tile_ops():
    @T.prim_func(check_well_formed=False)
    def tile_aliases(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (16,), "float32")
        B = T.match_buffer(b, (16,), "float32")
        T.tile.copy(A[0:16], B[0:16])
        Tx.cast(A[0:16], B[0:16])
        T.cta.cast(A[0:16], B[0:16])
        Tx.cta.sqrt(A[0:16], B[0:16])

    calls = _nodes(tile_aliases, TilePrimitiveCall)
    assert [c.op.name for c in calls] == ["tirx.tile.copy", "tirx.tile.cast", "tirx.tile.cast",
                                          "tirx.tile.sqrt"]
    assert [c.scope for c in calls] == ["thread", "thread", "cta", "cta"]


def test_device_intrinsic_namespaces_are_canonical_and_classified(cuda, metal, trn):
    from tvm.backend.cuda.script import CUDANamespace, NVSHMEMNamespace, PTXNamespace
    from tvm.backend.metal.script import MetalNamespace
    from tvm.backend.trn.script import NKINamespace
    from tvm.tirx.script.builder import ir as builder_ir

    for name, cls in (("cuda", CUDANamespace), ("ptx", PTXNamespace),
                      ("nvshmem", NVSHMEMNamespace), ("metal", MetalNamespace),
                      ("nki", NKINamespace)):
        assert isinstance(getattr(builder_ir, name), cls)
        assert getattr(T, name) is getattr(builder_ir, name)

    buffer = tvm.tirx.decl_buffer((1,), "float32")
    calls = [T.ptx.elect_sync(), T.cuda.thread_fence(), T.nvshmem.fence(),
             T.nki.identity(buffer[0:1], 1)]
    expected = [("tirx.ptx.elect_sync", "ptx"), ("tirx.cuda.thread_fence", "cuda"),
                ("tirx.nvshmem.fence", "nvshmem"), ("tirx.nki.identity", "nki")]
    assert [(c.op.name, c.op.namespace) for c in calls] == expected
    for op_name, _ in expected:
        assert Op.get(op_name).category is OpCategory.DEVICE_INTRIN


def test_backend_specific_wrappers_are_not_root_exports(cuda, metal, trn):
    from tvm.tirx.cuda import op as cuda_op
    from tvm.tirx.metal import op as metal_op
    from tvm.tirx.trn import op as trn_op

    for name in ("ptx_mma", "mma_store", "cuda_thread_fence", "nvshmem_fence",
                 "make_filled_simdgroup_matrix", "simdgroup_load", "nki_load"):
        assert not hasattr(tvm.tirx.op, name)
        assert not hasattr(tvm.tirx, name)
        assert not hasattr(T, name)
    for module, name in ((cuda_op, "ptx_mma"), (cuda_op, "mma_store"),
                         (cuda_op, "cuda_thread_fence"), (cuda_op, "nvshmem_fence"),
                         (metal_op, "make_filled_simdgroup_matrix"),
                         (metal_op, "simdgroup_load"), (trn_op, "nki_load")):
        assert callable(getattr(module, name))
    for name in ("cuda", "ptx", "nvshmem", "metal", "nki"):
        assert hasattr(T, name)


def test_seed_flat_op_names_resolve_to_the_canonical_ops(metal, trn):
    """The seed registers its device intrinsics under flat names too (tirx.nki_load)."""
    from tvm.tirx.op import call_intrin

    assert Op.get("tirx.nki_load") is Op.get("tirx.nki.load")
    assert call_intrin("", "tirx.nki_identity", tvm.tirx.decl_buffer((1,), "float32"),
                       1).op.name == "tirx.nki.identity"
    assert Op.get("tirx.simdgroup_load") is Op.get("tirx.metal.simdgroup_load")


def test_device_intrinsic_printer_roundtrips_canonical_namespaces(cuda, metal):
    @T.prim_func
    def device_namespaces(dst: T.handle, src: T.handle):
        A = T.match_buffer(src, (1,), "float32")
        R = T.alloc_buffer((1,), "float32", scope="local")
        T.cuda.copy_bytes(dst, src, 16)
        T.ptx.ldg32(R[0], 1, A[0], 0)
        T.metal.simd_shuffle(A[0], 0)

    names = ["tirx.cuda.copy_bytes", "tirx.ptx.ldg32", "tirx.metal.simd_shuffle"]
    assert [c.op.name for c in _nodes(device_namespaces, Call)] == names
    for op_name, ns in zip(names, ("cuda", "ptx", "metal")):
        op = Op.get(op_name)
        assert op.category is OpCategory.DEVICE_INTRIN and op.namespace == ns
        assert int(op.effect) in (1, 3)
    code = device_namespaces.script()
    for form in ("T.cuda.copy_bytes(", "T.ptx.ldg32(", "T.metal.simd_shuffle("):
        assert form in code
    assert "T.tirx." not in code
    reparsed = tvm.script.from_source(code)
    assert reparsed.script() == code
    assert_structural_equal(device_namespaces, reparsed)


FLAT_TILE_ONLY = {f"tirx.{n}" for n in (
    "add", "binary_chain", "binary_reduce", "compose_op", "copy", "copy_async", "fdiv", "fill",
    "gemm", "gemm_async", "maximum", "memset", "minimum", "mul", "permute_layout",
    "reduce_negate", "select", "sub", "sum", "unary_reduce", "zero")}


def test_registered_tirx_ops_have_exactly_one_category(cuda, metal, trn):
    from tvm.script.namespace import NAMESPACES

    # the seed's namespaces, and those of any other loaded backend (T.opencl, ...)
    namespaces = {"cuda", "ptx", "nvshmem", "nki", "metal", "webgpu", *NAMESPACES.keys()}
    lingering = []
    # the seed's ops: core's and the three seed backends' (tests register ops of their own)
    owners = {"core", "cuda", "metal", "trn"}
    for op in Op.list("tirx."):
        if OP_REGISTRY.owner_of(op.name) not in owners:
            continue
        if op.name in FLAT_TILE_ONLY:
            lingering.append(op.name)
        if op.category is OpCategory.TILE_PRIMITIVE:
            assert op.name.startswith("tirx.tile.") and op.namespace is None, op.name
        elif op.category is OpCategory.DEVICE_INTRIN:
            assert op.namespace in namespaces, op.name
            assert op.printer_name.startswith(op.namespace + "."), op.name
            assert _has_path(T, op.printer_name), op.name
        else:
            assert op.category is OpCategory.BUILTIN and op.namespace is None, op.name
    assert not lingering


def test_metal_simdgroup_forms_roundtrip(metal):
    """The seed's dlight Metal matmul scripts spell the simdgroup ops ``T.metal.*``
    (test_gpu_matmul_tensorize.py)."""

    @T.prim_func
    def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        A_sg = T.alloc_buffer((64,), "float32", scope="metal.simdgroup")
        C_sg = T.alloc_buffer((64,), "float32", scope="metal.simdgroup")
        T.metal.make_filled_simdgroup_matrix(C_sg.data, 0, T.float32(0), 8, 8)
        T.metal.simdgroup_load(A_sg.data, 0, T.address_of(A[0, 0]), 8, 8, 8, T.bool(False))
        T.metal.simdgroup_multiply_accumulate(C_sg.data, 0, A_sg.data, 0, A_sg.data, 0,
                                              C_sg.data, 0)
        T.metal.simdgroup_store(C_sg.data, 0, T.address_of(C[0, 0]), 8, 8, 8, T.bool(False))

    code = f.script()
    for name in ("make_filled_simdgroup_matrix", "simdgroup_load",
                 "simdgroup_multiply_accumulate", "simdgroup_store"):
        assert f"T.metal.{name}(" in code and f"T.{name}(" not in code
    reparsed = tvm.script.from_source(code)
    assert reparsed.script() == code
    assert_structural_equal(f, reparsed)
