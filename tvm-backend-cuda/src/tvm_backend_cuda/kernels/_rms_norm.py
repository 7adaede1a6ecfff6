"""RMSNorm of each row: ``Y = X * rsqrt(mean(X ** 2) + eps) * W`` (X [m, n], W [n])."""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.script import tirx as T

from ._rows import row_kernel_setup, weights_early


@no_type_check  # TVMScript: the parser gives the annotations their meaning
def rms_norm_func(m: int, n: int, dtype: str = "float32", eps: float = 1e-6, *,
                  threads: int | None = None) -> Any:
    """One pass: the row and W are loaded into registers (16-byte vectors), the sum of squares
    is reduced over the row's threads, the row is scaled and stored."""
    dt, plan, rows, S, layout, P = row_kernel_setup(m, n, dtype, threads)
    inv_n = 1.0 / n
    early = weights_early(plan, dt)  # W in registers from the start

    @T.prim_func
    def rms_norm(X: T.Buffer((m, n), dt), W: T.Buffer((n,), dt), Y: T.Buffer((m, n), dt)):
        T.device_entry()
        bx = T.cta_id([(m + rows - 1) // rows])
        tid = T.thread_id([plan.threads * rows])
        x = T.alloc_buffer((P,), "float32", scope="local", layout=layout)
        w = T.alloc_buffer((P,), "float32", scope="local", layout=layout)
        sq = T.alloc_buffer((P,), "float32", scope="local", layout=layout)
        ss = T.alloc_buffer((1,), "float32", scope="local")
        row = bx * rows + tid // plan.threads
        if row < m:
            S.copy(x[0:n], X[row, 0:n])
            if early:
                S.copy(w[0:n], W[0:n])
            S.mul(sq[0:n], x[0:n], x[0:n])
            S.sum(ss[0:1], sq[0:n])
            if not early:  # after the reduction: fewer registers live across it
                S.copy(w[0:n], W[0:n])
            ss[0] = T.rsqrt(ss[0] * T.float32(inv_n) + T.float32(eps))
            S.mul(x[0:n], x[0:n], ss[0])
            S.mul(x[0:n], x[0:n], w[0:n])
            S.copy(Y[row, 0:n], x[0:n])

    return rms_norm
