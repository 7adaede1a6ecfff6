"""Rows of the main-job table (``python -m tvm demo``): kernels compiled for
``aws/trn1/trn1.2xlarge`` and run in the simulator, checked against numpy."""

from __future__ import annotations

import importlib.util
from typing import Any, no_type_check

from tvm.backend.sdk import DemoKernel, make_case
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

from .layout import trainium_layout as tl

__all__ = ["KERNELS", "demo_cases", "gemm_kernel", "softmax_kernel"]

TARGET = "aws/trn1/trn1.2xlarge"


@no_type_check  # TVMScript: the parser, not Python, gives the annotations meaning
def gemm_kernel(m: int = 512, k: int = 512, n: int = 1024, dtype: str = "float32") -> Any:
    """``C = A @ B`` through SBUF, nc_matmul tiles accumulating in PSUM, and back."""
    @T.prim_func
    def gemm(A: T.Buffer((m, k), dtype), B: T.Buffer((k, n), dtype),
             C: T.Buffer((m, n), dtype)):
        A_sb = T.alloc_buffer((m, k), dtype, scope="trn.sbuf", layout=tl("FP", (m, k)))
        B_sb = T.alloc_buffer((k, n), dtype, scope="trn.sbuf", layout=tl("PF", (k, n)))
        C_sb = T.alloc_buffer((m, n), dtype, scope="trn.sbuf", layout=tl("PF", (m, n)))
        Tx.copy(A_sb, A)
        Tx.copy(B_sb, B)
        Tx.gemm(C_sb, A_sb, B_sb)
        Tx.copy(C, C_sb)

    return gemm


@no_type_check  # TVMScript
def softmax_kernel(rows: int = 128, cols: int = 512) -> Any:
    """Row softmax: rows on partitions, max/exp/sum/divide along the free axis."""
    @T.prim_func
    def softmax(X: T.Buffer((rows, cols), "float32"), Y: T.Buffer((rows, cols), "float32")):
        x = T.alloc_buffer((rows, cols), "float32", scope="trn.sbuf")
        mx = T.alloc_buffer((rows, 1), "float32", scope="trn.sbuf")
        sm = T.alloc_buffer((rows, 1), "float32", scope="trn.sbuf")
        Tx.copy(x, X)
        Tx.max(mx, x, axes=-1)
        Tx.sub(x, x, mx)
        Tx.exp(x, x)
        Tx.sum(sm, x, axes=-1)
        Tx.fdiv(x, x, sm)
        Tx.copy(Y, x)

    return softmax


def _softmax_ref(x: Any, y: Any) -> Any:
    import numpy as np

    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _kernels() -> list[Any]:
    def gemm_inputs(rng: Any) -> list[Any]:
        return [rng.standard_normal((512, 512)).astype("float32"),
                rng.standard_normal((512, 1024)).astype("float32"),
                __import__("numpy").zeros((512, 1024), "float32")]

    def softmax_inputs(rng: Any) -> list[Any]:
        return [rng.standard_normal((128, 512)).astype("float32"),
                __import__("numpy").zeros((128, 512), "float32")]

    return [
        DemoKernel("trn gemm 512x512x1024 (simulated)", gemm_kernel, gemm_inputs,
                   lambda a, b, c: a @ b, output=2, rtol=1e-4, atol=1e-3),
        DemoKernel("trn softmax 128x512 (simulated)", softmax_kernel, softmax_inputs,
                   _softmax_ref, output=1, rtol=1e-5, atol=1e-6),
    ]


KERNELS = _kernels


def demo_cases() -> list[Any]:
    # The simulator needs numpy and ml_dtypes: no rows without them.
    if importlib.util.find_spec("numpy") is None:
        return []
    return [make_case(k, TARGET, backend="trn", repeat=3) for k in _kernels()]
