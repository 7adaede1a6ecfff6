"""LayerNorm of each row: ``Y = (X - mean) * rsqrt(var + eps) * W + B`` (X [m, n]; W, B [n])."""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.script import tirx as T

from ._rows import row_kernel_setup, weights_early


@no_type_check  # TVMScript: the parser gives the annotations their meaning
def layer_norm_func(m: int, n: int, dtype: str = "float32", eps: float = 1e-5, *,
                    threads: int | None = None) -> Any:
    """One pass over memory: the row, W and B are loaded into registers (16-byte vectors); the
    mean, then the variance of the centred row (two reductions over the row's threads, from
    registers); then ``(x - mean) * rstd * W + B`` is stored."""
    dt, plan, rows, S, layout, P = row_kernel_setup(m, n, dtype, threads)
    inv_n = 1.0 / n
    early = weights_early(plan, dt)  # W and B in registers from the start

    @T.prim_func
    def layer_norm(X: T.Buffer((m, n), dt), W: T.Buffer((n,), dt), B: T.Buffer((n,), dt),
                  Y: T.Buffer((m, n), dt)):
        T.device_entry()
        bx = T.cta_id([(m + rows - 1) // rows])
        tid = T.thread_id([plan.threads * rows])
        x = T.alloc_buffer((P,), "float32", scope="local", layout=layout)
        w = T.alloc_buffer((P,), "float32", scope="local", layout=layout)
        b = T.alloc_buffer((P,), "float32", scope="local", layout=layout)
        sq = T.alloc_buffer((P,), "float32", scope="local", layout=layout)
        red = T.alloc_buffer((2,), "float32", scope="local")
        row = bx * rows + tid // plan.threads
        if row < m:
            S.copy(x[0:n], X[row, 0:n])
            if early:
                S.copy(w[0:n], W[0:n])
                S.copy(b[0:n], B[0:n])
            S.sum(red[0:1], x[0:n])
            red[0] = red[0] * T.float32(-inv_n)
            S.add(x[0:n], x[0:n], red[0])
            S.mul(sq[0:n], x[0:n], x[0:n])
            S.sum(red[1:2], sq[0:n])
            red[1] = T.rsqrt(red[1] * T.float32(inv_n) + T.float32(eps))
            if not early:  # after the reductions: fewer registers live across them
                S.copy(w[0:n], W[0:n])
                S.copy(b[0:n], B[0:n])
            S.mul(x[0:n], x[0:n], red[1])
            S.fma(x[0:n], x[0:n], w[0:n], b[0:n])
            S.copy(Y[row, 0:n], x[0:n])

    return layer_norm
