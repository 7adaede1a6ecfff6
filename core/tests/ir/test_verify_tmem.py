"""The verifier and tensor memory: a ``tmem`` buffer is placed by its TMEM address
(``allocated_addr``), not by a pointer, so its declaration needs no data defined before it; any
other declaration without defined data is still an error."""

from __future__ import annotations

from typing import Any, no_type_check

import pytest

from tvm.error import IRVerifyError
from tvm.ir.verify import verify
from tvm.script import tirx as T


@no_type_check
def _decl(scope: str) -> Any:
    if scope == "tmem":
        @T.prim_func
        def f(addr: T.Buffer((1,), "uint32", scope="shared"), out: T.Buffer((1,), "uint32")):
            D = T.decl_buffer((128, 32), "float32", scope="tmem", allocated_addr=addr[0])
            out[0] = T.uint32(D.elem_offset)

        return f

    @T.prim_func
    def g(out: T.Buffer((1,), "uint32")):
        D = T.decl_buffer((128, 32), "float32", scope="shared")
        out[0] = T.uint32(D.elem_offset)

    return g


def test_a_tmem_buffer_at_an_allocated_address_verifies() -> None:
    f = _decl("tmem")
    verify(f)
    assert f.body.seq[0].buffer.allocated_addr[0].buffer.name == "addr"


def test_a_shared_declaration_without_data_is_still_refused() -> None:
    with pytest.raises(IRVerifyError, match="DeclBuffer `D` views data `D` that is not defined"):
        verify(_decl("shared"))
