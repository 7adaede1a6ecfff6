"""Kernels over a 3 x 2**30 ``uint8`` array with ``T.int32`` shape variables (issue 26): their
flat offsets pass 2**31, so they are computed in 64 bits although every variable is 32-bit.
Shared by the host test and the CUDA tests (NVRTC, and a run on a GPU)."""

from __future__ import annotations

from typing import Any, no_type_check

from ..script import tirx as T

__all__ = ["BIG_SHAPE", "big_input", "expected_row_sums", "row_sums", "row_sums_kernel_form"]

BIG_SHAPE = (3, 2**30)


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def row_sums() -> Any:
    """Host form: ``S[i] = sum(A[i, :])``, and ``B`` gets each row's last element and, in the
    reversed row, its first (writes past 2**31 too)."""
    @T.prim_func
    def row_sums(a: T.handle, s: T.handle, b: T.handle):
        n = T.int32()
        m = T.int32()
        A = T.match_buffer(a, (n, m), "uint8")
        S = T.match_buffer(s, (n,), "int64")
        B = T.match_buffer(b, (n, m), "uint8")
        for i in range(n):
            S[i] = T.int64(0)
            for j in range(m):
                S[i] = S[i] + T.Cast("int64", A[i, j])
            B[i, m - 1] = A[i, m - 1]
            B[(n - 1) - i, 0] = A[i, 0]

    return row_sums


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def row_sums_kernel_form() -> Any:
    """Kernel form: one CTA per row, 256 threads; ``S[i, t]`` is thread ``t``'s partial sum."""
    @T.prim_func
    def row_sums_kernel(a: T.handle, s: T.handle):
        n = T.int32()
        m = T.int32()
        A = T.match_buffer(a, (n, m), "uint8")
        S = T.match_buffer(s, (n, 256), "int64")
        T.device_entry()
        bx = T.cta_id([n])
        tx = T.thread_id([256])
        S[bx, tx] = T.int64(0)
        for j in range((m + 255) // 256):
            if j * 256 + tx < m:
                S[bx, tx] = S[bx, tx] + T.Cast("int64", A[bx, j * 256 + tx])

    return row_sums_kernel


def big_input() -> Any:
    """A zeroed 3 x 2**30 array (untouched pages cost no memory) with a few values set, the
    last ones past offset 2**31."""
    import numpy as np

    a = np.zeros(BIG_SHAPE, np.uint8)
    a[0, 0] = 4
    a[1, 5] = 7
    a[2, 0] = 9
    a[2, -3:] = [1, 2, 3]
    return a


def expected_row_sums(a: Any) -> Any:
    import numpy as np

    return a.sum(axis=1, dtype=np.int64)
