"""The conformance kit (tvm.testing.conformance) run against the Trainium backend for
``aws/trn1/trn1.2xlarge``, in the simulator.

Trainium kernels are tile primitives over on-chip (SBUF) buffers, not the kit's kernel form
(``T.device_entry`` and thread indices), so this backend supplies its own kernels for the checks:
the same parameters, the same results."""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.testing import conformance as kit
from tvm.testing.conformance import BackendConformance


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def _vector_add() -> Any:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    n = kit.VADD_N

    @T.prim_func
    def vector_add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
                   C: T.Buffer((n,), "float32")):
        a = T.alloc_buffer((n,), "float32", scope="trn.sbuf")
        b = T.alloc_buffer((n,), "float32", scope="trn.sbuf")
        Tx.copy(a, A)
        Tx.copy(b, B)
        Tx.add(a, a, b)
        Tx.copy(C, a)

    return vector_add


@no_type_check  # TVMScript
def _elementwise() -> Any:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    m, n = kit.ROWS, kit.COLS

    @T.prim_func
    def elementwise(A: T.Buffer((m, n), "float32"), B: T.Buffer((m, n), "float32"),
                    C: T.Buffer((m, n), "float32")):
        a = T.alloc_buffer((m, n), "float32", scope="trn.sbuf")
        b = T.alloc_buffer((m, n), "float32", scope="trn.sbuf")
        c = T.alloc_buffer((m, n), "float32", scope="trn.sbuf")
        Tx.copy(a, A)
        Tx.exp(b, a, scale=0.5)
        Tx.add(b, b, a)
        Tx.maximum(c, b, 1.25)
        Tx.sub(c, c, a)
        Tx.copy(B, b)
        Tx.copy(C, c)

    return elementwise


@no_type_check  # TVMScript
def _reduction() -> Any:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    m, n = kit.ROWS, kit.COLS

    @T.prim_func
    def reduction(A: T.Buffer((m, n), "float32"), S: T.Buffer((m,), "float32"),
                  M: T.Buffer((m,), "float32")):
        a = T.alloc_buffer((m, n), "float32", scope="trn.sbuf")
        s = T.alloc_buffer((m,), "float32", scope="trn.sbuf")
        x = T.alloc_buffer((m,), "float32", scope="trn.sbuf")
        Tx.copy(a, A)
        Tx.sum(s, a, axes=-1)
        Tx.max(x, a, axes=-1)
        Tx.copy(S, s)
        Tx.copy(M, x)

    return reduction


@no_type_check  # TVMScript
def _gemm() -> Any:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_trn.layout import trainium_layout as tl

    m, n, k = kit.GEMM_M, kit.GEMM_N, kit.GEMM_K

    @T.prim_func
    def gemm(A: T.Buffer((m, k), "float32"), B: T.Buffer((n, k), "float32"),
             C: T.Buffer((m, n), "float32"), D: T.Buffer((m, n), "float32")):
        a = T.alloc_buffer((m, k), "float32", scope="trn.sbuf", layout=tl("FP", (m, k)))
        b = T.alloc_buffer((n, k), "float32", scope="trn.sbuf", layout=tl("FP", (n, k)))
        c = T.alloc_buffer((m, n), "float32", scope="trn.sbuf")
        Tx.copy(a, A)
        Tx.copy(b, B)
        Tx.copy(c, C)
        Tx.mul(c, c, 2.0)  # on Trainium the accumulator is D itself, with beta 1
        Tx.gemm(c, a, b, c, transpose_B=True, alpha=0.5, beta=1.0)
        Tx.copy(D, c)

    return gemm


class TestTrnConformance(BackendConformance):
    target = "aws/trn1/trn1.2xlarge"
    _kernels = {"vector_add": _vector_add, "elementwise": _elementwise,
                "reduction": _reduction, "gemm": _gemm}

    def kernel(self, name: str) -> Any:
        return self._kernels[name]()
