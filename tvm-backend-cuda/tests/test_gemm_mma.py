"""The CUDA ``gemm`` variant ``mma.m16n8k*`` (ldmatrix + mma.sync on the tensor cores).

- chosen for warp- and CTA-scope ``Tx.gemm`` on f16/bf16 shared operands (the generated source
  holds ``mma.sync.aligned.m16n8k16`` and the right ``ldmatrix`` forms), compiled by NVRTC for
  sm_80 and sm_90a;
- declines with its reason (and core's fallback runs) for what it does not generate;
- its output is run on the CPU by a small warp emulator that implements PTX's ``ldmatrix``
  (``.x2/.x4``, ``.trans``) and ``mma.m16n8k16`` fragment semantics, against numpy, for every
  transpose, both scopes, a shared and a local (register) D; the local D is read back through
  :func:`mma_accumulator_layout`, so the layout and the code agree;
- ``gpu``: the same kernels and the tiled GEMM example (``examples/matmul_mma.py``) against torch;
  under the CUDA emulator the tiled GEMM's largest shape is ``EMULATED_TILED_MATMUL``'s.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.codegen.signature import _BINARY, _divide
from tvm.ir import (
    AllocBuffer,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    DeclBuffer,
    Evaluate,
    FloatImm,
    For,
    IfThenElse,
    IntImm,
    LetStmt,
    ScopeIdDef,
    SeqStmt,
    Var,
)
from tvm.ir import expr as E
from tvm.target import Target
from tvm.tirx.operator.tile_primitive import DispatchContext
from tvm.tirx.operator.tile_primitive.dispatch_context import ThreadInfo
from tvm.tirx.operator.tile_primitive.dispatcher import (
    dispatch,
    get_variants,
    lower_tile_primitives,
)
from tvm.tirx.operator.tile_primitive.ops import make_call
from tvm_backend_cuda.dispatch.gemm_mma import VARIANT, mma_accumulator_layout, warp_split
from tvm_backend_cuda.plugin import register_backend

register_backend()

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from matmul_mma import matmul_mma_kernel  # noqa: E402

SM80 = {"kind": "cuda", "arch": "sm_80"}
MMA_F16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
MMA_BF16 = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"


def _mma_issues(src: str, mnemonic: str) -> int:
    """How many times the kernel issues ``mnemonic``: the instruction sits once in its
    ``__device__`` helper (``ptx_mma_m16n8k16_row_col_...``), called once per issue."""
    assert src.count(mnemonic) == 1
    name = "ptx_mma_" + mnemonic.removeprefix("mma.sync.aligned.").replace(".", "_") + "("
    return src.count(name) - 1


# -- kernels ---------------------------------------------------------------------------------------


@no_type_check
def shared_gemm(M: int, N: int, K: int, dtype: str = "float16", ta: bool = False,
                tb: bool = False, scope: str = "warp", warps: int = 1, beta: float = 0.0,
                d_dtype: str = "float32", alpha: float = 1.0, a_scope: str = "shared") -> Any:
    """D = op(A) @ op(B) (+ C): operands staged in shared memory, one ``Tx.<scope>.gemm``."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    a_shape = (K, M) if ta else (M, K)
    b_shape = (N, K) if tb else (K, N)
    threads = 32 * warps
    ns = getattr(Tx, scope)

    @T.prim_func
    def gemm_smem(A: T.Buffer(a_shape, dtype), B: T.Buffer(b_shape, dtype),
                  C: T.Buffer((M, N), "float32"), D: T.Buffer((M, N), d_dtype)):
        T.device_entry()
        tx = T.thread_id([threads])
        As = T.alloc_buffer(a_shape, dtype, scope=a_scope)
        Bs = T.alloc_buffer(b_shape, dtype, scope="shared")
        Cs = T.alloc_buffer((M, N), "float32", scope="shared")
        Ds = T.alloc_buffer((M, N), d_dtype, scope="shared")
        Tx.cta.copy(As, A)
        Tx.cta.copy(Bs, B)
        Tx.cta.copy(Cs, C)
        ns.gemm(Ds, As, Bs, Cs, transpose_A=ta, transpose_B=tb, alpha=alpha, beta=beta)
        Tx.cta.copy(D, Ds)

    return gemm_smem


