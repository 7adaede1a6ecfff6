"""Row softmax: ``Y[i, :] = exp(X[i, :] - max(X[i, :])) / sum(exp(...))``."""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.script import tirx as T

from ._rows import row_kernel_setup

LOG2E = 1.4426950408889634


@no_type_check  # TVMScript: the parser gives the annotations their meaning
def softmax_func(m: int, n: int, dtype: str = "float32", *, threads: int | None = None) -> Any:
    """One pass: the row is loaded into registers (16-byte vectors), its max and the sum of
    ``exp2((x - max) * log2 e)`` are reduced over the row's threads, the row is scaled by the
    reciprocal of the sum and stored."""
    dt, plan, rows, S, layout, P = row_kernel_setup(m, n, dtype, threads)

    @T.prim_func
    def softmax(X: T.Buffer((m, n), dt), Y: T.Buffer((m, n), dt)):
        T.device_entry()
        bx = T.cta_id([(m + rows - 1) // rows])
        tid = T.thread_id([plan.threads * rows])
        x = T.alloc_buffer((P,), "float32", scope="local", layout=layout)
        red = T.alloc_buffer((2,), "float32", scope="local")
        row = bx * rows + tid // plan.threads
        if row < m:
            S.copy(x[0:n], X[row, 0:n])
            S.max(red[0:1], x[0:n])
            red[0] = red[0] * T.float32(-LOG2E)
            S.exp2(x[0:n], x[0:n], bias=red[0], scale=T.float32(LOG2E))
            S.sum(red[1:2], x[0:n])
            red[1] = T.float32(1) / red[1]
            S.mul(x[0:n], x[0:n], red[1])
            S.copy(Y[row, 0:n], x[0:n])

    return softmax
