"""``gemm`` on trn (variant ``default``, p10): ``nc_matmul`` accumulating in PSUM.

``D = alpha * op(A) @ op(B) (+ C when C is D and beta == 1)``. The tensor engine contracts over
partitions, so A and B must have their K dim on partitions (``A`` ``[M, K]`` laid out ``FP``,
or ``[K, M]`` ``PF`` with ``transpose_A``; ``B`` ``[K, N]`` ``PF``) and both live in SBUF. The
loops tile M and K by 128 and N by 512 (one 2 KiB PSUM bank of fp32), with tails. D in PSUM is
written by the matmuls directly; D in SBUF goes through an ``acc_psum`` workspace and is
evicted (scaled by alpha, added to D when beta == 1) after each K loop.
"""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import DispatchContext, fail, register_dispatch
from tvm.ir import NE, BufferRegion, FloatImm, IntImm, PrimFunc, Range, TilePrimitiveCall, seq

from .common import (
    TRN_ONLY,
    check_layout,
    emit,
    func,
    loop,
    nki,
    pdims,
    region,
    segments,
    shape_of,
    workspace,
)

__all__ = ["gemm_trn", "register"]

TM, TK, TN = 128, 128, 512


def _flag(x: Any) -> bool:
    return bool(getattr(x, "value", x))


def _float(x: Any) -> float:
    if isinstance(x, (FloatImm, IntImm)):
        return float(x.value)
    if isinstance(x, (int, float)):
        return float(x)
    fail(f"alpha/beta must be constants on Trainium, got {x}")


def gemm_trn(op: TilePrimitiveCall, sctx: DispatchContext) -> PrimFunc:
    d, a, b = region(op.args[0]), region(op.args[1]), region(op.args[2])
    c = op.args[3]
    ta, tb = _flag(op.args[4]), _flag(op.args[5])
    alpha, beta = _float(op.args[6]), _float(op.args[7])
    for r, what in ((a, "A"), (b, "B")):
        if r.buffer.scope != "trn.sbuf":
            fail(f"Invalid buffer layout and scope: {what} must be in trn.sbuf")
        check_layout(r.buffer, what)
    if d.buffer.scope not in ("trn.sbuf", "trn.psum"):
        fail("Invalid buffer layout and scope: D must be in trn.psum or trn.sbuf")
    check_layout(d.buffer, "D")
    if str(a.buffer.dtype) != str(b.buffer.dtype):
        fail(f"A ({a.buffer.dtype}) and B ({b.buffer.dtype}) must have the same dtype")
    if len(a.region) != 2 or len(b.region) != 2 or len(d.region) != 2:
        fail("gemm on Trainium takes 2-D A, B and D")
    m_dim, k_dim_a = (1, 0) if ta else (0, 1)
    k_dim_b, n_dim = (1, 0) if tb else (0, 1)
    sa, sb, sd = shape_of(a), shape_of(b), shape_of(d)
    M, K, N = sa[m_dim], sa[k_dim_a], sb[n_dim]
    if sb[k_dim_b] != K or sd != [M, N]:
        fail(f"shapes do not chain: A {sa}, B {sb}, D {sd} (transpose_A={ta}, "
             f"transpose_B={tb})")
    if k_dim_a not in pdims(a.buffer) and K > 1:
        fail("Invalid buffer layout and scope: the K dim of A must lie on partitions "
             "(lay A [M, K] out as 'FP')")
    if k_dim_b not in pdims(b.buffer) and K > 1:
        fail("Invalid buffer layout and scope: the K dim of B must lie on partitions")
    if 0 not in pdims(d.buffer) and M > 1:
        fail("Invalid buffer layout and scope: the M dim of D must lie on partitions")
    accumulate_c = c is not None and beta != 0.0
    if accumulate_c:
        same = isinstance(c, BufferRegion) and c.buffer is d.buffer or c is d.buffer
        if not same or beta != 1.0:
            fail("on Trainium C must be D itself with beta == 1 (or beta == 0)")
    in_psum = d.buffer.scope == "trn.psum"
    if in_psum and alpha != 1.0:
        fail("alpha != 1 needs D in SBUF (the scaling happens on eviction)")
    acc = None
    if not in_psum:
        acc = workspace(op, sctx, "acc_psum", (TM, TN), "float32", "trn.psum",
                        "Accumulation psum buffer")

    def sub(r: BufferRegion, starts: dict[int, Any], sizes: dict[int, int]) -> BufferRegion:
        ranges = [Range(_add(rg.min, starts[i]), sizes[i]) for i, rg in enumerate(r.region)]
        return BufferRegion(r.buffer, ranges)

    stmts = []
    for mc, ms, m0 in segments(M, TM):
        for nc, ns, n0 in segments(N, TN):
            def mn_body(mi: Any, ni: Any, ms: int = ms, ns: int = ns, m0: int = m0,
                        n0: int = n0) -> Any:
                m_start, n_start = _add(m0, _mul(mi, ms)), _add(n0, _mul(ni, ns))
                d_tile = sub(d, {0: m_start, 1: n_start}, {0: ms, 1: ns})
                # acc is None exactly when D is in PSUM and accumulates itself
                out = d_tile if acc is None else BufferRegion(
                    acc, [Range(0, ms), Range(0, ns)])
                k_loops = []
                first_seg = True
                for kc, ks, k0 in segments(K, TK):
                    def k_body(ki: Any, ks: int = ks, k0: int = k0, first: bool = first_seg,
                               kc: int = kc) -> Any:
                        k_start = _add(k0, _mul(ki, ks))
                        a_tile = sub(a, {m_dim: m_start, k_dim_a: k_start},
                                     {m_dim: ms, k_dim_a: ks})
                        b_tile = sub(b, {k_dim_b: k_start, n_dim: n_start},
                                     {k_dim_b: ks, n_dim: ns})
                        if accumulate_c and in_psum:
                            accum: Any = True
                        elif first:
                            accum = NE(ki, IntImm("int32", 0)) if kc > 1 else False
                        else:
                            accum = True
                        return emit(nki.nki_matmul(out, a_tile, b_tile, accum))
                    k_loops.append(loop("k", kc, k_body, kind="affine"))
                    first_seg = False
                if not in_psum:
                    k_loops.append(_evict(d_tile, out, alpha, accumulate_c))
                return seq(k_loops)
            stmts.append(loop("m", mc, lambda mi, f=mn_body, nc=nc: loop(
                "n", nc, lambda ni, mi=mi, f=f: f(mi, ni))))
    return func(stmts)


def _evict(d_tile: BufferRegion, acc: BufferRegion, alpha: float, add_d: bool) -> Any:
    if add_d:
        return emit(nki.nki_scalar_tensor_tensor(d_tile, acc, FloatImm("float32", alpha),
                                                 d_tile, "mul", "add"))
    if alpha == 1.0:
        return emit(nki.nki_tensor_copy(d_tile, acc))
    return emit(nki.nki_tensorscalar(d_tile, acc, FloatImm("float32", alpha), "mul", False))


def _add(a: Any, b: Any) -> Any:
    if _is(a, 0):
        return b
    if _is(b, 0):
        return a
    return a + b


def _mul(a: Any, k: int) -> Any:
    if _is(a, 0):
        return IntImm("int32", 0)
    return a if k == 1 else a * k


def _is(x: Any, v: int) -> bool:
    return (isinstance(x, int) and x == v) or (isinstance(x, IntImm) and x.value == v)


def register() -> None:
    register_dispatch("gemm", "trn", variant="default", priority=10, when=[TRN_ONLY])(gemm_trn)
