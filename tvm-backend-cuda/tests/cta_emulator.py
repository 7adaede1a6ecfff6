"""A CPU emulator of lowered CUDA kernels, for numeric tests of the dispatch variants without a
GPU.

The kernel is lowered by the ``tirx`` pipeline with vectorizing and unrolling off (so it has
only scalar accesses) and split from its host function; then each CTA of the grid is run with
all its threads in lock step. Control flow may diverge (``if`` runs its branches for the
threads whose condition holds, one branch after the other); loops must be uniform across the
threads that reach them. Barriers are no-ops (lock step), ``__shfl_*_sync`` read the partner
thread's value at that point. Memory: numpy arrays per global buffer, per CTA for shared
memory, per thread for registers; stores into 16-bit float buffers round as the GPU does
(ml_dtypes). Arithmetic is done in float64, so results match the GPU's float32 to ~1e-6.

Only what the register, shared-memory and copy variants emit is implemented; anything else
raises ``NotImplementedError`` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import tvm
from tvm.ir import (
    AllocBuffer,
    AttrStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    DeclBuffer,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimFunc,
    Select,
    SeqStmt,
    Var,
)
from tvm.ir import expr as E

__all__ = ["run_kernel"]


def _np_dtype(dt: Any) -> Any:
    import ml_dtypes

    s = str(dt)
    return {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}.get(s, np.dtype(s) if s not in (
        "bool",) else np.bool_)


def _round(value: Any, dt: Any) -> Any:
    d = str(dt)
    if d in ("bfloat16", "float16"):
        return float(np.array(value, dtype=np.float32).astype(_np_dtype(d)).astype(np.float64))
    if d == "float32":
        return float(np.float32(value))
    if dt.is_float:
        return float(value)
    if dt.is_bool:
        return bool(value)
    bits = dt.bits
    v = int(value)
    if dt.is_uint:
        return v % (1 << bits)
    v %= 1 << bits
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


_UNARY = {"tirx.exp": math.exp, "tirx.exp2": lambda x: 2.0 ** x, "tirx.log": math.log,
          "tirx.sqrt": math.sqrt, "tirx.rsqrt": lambda x: 1.0 / math.sqrt(x),
          "tirx.tanh": math.tanh, "tirx.fabs": abs, "tirx.abs": abs}
_BITS = {"tirx.bitwise_xor": lambda a, b: a ^ b, "tirx.bitwise_and": lambda a, b: a & b,
         "tirx.bitwise_or": lambda a, b: a | b, "tirx.shift_left": lambda a, b: a << b,
         "tirx.shift_right": lambda a, b: a >> b}


def _f32_bits(v: float) -> int:
    return int(np.array(v, dtype=np.float32).view(np.uint32))


def _bits_f32(bits: int) -> float:
    return float(np.array(bits & 0xFFFFFFFF, dtype=np.uint32).view(np.float32))


def _to_f2(word: int, dtype: str) -> int:
    """Two 16-bit floats in a 32-bit word -> a float2 packed in 64 bits (x low)."""
    halves = np.array([word & 0xFFFF, (word >> 16) & 0xFFFF], dtype=np.uint16).view(
        _np_dtype(dtype)).astype(np.float32)
    return _f32_bits(float(halves[0])) | _f32_bits(float(halves[1])) << 32


def _from_f2(a: float, b: float, dtype: str) -> int:
    """Two float32 values rounded to 16-bit floats, packed in a 32-bit word (a low)."""
    h = np.array([a, b], dtype=np.float32).astype(_np_dtype(dtype)).view(np.uint16)
    return int(h[0]) | int(h[1]) << 16


# float math of the ptx namespace, and the cuda namespace's packing of 16-bit float pairs
_PACKING = {
    "tirx.ptx.exp2": lambda x: 2.0 ** x if x < 1024 else math.inf,
    "tirx.ptx.rcp": lambda x: 1.0 / x if x else math.inf,
    "tirx.ptx.tanh": math.tanh,
    "tirx.cuda.bfloat1622float2": lambda w: _to_f2(int(w), "bfloat16"),
    "tirx.cuda.half22float2": lambda w: _to_f2(int(w), "float16"),
    "tirx.cuda.float2_x": lambda p: _bits_f32(int(p)),
    "tirx.cuda.float2_y": lambda p: _bits_f32(int(p) >> 32),
    "tirx.cuda.float22bfloat162_rn": lambda a, b: _from_f2(a, b, "bfloat16"),
    "tirx.cuda.float22half2_rn": lambda a, b: _from_f2(a, b, "float16"),
}


class _Block:
    """One CTA in lock step."""

    def __init__(self, n: int, globals_: dict[int, np.ndarray]) -> None:
        self.n = n
        self.env: list[dict[int, Any]] = [{} for _ in range(n)]
        self.glob = globals_
        self.shared: dict[int, np.ndarray] = {}
        self.local: dict[int, list[np.ndarray]] = {}

    # -- memory ---------------------------------------------------------------------------------
    def _mem(self, buf: Buffer, t: int) -> np.ndarray:
        """The memory behind ``buf`` as an array of its element type (shared and register
        memory are bytes, viewed per buffer: pools hold several types)."""
        key = id(buf.data)
        if key in self.local:
            raw = self.local[key][t]
        elif key in self.shared:
            raw = self.shared[key]
        elif key in self.glob:
            arr = self.glob[key]
            want = _np_dtype(buf.dtype)
            return arr if arr.dtype == want else arr.view(want)  # a view of another type
        else:
            raise NotImplementedError(f"buffer {buf.name} ({buf.scope}) has no memory")
        return raw.view(_np_dtype(buf.dtype))

    def _offset(self, buf: Buffer, idx: list[int], t: int) -> int:
        if len(idx) != 1:
            raise NotImplementedError(f"{buf.name}: {len(idx)}-d access after flattening")
        return int(idx[0]) + int(self.ev(buf.elem_offset, t))

    # -- expressions ----------------------------------------------------------------------------
    def ev(self, e: Any, t: int) -> Any:
        if isinstance(e, IntImm):
            return bool(e.value) if e.dtype.is_bool else e.value
        if isinstance(e, FloatImm):
            return e.value
        if isinstance(e, Var):
            return self.env[t][id(e)]
        if isinstance(e, Cast):
            return _round(self.ev(e.value, t), e.dtype)
        if isinstance(e, BufferLoad):
            mem = self._mem(e.buffer, t)
            off = self._offset(e.buffer, [self.ev(i, t) for i in e.indices], t)
            v = mem[off]
            return float(v) if e.dtype.is_float else (bool(v) if e.dtype.is_bool else int(v))
        if isinstance(e, Select):
            return self.ev(e.true_value, t) if self.ev(e.condition, t) else \
                self.ev(e.false_value, t)
        if isinstance(e, E.Not):
            return not self.ev(e.a, t)
        if isinstance(e, E.BinaryOp):
            return self._binary(e, t)
        if isinstance(e, Call):
            return self._call(e, t)
        raise NotImplementedError(f"expression {type(e).__name__}")

    def _binary(self, e: Any, t: int) -> Any:
        a = self.ev(e.a, t)
        if isinstance(e, E.And):
            return bool(a) and bool(self.ev(e.b, t))
        if isinstance(e, E.Or):
            return bool(a) or bool(self.ev(e.b, t))
        b = self.ev(e.b, t)
        ops = {E.Add: lambda: a + b, E.Sub: lambda: a - b, E.Mul: lambda: a * b,
               E.Min: lambda: min(a, b), E.Max: lambda: max(a, b), E.EQ: lambda: a == b,
               E.NE: lambda: a != b, E.LT: lambda: a < b, E.LE: lambda: a <= b,
               E.GT: lambda: a > b, E.GE: lambda: a >= b,
               E.FloorDiv: lambda: a // b, E.FloorMod: lambda: a % b}
        fn = ops.get(type(e))
        if fn is not None:
            out = fn()
        elif isinstance(e, E.Div):
            out = a / b if e.dtype.is_float else int(a / b)
        elif isinstance(e, E.Mod):
            out = math.fmod(a, b) if e.dtype.is_float else a - int(a / b) * b
        else:
            raise NotImplementedError(type(e).__name__)
        return _round(out, e.dtype) if not e.dtype.is_bool and e.dtype.is_float else out

    def _call(self, c: Call, t: int) -> Any:
        name = c.op.name
        if name in _UNARY:
            return _UNARY[name](self.ev(c.args[0], t))
        if name in _BITS:
            return _BITS[name](int(self.ev(c.args[0], t)), int(self.ev(c.args[1], t)))
        if name == "tirx.cuda.__shfl_xor_sync":
            partner = (t % 32 ^ int(self.ev(c.args[2], t))) + t // 32 * 32
            return self.ev(c.args[1], partner)
        if name in ("tirx.max", "tirx.min"):
            a, b = self.ev(c.args[0], t), self.ev(c.args[1], t)
            return max(a, b) if name == "tirx.max" else min(a, b)
        if name in _PACKING:
            return _PACKING[name](*[self.ev(a, t) for a in c.args])
        raise NotImplementedError(f"call {name}")

    # -- statements -----------------------------------------------------------------------------
    def run(self, s: Any, active: list[int]) -> None:
        if not active:
            return
        if isinstance(s, SeqStmt):
            for x in s.seq:
                self.run(x, active)
        elif isinstance(s, LetStmt):
            for t in active:
                self.env[t][id(s.var)] = self.ev(s.value, t)
            self.run(s.body, active)
        elif isinstance(s, AttrStmt):
            self.run(s.body, active)
        elif isinstance(s, For):
            self._for(s, active)
        elif isinstance(s, IfThenElse):
            cond = {t: bool(self.ev(s.condition, t)) for t in active}
            self.run(s.then_case, [t for t in active if cond[t]])
            if s.else_case is not None:
                self.run(s.else_case, [t for t in active if not cond[t]])
        elif isinstance(s, AllocBuffer):
            self._alloc(s.buffer)
        elif isinstance(s, DeclBuffer):
            pass  # a view of memory that exists (same data variable)
        elif isinstance(s, BufferStore):
            vals = [(t, self.ev(s.value, t), [self.ev(i, t) for i in s.indices]) for t in active]
            for t, v, idx in vals:
                self._mem(s.buffer, t)[self._offset(s.buffer, idx, t)] = v
        elif isinstance(s, Evaluate):
            self._evaluate(s, active)
        else:
            raise NotImplementedError(f"statement {type(s).__name__}")

    def _for(self, s: For, active: list[int]) -> None:
        if s.kind is ForKind.THREAD_BINDING:
            raise NotImplementedError("a nested thread-bound loop")
        lo = {self.ev(s.min, t) for t in active}
        ext = {self.ev(s.extent, t) for t in active}
        if len(lo) != 1 or len(ext) != 1:
            raise NotImplementedError("a loop whose bounds differ between threads")
        start, n = lo.pop(), ext.pop()
        for i in range(start, start + n):
            for t in active:
                self.env[t][id(s.loop_var)] = i
            self.run(s.body, active)

    def _alloc(self, buf: Buffer) -> None:
        size = 1
        for d in buf.shape:
            size *= int(d.value)
        nbytes = size * buf.dtype.bytes
        fill = 0xFF  # NaN in every float type: unwritten memory shows up
        if buf.scope == "local":
            if id(buf.data) not in self.local:
                self.local[id(buf.data)] = [np.full(nbytes, fill, dtype=np.uint8)
                                            for _ in range(self.n)]
        elif id(buf.data) not in self.shared:
            self.shared[id(buf.data)] = np.full(nbytes, fill, dtype=np.uint8)

    def _evaluate(self, s: Evaluate, active: list[int]) -> None:
        v = s.value
        if not isinstance(v, Call):
            return
        name = v.op.name
        if name.endswith("_sync") or name.endswith("_group") or name in (
                "tirx.cuda.warpgroup_sync", "tirx.ptx.fence_proxy_async"):
            return  # barriers, fences, cp.async groups: the threads run in lock step
        if name == "tirx.ptx.cp_async" and len(v.args) == 8:  # done at once (not the legacy form)
            dst, src, size = v.args[0], v.args[1], int(v.args[2].value)
            pred, fill = v.args[6], v.args[7].value
            for t in active:
                n = size // dst.buffer.dtype.bytes
                d_off = self._offset(dst.buffer, [self.ev(i, t) for i in dst.indices], t)
                holds = isinstance(pred, IntImm) and pred.value == -1 or bool(self.ev(pred, t))
                if not holds:  # a failed predicate: zeros with fill_mode "zero", else nothing
                    if fill == "zero":
                        self._mem(dst.buffer, t)[d_off:d_off + n] = 0
                    continue
                s_off = self._offset(src.buffer, [self.ev(i, t) for i in src.indices], t)
                self._mem(dst.buffer, t)[d_off:d_off + n] = self._mem(src.buffer, t)[s_off:s_off + n]
            return
        raise NotImplementedError(f"statement call {name}")


def _kernel_and_dims(mod: Any) -> tuple[PrimFunc, Any]:
    kernels = [f for f in mod.functions.values() if f.attrs.get("tirx.is_kernel")]
    if len(kernels) != 1:
        raise NotImplementedError(f"{len(kernels)} kernels (the emulator runs one)")
    return kernels[0], kernels[0].attrs.get("tirx.launch")


def run_kernel(func: PrimFunc, arrays: Sequence[np.ndarray], *, arch: str = "sm_90a",
               blocks: Sequence[int] | None = None) -> None:
    """Lower ``func`` for CUDA ``arch`` and run it on ``arrays`` (numpy, in the function's
    parameter order; outputs are written in place). ``blocks``: the linear CTA numbers to run
    (default: all)."""
    from tvm.driver import lower
    from tvm.tirx.pipeline import tirx_pipeline

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    mod = lower(func, target, tirx_pipeline(disable_vectorize=True, disable_unroll=True))
    kernel, launch = _kernel_and_dims(mod)
    host = next(f for f in mod.functions.values() if f.attrs.get("tirx.is_host"))
    by_data: dict[int, np.ndarray] = {}
    for p, a in zip(host.params, arrays):
        buf = host.buffer_map.get(p)
        if buf is None:
            raise NotImplementedError("scalar parameters")
        by_data[id(buf.data)] = a.reshape(-1)
    # the kernel's own parameters are the host buffers' data vars (the same Var objects)
    body = kernel.body
    grid = [int(d.value) for d in launch.grid]
    block = [int(d.value) for d in launch.block]
    nthreads = block[0] * block[1] * block[2]
    ngrid = grid[0] * grid[1] * grid[2]
    binds, inner = _strip_bindings(body)
    for b in (range(ngrid) if blocks is None else blocks):
        cta = _Block(nthreads, by_data)
        bidx = (b % grid[0], b // grid[0] % grid[1], b // (grid[0] * grid[1]))
        for t in range(nthreads):
            tidx = (t % block[0], t // block[0] % block[1], t // (block[0] * block[1]))
            for var, tag in binds:
                axis = "xyz".index(tag[-1])
                cta.env[t][id(var)] = (bidx if tag.startswith("blockIdx") else tidx)[axis]
        cta.run(inner, list(range(nthreads)))


def _strip_bindings(body: Any) -> tuple[list[tuple[Var, str]], Any]:
    """The thread-bound loops around the kernel body (outermost first) and the body."""
    binds: list[tuple[Var, str]] = []
    pre: list[Any] = []
    s = body
    while True:
        if isinstance(s, For) and s.kind is ForKind.THREAD_BINDING:
            binds.append((s.loop_var, s.thread_tag))
            s = s.body
        elif isinstance(s, SeqStmt) and s.seq and all(isinstance(x, DeclBuffer) for x in s.seq[:-1]):
            pre.extend(s.seq[:-1])
            s = s.seq[-1]
        else:
            return binds, s


def arrays_for(func: PrimFunc, values: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    return [values[p.name] for p in func.params]