@no_type_check
def register_gemm(M: int, N: int, K: int, bk: int, warps_m: int = 1, warps_n: int = 1,
                  tb: bool = False, dtype: str = "float16") -> Any:
    """D (registers) += A[:, k:k+bk] @ B[k:k+bk, :] over K in bk steps; one warp uses
    ``Tx.warp.gemm``, several ``Tx.cta.gemm``; the epilogue stores the fragments."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    warps = warps_m * warps_n
    layout = mma_accumulator_layout(M, N, warps_m, warps_n)
    tm, tn = M // warps_m, N // warps_n
    mt, nt = tm // 16, tn // 8
    regs = mt * nt * 4
    b_shape = (N, K) if tb else (K, N)
    bs_shape = (N, bk) if tb else (bk, N)
    ns = Tx.warp if warps == 1 else Tx.cta

    @T.prim_func
    def gemm_regs(A: T.Buffer((M, K), dtype), B: T.Buffer(b_shape, dtype),
                  C: T.Buffer((M, N), "float32")):
        T.device_entry()
        tx = T.thread_id([32 * warps])
        As = T.alloc_buffer((M, bk), dtype, scope="shared")
        Bs = T.alloc_buffer(bs_shape, dtype, scope="shared")
        D = T.alloc_buffer((M, N), "float32", scope="local", layout=layout)
        Dr = T.decl_buffer((regs,), "float32", data=D.data, scope="local")
        ns.gemm(D, As, Bs)  # zeroes D: as good as any init, and tests beta = 0 with a local D
        for i in T.unroll(regs):
            Dr[i] = T.float32(0)
        for kk in T.serial(K // bk):
            Tx.cta.copy(As, A[0:M, kk * bk:kk * bk + bk])
            if tb:
                Tx.cta.copy(Bs, B[0:N, kk * bk:kk * bk + bk])
            else:
                Tx.cta.copy(Bs, B[kk * bk:kk * bk + bk, 0:N])
            ns.gemm(D, As, Bs, D, transpose_B=tb, beta=1.0)
            T.cuda.cta_sync()
        for i in T.unroll(mt):
            for j in T.unroll(nt):
                for e in T.unroll(4):
                    C[tx // 32 // warps_n * tm + i * 16 + e // 2 * 8 + tx % 32 // 4,
                      tx // 32 % warps_n * tn + j * 8 + tx % 4 * 2 + e % 2] = \
                        Dr[(i * nt + j) * 4 + e]

    return gemm_regs


def _trace(func: Any, target: Any = SM80) -> list[tuple[str, str, str]]:
    trace: list[tuple[str, str, str]] = []
    lower_tile_primitives(func, target, trace=trace)
    return [t for t in trace if t[0] == "tirx.tile.gemm"]


# -- a warp emulator for the variant's output --------------------------------------------------------


class _Emu:
    """Runs a lowered gemm body for every thread of a CTA in lock step (its control flow is
    uniform), with PTX's ldmatrix and mma.m16n8k16 semantics. Registers of 16-bit pairs hold
    ``(lo, hi)`` tuples of values rather than bits."""

    def __init__(self, threads: int, tid: Var, shared: dict[int, np.ndarray]) -> None:
        self.n = threads
        self.env: list[dict[int, Any]] = [{id(tid): t} for t in range(threads)]
        self.shared = shared  # id(buffer) -> flat float64 array
        self.local: dict[int, list[list[Any]]] = {}

    # -- expressions
    def ev(self, e: Any, t: int) -> Any:
        if isinstance(e, (IntImm, FloatImm)):
            return e.value
        if isinstance(e, Var):
            return self.env[t][id(e)]
        if isinstance(e, Cast):
            v = self.ev(e.value, t)
            return float(v) if e.dtype.is_float else int(v)
        if isinstance(e, BufferLoad):
            return self._load(e, t)
        if isinstance(e, E.BinaryOp):
            a, b = self.ev(e.a, t), self.ev(e.b, t)
            fn = _BINARY.get(type(e))
            return fn(a, b) if fn is not None else _divide(e, a, b)
        raise NotImplementedError(type(e).__name__)

    def _flat(self, buf: Buffer, idx: list[int]) -> int:
        if len(idx) == 1:
            return idx[0]
        flat = 0
        for i, s in zip(idx, buf.shape):
            flat = flat * int(s) + i
        return flat

    def _load(self, e: BufferLoad, t: int) -> Any:
        idx = [self.ev(i, t) for i in e.indices]
        if id(e.buffer.data) in self.local:
            return self.local[id(e.buffer.data)][t][self._flat(e.buffer, idx)]
        return self.shared[id(e.buffer.data)][self._flat(e.buffer, idx)]

    def _store(self, buf: Buffer, idx: list[int], t: int, value: Any) -> None:
        if id(buf.data) in self.local:
            self.local[id(buf.data)][t][self._flat(buf, idx)] = value
        else:
            self.shared[id(buf.data)][self._flat(buf, idx)] = value

    # -- statements
    def run(self, s: Any) -> None:
        if isinstance(s, SeqStmt):
            for x in s.seq:
                self.run(x)
        elif isinstance(s, LetStmt):
            for t in range(self.n):
                self.env[t][id(s.var)] = self.ev(s.value, t)
            self.run(s.body)
        elif isinstance(s, For):
            lo, ext = self.ev(s.min, 0), self.ev(s.extent, 0)
            for i in range(lo, lo + ext):
                for t in range(self.n):
                    self.env[t][id(s.loop_var)] = i
                self.run(s.body)
        elif isinstance(s, AllocBuffer):
            buf = s.buffer
            size = (int(buf.layout.span("m").value) if buf.layout is not None
                    else int(np.prod([int(x) for x in buf.shape])))
            if buf.scope == "local":
                self.local.setdefault(id(buf.data), [[0.0] * size for _ in range(self.n)])
            else:
                self.shared.setdefault(id(buf.data), np.full(size, np.nan))
        elif isinstance(s, DeclBuffer):
            pass  # a view of memory allocated before (same data variable)
        elif isinstance(s, ScopeIdDef):
            for v, ext in zip(s.vars, s.extents):
                assert s.kind in ("cta_id", "thread_id") and len(s.vars) <= 2, s.kind
                for t in range(self.n):  # one CTA: (0, 0); threads along x
                    self.env[t][id(v)] = t if s.kind == "thread_id" else 0
                if s.kind == "thread_id":
                    assert int(ext.value) == self.n
        elif isinstance(s, BufferStore):
            vals = [(self.ev(s.value, t), [self.ev(i, t) for i in s.indices]) for t in range(self.n)]
            for t, (v, idx) in enumerate(vals):
                self._store(s.buffer, idx, t, v)
        elif isinstance(s, Evaluate) and isinstance(s.value, Call):
            name = s.value.op.name
            if name == "tirx.ptx.ldmatrix":
                self._ldmatrix(s.value)
            elif name == "tirx.ptx.mma":
                self._mma(s.value)
            elif name.startswith("tirx.cuda.") and name.endswith("_sync") or \
                    name == "tirx.device_entry":
                pass  # lock step: barriers are no-ops
            else:
                raise NotImplementedError(name)
        elif isinstance(s, IfThenElse):
            raise NotImplementedError("divergent control flow")
        else:
            raise NotImplementedError(type(s).__name__)

    def _ldmatrix(self, call: Call) -> None:
        trans, num = bool(call.args[0].value), call.args[1].value
        addr, dst = call.args[3], call.args[4:]
        for w in range(self.n // 32):
            lanes = range(32 * w, 32 * w + 32)
            rows = []  # per matrix, 8 rows of 8 values
            for i in range(num):
                mat = []
                for r in range(8):
                    t = lanes[8 * i + r]
                    flat = self._flat(addr.buffer, [self.ev(x, t) for x in addr.indices])
                    assert flat % 8 == 0, "ldmatrix row address not 16-byte aligned"
                    mat.append(self.shared[id(addr.buffer.data)][flat:flat + 8])
                rows.append(np.array(mat))
            for lane, t in enumerate(lanes):
                g, c = lane // 4, lane % 4
                for i in range(num):
                    m = rows[i].T if trans else rows[i]
                    reg = dst[i]
                    self._store(reg.buffer, [self.ev(x, t) for x in reg.indices], t,
                                (m[g, 2 * c], m[g, 2 * c + 1]))

    def _mma(self, call: Call) -> None:
        args = call.args
        assert args[0].value == "m16n8k16"
        ops = args[12:12 + 14]
        d, a, b, c = ops[0:4], ops[4:8], ops[8:10], ops[10:14]
        for w in range(self.n // 32):
            A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
            for lane in range(32):
                t = 32 * w + lane
                g, q = lane // 4, lane % 4
                av = [self.ev(x, t) for x in a]
                bv = [self.ev(x, t) for x in b]
                cv = [self.ev(x, t) for x in c]
                for reg, (r, k) in enumerate(((g, 2 * q), (g + 8, 2 * q), (g, 2 * q + 8),
                                              (g + 8, 2 * q + 8))):
                    A[r, k], A[r, k + 1] = av[reg]
                B[2 * q, g], B[2 * q + 1, g] = bv[0]
                B[2 * q + 8, g], B[2 * q + 9, g] = bv[1]
                C[g, 2 * q], C[g, 2 * q + 1], C[g + 8, 2 * q], C[g + 8, 2 * q + 1] = cv
            D = A @ B + C
            for lane in range(32):
                t = 32 * w + lane
                g, q = lane // 4, lane % 4
                for reg, val in zip(d, (D[g, 2 * q], D[g, 2 * q + 1], D[g + 8, 2 * q],
                                        D[g + 8, 2 * q + 1])):
                    self._store(reg.buffer, [self.ev(x, t) for x in reg.indices], t, val)


def _emulate(M: int, N: int, K: int, *, ta: bool = False, tb: bool = False, scope: str = "warp",
             warps: int = 1, beta: float = 0.0, local_d: bool = False,
             warps_mn: tuple[int, int] | None = None, a_off: tuple[int, int] = (0, 0),
             dtype: str = "float16") -> tuple[str, np.ndarray, np.ndarray]:
    """Dispatch one gemm call on hand-made buffers, run the variant's body, return (variant,
    D computed, D expected). A is a region at ``a_off`` of a larger shared buffer."""
    rng = np.random.default_rng(M * 131 + N * 17 + K)
    a_shape = (K, M) if ta else (M, K)
    b_shape = (N, K) if tb else (K, N)
    big = (a_shape[0] + a_off[0], a_shape[1] + a_off[1])
    As = Buffer("As", list(big), dtype, scope="shared")
    Bs = Buffer("Bs", list(b_shape), dtype, scope="shared")
    Cs = Buffer("Cs", [M, N], "float32", scope="shared")
    a_np = np.round(rng.standard_normal(big) * 4) / 4  # exact in f16 and bf16
    b_np = np.round(rng.standard_normal(b_shape) * 4) / 4
    c_np = np.round(rng.standard_normal((M, N)) * 4) / 4
    a_reg = As[a_off[0]:a_off[0] + a_shape[0], a_off[1]:a_off[1] + a_shape[1]]
    if local_d:
        wm, wn = warps_mn or (1, 1)
        Ds = Buffer("D", [M, N], "float32", scope="local",
                    layout=mma_accumulator_layout(M, N, wm, wn))
        c_arg, beta_arg = (Ds, 1.0) if beta else (None, 0.0)
    else:
        Ds = Buffer("Ds", [M, N], "float32", scope="shared")
        c_arg, beta_arg = Cs, beta
    call = make_call("gemm", Ds, a_reg, Bs, c_arg, transpose_A=ta, transpose_B=tb,
                     beta=beta_arg, scope=scope)
    tid = Var("tx", "int32")
    threads = ThreadInfo.from_defs([ScopeIdDef("thread_id", [tid], [32 * warps])], True)
    sctx = DispatchContext(Target(SM80), scope, op_call=call, threads=threads)
    out = dispatch(call, sctx)
    emu = _Emu(32 * warps, tid, {id(As.data): a_np.reshape(-1).copy(),
                                 id(Bs.data): b_np.reshape(-1).copy(),
                                 id(Cs.data): c_np.reshape(-1).copy()})
    d0 = np.zeros((M, N))
    if local_d:
        layout = Ds.layout
        regs = int(layout.span("m").value)
        emu.local[id(Ds.data)] = [[0.0] * regs for _ in range(32 * warps)]
        if beta:  # start from C, placed in the registers through the layout
            d0 = c_np
            for (r, c), v in np.ndenumerate(c_np):
                t, reg = _owner(layout, r, c, M, N)
                emu.local[id(Ds.data)][t][reg] = v
    else:
        emu.shared[id(Ds.data)] = np.full(M * N, np.nan)
    emu.run(out.func.body)
    if local_d:
        got = np.zeros((M, N))
        for (r, c), _ in np.ndenumerate(got):
            t, reg = _owner(Ds.layout, r, c, M, N)
            got[r, c] = emu.local[id(Ds.data)][t][reg]
    else:
        got = emu.shared[id(Ds.data)].reshape(M, N)
        d0 = c_np if beta else d0
    a_sub = a_np[a_off[0]:, a_off[1]:]
    op_a = a_sub.T if ta else a_sub
    op_b = b_np.T if tb else b_np
    return out.variant, got, op_a @ op_b + d0


def _owner(layout: Any, r: int, c: int, M: int, N: int) -> tuple[int, int]:
    co = layout.apply([r, c], [M, N])
    val = {k: int(v.value) for k, v in co.items()}
    return val.get("warpid", 0) * 32 + val["laneid"], val["m"]


# -- which variant, and the generated source --------------------------------------------------------


def test_registered_above_the_fallback() -> None:
    names = [c.variant for c in get_variants("gemm", "cuda")]
    assert names[0] == VARIANT and names[-1] == "fallback"
    case = get_variants("gemm", "cuda")[0]
    assert case.priority == 10
    assert [p.name for p in case.when] == ["full_active_lanes", "sm_80", "intrinsics"]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("ta, tb, x4, x4_b", [
    (False, False, "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
     "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
    (False, True, "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
     "ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
    (True, False, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
     "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
])
def test_warp_gemm_compiles_with_mma(arch: str, ta: bool, tb: bool, x4: str, x4_b: str) -> None:
    func = shared_gemm(32, 16, 32, ta=ta, tb=tb)
    target = {"kind": "cuda", "arch": arch}
    assert _trace(func, target) == [("tirx.tile.gemm", "warp", VARIANT)]
    ex = tvm.compile(func, target=target)
    assert ex.arch == arch and ex.cubin[:4] == b"\x7fELF"
    src = ex.inspect_source()
    # 2 m-tiles x 2 n-tiles per k step, 2 k steps in a loop
    assert _mma_issues(src, MMA_F16) == 4
    assert x4 in src and x4_b in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_cta_gemm_bf16_odd_n_tiles_uses_x2(arch: str) -> None:
    func = shared_gemm(64, 24, 16, dtype="bfloat16", tb=True, scope="cta", warps=4, beta=1.0)
    target = {"kind": "cuda", "arch": arch}
    assert _trace(func, target) == [("tirx.tile.gemm", "cta", VARIANT)]
    src = tvm.compile(func, target=target).inspect_source()
    assert _mma_issues(src, MMA_BF16) == 3  # 4 warps x (1 m-tile x 3 n-tiles): 16x24 each
    assert "ldmatrix.sync.aligned.m8n8.x2.shared.b16" in src
    assert "const int mma_warp = (tx / 32);" in src
    assert src.count("__syncthreads()") >= 4  # after each copy, and after the gemm (shared D)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("warps_m, warps_n, tb", [(1, 1, False), (2, 2, False), (2, 1, True)])
def test_register_accumulator_gemm_compiles(arch: str, warps_m: int, warps_n: int,
                                            tb: bool) -> None:
    func = register_gemm(64, 32, 64, 32, warps_m, warps_n, tb=tb)
    target = {"kind": "cuda", "arch": arch}
    scope = "warp" if warps_m * warps_n == 1 else "cta"
    assert _trace(func, target) == [("tirx.tile.gemm", scope, VARIANT)] * 2
    src = tvm.compile(func, target=target).inspect_source()
    assert MMA_F16 in src
    assert "mma_acc" not in src  # accumulates in D's own registers
    assert "ptx_mma_m16n8k16_row_col_f32_f16_f16_f32((*(float*)(&(D[0]))), " in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_example_tiled_matmul_compiles(arch: str) -> None:
    func = matmul_mma_kernel(256, 256, 128)
    target = {"kind": "cuda", "arch": arch}
    assert _trace(func, target) == [("tirx.tile.gemm", "cta", VARIANT)]
    ex = tvm.compile(func, target=target)
    src = ex.inspect_source()
    # a 64x64 warp tile: 4 x 8 mma per 16-wide k step, 2 k steps per 32-wide K tile
    assert _mma_issues(src, MMA_F16) == 32
    assert src.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4
    assert src.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 4
    assert "float D[128]" in src


# -- the layout and the warp split -------------------------------------------------------------------


@pytest.mark.parametrize("m, n, wm, wn", [(16, 8, 1, 1), (64, 32, 1, 1), (128, 128, 2, 2),
                                          (64, 48, 4, 1)])
def test_accumulator_layout_is_the_mma_fragment(m: int, n: int, wm: int, wn: int) -> None:
    layout = mma_accumulator_layout(m, n, wm, wn)
    tm, tn = m // wm, n // wn
    nt = tn // 8
    assert int(layout.span("m").value) == m * n // (32 * wm * wn)
    seen = set()
    for r in range(m):
        for c in range(n):
            t, reg = _owner(layout, r, c, m, n)
            w, lane = divmod(t, 32)
            assert w == (r // tm) * wn + c // tn
            rr, cc = r % tm, c % tn
            assert lane == (rr % 8) * 4 + (cc % 8) // 2
            assert reg == ((rr // 16) * nt + cc // 8) * 4 + (rr % 16) // 8 * 2 + cc % 2
            seen.add((t, reg))
    assert len(seen) == m * n  # one element per (thread, register)


def test_accumulator_layout_rejects_partial_tiles() -> None:
    with pytest.raises(ValueError, match="does not split into 2x2 warp tiles"):
        mma_accumulator_layout(48, 16, 2, 2)


def test_warp_split_prefers_square_tiles() -> None:
    assert warp_split(128, 128, 4) == (2, 2)
    assert warp_split(64, 24, 4) == (4, 1)
    assert warp_split(16, 64, 4) == (1, 4)
    assert warp_split(16, 8, 4) is None


# -- numerics on the CPU (emulated ldmatrix / mma) ---------------------------------------------------


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("M, N, K", [(16, 8, 16), (32, 24, 32), (16, 16, 48)])
def test_emulated_warp_gemm(ta: bool, tb: bool, M: int, N: int, K: int) -> None:
    variant, got, want = _emulate(M, N, K, ta=ta, tb=tb)
    assert variant == VARIANT
    np.testing.assert_array_equal(got, want)


def test_emulated_warp_gemm_with_c_and_region_offset() -> None:
    variant, got, want = _emulate(32, 16, 32, beta=1.0, a_off=(16, 8), dtype="bfloat16")
    assert variant == VARIANT
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("M, N, warps", [(64, 32, 4), (32, 48, 2), (64, 64, 4)])
def test_emulated_cta_gemm(tb: bool, M: int, N: int, warps: int) -> None:
    variant, got, want = _emulate(M, N, 32, tb=tb, scope="cta", warps=warps, beta=1.0)
    assert variant == VARIANT
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("scope, warps, split", [("warp", 1, (1, 1)), ("cta", 4, (2, 2)),
                                                 ("cta", 2, (1, 2))])
@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_emulated_register_accumulator(scope: str, warps: int, split: tuple[int, int],
                                       beta: float) -> None:
    variant, got, want = _emulate(64, 32, 32, tb=True, scope=scope, warps=warps, beta=beta,
                                  local_d=True, warps_mn=split)
    assert variant == VARIANT
    np.testing.assert_array_equal(got, want)


def test_emulated_example_kernel() -> None:
    """The whole tiled GEMM example (one CTA: copies, the K loop of Tx.cta.gemm into registers,
    the epilogue) after dispatch, run by the emulator."""
    m, n, k = 128, 128, 64
    func = lower_tile_primitives(matmul_mma_kernel(m, n, k), SM80)
    rng = np.random.default_rng(11)
    a = np.round(rng.standard_normal((m, k)) * 4) / 4
    b = np.round(rng.standard_normal((k, n)) * 4) / 4
    bufs = [func.buffer_map[p] for p in func.params]
    emu = _Emu(128, Var("unused", "int32"), {id(bufs[0].data): a.reshape(-1).copy(),
                                             id(bufs[1].data): b.reshape(-1).copy(),
                                             id(bufs[2].data): np.full(m * n, np.nan)})
    emu.run(func.body)
    np.testing.assert_array_equal(emu.shared[id(bufs[2].data)].reshape(m, n), a @ b)


# -- declining ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, target, reason", [
    (dict(M=32, N=16, K=32, dtype="float32"), SM80,
     "A is float32; mma.m16n8k16 takes float16 or bfloat16"),
    (dict(M=32, N=16, K=32, a_scope="global"), SM80,
     "A is in 'global' memory; ldmatrix reads shared or shared.dyn"),
    (dict(M=32, N=16, K=24), SM80, "K = 24 is not a multiple of 16"),
    (dict(M=24, N=16, K=32), SM80, "D 24x16 does not split into whole 16x8 mma tiles over 1 warp"),
    (dict(M=32, N=16, K=32, alpha=2.0), SM80, "only alpha = 1 is generated"),
    (dict(M=32, N=16, K=32, beta=0.5), SM80, "only beta = 0 or 1"),
    (dict(M=32, N=16, K=32, d_dtype="int32"), SM80, "D is int32; expected float32 or float16"),
    (dict(M=32, N=16, K=32), {"kind": "cuda", "arch": "sm_75"},
     "predicate 'sm_80': mma.sync.m16n8k16 with f32 accumulators needs sm_80 or newer; "
     "target is sm_75"),
    (dict(M=32, N=16, K=32, scope="thread"), SM80,
     "predicate 'full_active_lanes': scope thread (needs warp or cta)"),
])
def test_declines_with_reason_and_falls_back(kwargs: dict[str, Any], target: Any,
                                             reason: str) -> None:
    func = shared_gemm(**kwargs)
    scope = kwargs.get("scope", "warp")
    assert _trace(func, target) == [("tirx.tile.gemm", scope, "fallback")]
    forced = func.with_body(_force(func.body))
    with pytest.raises(RuntimeError, match="TIRx schedule dispatch failed") as err:
        lower_tile_primitives(forced, target)
    assert reason in str(err.value)


def test_cta_of_partial_warps_declines() -> None:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def f(D: T.Buffer((16, 8), "float32")):
        T.device_entry()
        tx = T.thread_id([48])
        As = T.alloc_buffer((16, 16), "float16", scope="shared")
        Bs = T.alloc_buffer((16, 8), "float16", scope="shared")
        Tx.cta.gemm(D, As, Bs, dispatch=VARIANT)

    with pytest.raises(RuntimeError, match="the scope has 48 threads, not a constant multiple "
                                           r"of 32 \(whole warps\)"):
        lower_tile_primitives(f, SM80)


def test_local_d_needs_the_accumulator_layout() -> None:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def f(A: T.Buffer((16, 16), "float16")):
        T.device_entry()
        tx = T.thread_id([32])
        As = T.alloc_buffer((16, 16), "float16", scope="shared")
        Bs = T.alloc_buffer((16, 8), "float16", scope="shared")
        D = T.alloc_buffer((16, 8), "float32", scope="local")
        Tx.warp.gemm(D, As, Bs, dispatch=VARIANT)

    with pytest.raises(RuntimeError, match=r"a local D needs the layout "
                                           r"mma_accumulator_layout\(16, 8, warps_m, warps_n\)"):
        lower_tile_primitives(f, SM80)


def test_local_d_with_another_c_declines() -> None:
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    layout = mma_accumulator_layout(16, 8)

    @T.prim_func
    def f(A: T.Buffer((16, 16), "float16")):
        T.device_entry()
        tx = T.thread_id([32])
        As = T.alloc_buffer((16, 16), "float16", scope="shared")
        Bs = T.alloc_buffer((16, 8), "float16", scope="shared")
        Cs = T.alloc_buffer((16, 8), "float32", scope="shared")
        D = T.alloc_buffer((16, 8), "float32", scope="local", layout=layout)
        Tx.warp.gemm(D, As, Bs, Cs, beta=1.0, dispatch=VARIANT)

    with pytest.raises(RuntimeError, match="with a local D, C must be D itself"):
        lower_tile_primitives(f, SM80)


def _force(body: Any) -> Any:
    """The body with the gemm call forced to the mma variant (dispatch=...)."""
    from tvm.ir import Mutator, TilePrimitiveCall

    class Force(Mutator):
        def visit_TilePrimitiveCall(self, node: TilePrimitiveCall) -> Any:
            if node.op.name == "tirx.tile.gemm":
                return node.replace(dispatch=VARIANT)
            return node

    return Force().visit(body)


# -- GPU: against torch -------------------------------------------------------------------------------


def _torch(a: np.ndarray, dtype: str = "float16", device: str = "cuda") -> Any:
    import torch

    t = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(device)
    return t.to(getattr(torch, dtype))


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.gpu
@pytest.mark.parametrize("M, N, K, ta, tb, scope, warps, beta, dtype", [
    (16, 8, 16, False, False, "warp", 1, 0.0, "float16"),
    (32, 24, 32, False, True, "warp", 1, 1.0, "float16"),
    (32, 16, 48, True, False, "warp", 1, 0.0, "bfloat16"),
    (64, 64, 32, False, False, "cta", 4, 1.0, "float16"),
    (64, 24, 16, True, True, "cta", 4, 0.0, "bfloat16"),
])
def test_shared_gemm_on_gpu(M: int, N: int, K: int, ta: bool, tb: bool, scope: str, warps: int,
                            beta: float, dtype: str, device: str) -> None:
    torch = pytest.importorskip("torch")

    func = shared_gemm(M, N, K, dtype=dtype, ta=ta, tb=tb, scope=scope, warps=warps, beta=beta)
    assert _trace(func, "cuda") == [("tirx.tile.gemm", scope, VARIANT)]
    ex = tvm.compile(func, target="cuda")
    a = _torch(_rand(*((K, M) if ta else (M, K)), seed=1), dtype, device)
    b = _torch(_rand(*((N, K) if tb else (K, N)), seed=2), dtype, device)
    c = _torch(_rand(M, N, seed=3), "float32", device)
    d = torch.zeros((M, N), device=device)
    ex(a, b, c, d)
    _sync(device)
    want = (a.T if ta else a).float() @ (b.T if tb else b).float() + (c if beta else 0)
    torch.testing.assert_close(d, want, rtol=1e-3, atol=1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("warps_m, warps_n, tb", [(1, 1, False), (2, 2, False), (2, 1, True)])
def test_register_accumulator_on_gpu(warps_m: int, warps_n: int, tb: bool, device: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")

    M, N, K = 64, 32, 128
    ex = tvm.compile(register_gemm(M, N, K, 32, warps_m, warps_n, tb=tb), target="cuda")
    a = _torch(_rand(M, K, seed=4), device=device)
    b = _torch(_rand(*((N, K) if tb else (K, N)), seed=5), device=device)
    c = torch.zeros((M, N), device=device)
    if device == "cpu" and warps_m * warps_n > 1:
        # The kernel's first gemm (zeroing D) reads As with ldmatrix while another warp may
        # already copy the first tile into As: no barrier orders them. The result is right (the
        # values read are discarded) but it is a race, and the emulator says so.
        from tvm.error import RaceError

        with pytest.raises(RaceError, match="race on shared buffer 'As'.*threads of other "
                                            "warps read it"):
            ex(a, b, c)
        monkeypatch.setenv("TVM_CUDA_EMULATE_RACECHECK", "0")
        ex = tvm.compile(register_gemm(M, N, K, 32, warps_m, warps_n, tb=tb), target="cuda")
        ex(a, b, c)
    else:
        ex(a, b, c)
    _sync(device)
    want = a.float() @ (b.T if tb else b).float()
    torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-3)


#: the smaller shape the emulator runs in place of a GPU one: 1024**3's grid of 8 x 8 CTAs, each
#: over 2 K tiles instead of 32 (256-384-512 has a long K loop); 1024**3 itself takes 25 s emulated
EMULATED_TILED_MATMUL = {(1024, 1024, 1024): (1024, 1024, 64)}


@pytest.mark.gpu
@pytest.mark.parametrize("m, n, k", [(128, 128, 32), (256, 384, 512), (1024, 1024, 1024)])
def test_example_tiled_matmul_on_gpu(m: int, n: int, k: int, device: str) -> None:
    torch = pytest.importorskip("torch")
    if device == "cpu":
        m, n, k = EMULATED_TILED_MATMUL.get((m, n, k), (m, n, k))

    ex = tvm.compile(matmul_mma_kernel(m, n, k), target="cuda")
    a = _torch(_rand(m, k, seed=6), device=device)
    b = _torch(_rand(k, n, seed=7), device=device)
    c = torch.zeros((m, n), device=device)
    ex(a, b, c)
    _sync(device)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-2)
