"""A host kernel with tuning options, importable by name (the tuner's worker processes import
the factory by its module and name)."""

from __future__ import annotations

from typing import Any, no_type_check

from tvm.script import tirx as T


@no_type_check  # TVMScript: the parser gives the annotations their meaning
def scale_func(n: int, dtype: str = "float32", *, unroll: int = 1, wrong: bool = False,
               idle: bool = False) -> Any:
    """``B = A * 2`` over ``n`` elements in an unrolled inner loop (``wrong``: ``A + 2``, a
    candidate whose answer is wrong; ``idle``: one that leaves B as it was)."""
    if n % unroll:
        raise ValueError(f"unroll={unroll} does not divide n={n}")

    @T.prim_func
    def scale(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype)):
        for i in T.serial(n // unroll):
            for j in T.unroll(unroll):
                if idle:
                    B[i * unroll + j] = B[i * unroll + j]
                elif wrong:
                    B[i * unroll + j] = A[i * unroll + j] + T.float32(2)
                else:
                    B[i * unroll + j] = A[i * unroll + j] * T.float32(2)

    return scale
