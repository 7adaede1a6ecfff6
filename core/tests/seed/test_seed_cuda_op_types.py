"""The CUDA part of the seed's ``tests/python/tirx-base/test_tir_op_types.py``: the builders of
``tvm.backend.cuda.op`` build the ops the seed names (``tirx.mma_store`` is a flat name of the
seed's; here an op is the same whether found by its canonical or its flat name)."""

from __future__ import annotations

import pytest

from tvm import tirx
from tvm.ir import Op

A = tirx.decl_buffer([32], "int4", scope="local")
B = tirx.decl_buffer([16], "uint4", scope="local")
C = tirx.decl_buffer([4], "int32", scope="local")
D = tirx.decl_buffer([1], "uint32", scope="local")
W = tirx.decl_buffer([16, 8], "int32", scope="warp", offset_factor=1)
SH = tirx.decl_buffer([16, 16], "float16", scope="shared")
LO = tirx.decl_buffer([8], "float16", scope="local")

CASES = [
    ("ptx_mma_legacy", "tirx.ptx.mma_legacy",
     lambda c: c.ptx_mma_legacy("int32", "m8n8k32", "row", "col", "int4", "uint4", "int32", A.data, 0,
                                B.data, 0, C.data, 0, False)),
    ("ptx_mma_sp_legacy", "tirx.ptx.mma_sp",
     lambda c: c.ptx_mma_sp_legacy("int32", "m8n8k32", "row", "col", "int4", "uint4", "int32", A.data,
                                   0, B.data, 0, C.data, 0, D.data, 0, 0, False)),
    ("mma_store", "tirx.mma_store",
     lambda c: c.mma_store("int32", 16, 16, C.data, W.data, W.elem_offset, 4)),
    ("mma_fill", "tirx.mma_fill",
     lambda c: c.mma_fill("int32", 8, W.data, W.elem_offset)),
    ("ptx_ldmatrix", "tirx.ptx.ldmatrix",
     lambda c: c.ptx_ldmatrix(False, 4, ".b16", SH.data, LO.data, LO.data, LO.data, LO.data)),
    ("ptx_cp_async_legacy", "tirx.ptx.cp_async",
     lambda c: c.ptx_cp_async_legacy("float16", SH.data, 0, LO.data, 0, 16)),
    ("ptx_cp_async_bulk", "tirx.ptx.cp_async_bulk",
     lambda c: c.ptx_cp_async_bulk("float16", SH.data, 0, LO.data, 0, 16, 0)),
]


@pytest.mark.parametrize("name, seed_op, build", CASES, ids=[c[0] for c in CASES])
def test_cuda_builder_builds_the_seed_op(cuda, name, seed_op, build):
    from tvm.backend.cuda import op as cuda_op

    expr = build(cuda_op)
    assert expr.op is Op.get(seed_op)
