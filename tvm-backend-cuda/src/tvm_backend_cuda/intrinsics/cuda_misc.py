"""The whole ``T.cuda`` group: synchronisation, atomics, conversions, shuffles, reductions,
copies, printf, user functions, the timer, and the MMA fragment helpers."""

from __future__ import annotations

import inspect
from typing import Any

from tvm.ir import CallEffect, const
from tvm.ir import expr as E
from tvm.ir.expr import Call
from tvm.tirx.op import bitwise_and

from ._base import Emit, Rule, arg_dtype, arg_str, asm, ctype, fail, helper, int_arg, ptr
from ._base import str_arg as S
from ._spec import PURE, UPDATE, DTypeRule, Typed, build, element, intrin, sugar

REDUCTIONS = ("sum", "max", "min")

# -- synchronisation ---------------------------------------------------------------------------


@intrin("cuda.thread_fence")
def _thread_fence(call: Call, emit: Emit) -> str:
    return "__threadfence()"


@intrin("cuda.warp_sync")
def _warp_sync(call: Call, emit: Emit) -> str:
    return "__syncwarp()"


@intrin("cuda.cta_sync")
def _cta_sync(call: Call, emit: Emit) -> str:
    return "__syncthreads()"


def _emu_warpgroup_sync(call: Call, emit: Emit) -> str:
    return f"tvm_cuda_emu::bar_sync((unsigned)({emit(call.args[0])}), 128u)"


@intrin("cuda.warpgroup_sync", "bar_no", emulate=_emu_warpgroup_sync)
def _warpgroup_sync(call: Call, emit: Emit) -> str:
    return asm("bar.sync %0, 128;", inputs=[f'"r"((int)({emit(call.args[0])}))'])


_GRID_SYNC = """\
__device__ unsigned int tvm_grid_sync_counter = 0;
// A grid-wide barrier without cooperative groups. Every block of the grid must be resident at
// once (a cooperative launch, or a grid no larger than the device holds), as for grid.sync().
// The top bit of the counter flips each time all blocks have arrived.
__device__ __forceinline__ void tvm_grid_sync() {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    unsigned int nb = gridDim.x * gridDim.y * gridDim.z;
    bool leader = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
    unsigned int add = leader ? (0x80000000u - (nb - 1u)) : 1u;
    __threadfence();
    unsigned int old = atomicAdd(&tvm_grid_sync_counter, add);
    while (((old ^ *(volatile unsigned int*)&tvm_grid_sync_counter) & 0x80000000u) == 0u) {
    }
    __threadfence();
  }
  __syncthreads();
}"""


@intrin("cuda.grid_sync")
def _grid_sync(call: Call, emit: Emit) -> str:
    return helper(emit, "tvm_grid_sync", _GRID_SYNC) + "()"


@intrin("cuda.cluster_sync", min_arch=90,
        emulate=lambda call, emit: "tvm_cuda_emu::cluster_sync()")
def _cluster_sync(call: Call, emit: Emit) -> str:
    return asm("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;")


@intrin("cuda.thread_rank", dtype="int32", effect=PURE)
def _thread_rank(call: Call, emit: Emit) -> str:
    return "((int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)))"


@intrin("cuda.syncthreads_and", "cond", dtype="int32")
def _syncthreads_and(call: Call, emit: Emit) -> str:
    return f"__syncthreads_and({emit(call.args[0])})"


@intrin("cuda.syncthreads_or", "cond", dtype="int32")
def _syncthreads_or(call: Call, emit: Emit) -> str:
    return f"__syncthreads_or({emit(call.args[0])})"


@intrin("cuda.syncthreads_count", "cond", dtype="int32")
def _syncthreads_count(call: Call, emit: Emit) -> str:
    return f"__syncthreads_count({emit(call.args[0])})"


@intrin("cuda.nano_sleep", "time", min_arch=70)
def _nano_sleep(call: Call, emit: Emit) -> str:
    return f"__nanosleep((unsigned)({emit(call.args[0])}))"


@intrin("cuda.trap_when_assert_failed", "cond")
def _trap(call: Call, emit: Emit) -> str:
    return f"if (!({emit(call.args[0])})) {{ __trap(); }}"


# -- atomics and loads -------------------------------------------------------------------------
def _typed_ptr(emit: Emit, a: Any, dtype: Any) -> str:
    return ptr(emit, a, ctype(emit, dtype))


@intrin("cuda.atomic_add", "res_addr, value", dtype=arg_dtype(1))
def _atomic_add(call: Call, emit: Emit) -> str:
    addr, value = call.args
    return f"atomicAdd({_typed_ptr(emit, addr, value.dtype)}, {emit(value)})"


@intrin("cuda.atomic_cas", "ptr, old_val, new_val", dtype=arg_dtype(1))
def _atomic_cas(call: Call, emit: Emit) -> str:
    addr, old, new = call.args
    return f"atomicCAS({_typed_ptr(emit, addr, old.dtype)}, {emit(old)}, {emit(new)})"


@intrin("cuda.ldg", "addr, dtype", strings=("dtype",), dtype=arg_str(1), effect=PURE)
def _ldg(call: Call, emit: Emit) -> str:
    ct = ctype(emit, S(call, 1))
    return f"__ldg((const {ct}*)({emit(call.args[0])}))"


# -- printf, user functions ----------------------------------------------------------------------
@intrin("cuda.printf", "fmt, *args", strings=("fmt",))
def _printf(call: Call, emit: Emit) -> str:
    fmt = emit(call.args[0])
    rest = [
        f"(double)({emit(a)})" if isinstance(a, E.PrimExpr) and a.dtype.is_float else emit(a)
        for a in call.args[1:]
    ]
    return f"printf({', '.join([fmt, *rest])})"


def _func_call_operands(
    func_name: str, *args: Any, source_code: str = "", return_type: str = "void"
) -> Typed:
    """Call the device function ``func_name``; ``source_code`` defines it (once per module)."""
    return Typed(return_type, (func_name, *args, source_code))


@intrin(
    "cuda.func_call",
    _func_call_operands,
    nargs=(2, None),
    strings=("func_name", "source_code"),
    script_kwargs=("source_code",),
    # the emulator compiles the same helper; its inline PTX becomes the emulator's helpers
    emulate=lambda call, emit: _func_call(call, emit),
)
def _func_call(call: Call, emit: Emit) -> str:
    name, source = S(call, 0), S(call, len(call.args) - 1)
    if source:
        emit.ctx.add_helper(name, source)
    args = ", ".join(emit(a) for a in call.args[1:-1])
    return f"{name}({args})"


# -- conversions and bit tricks --------------------------------------------------------------------
def _value_or_deref(emit: Emit, a: Any, c_type: str) -> str:
    if isinstance(a, E.PrimExpr) and a.dtype.is_handle:
        return f"(*(const {c_type}*)({emit(a)}))"
    return emit(a)


@intrin("cuda.half2float", "src", dtype="float32", effect=PURE)
def _half2float(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_fp16.h")
    return f"__half2float({_value_or_deref(emit, call.args[0], '__half')})"


@intrin("cuda.bfloat162float", "src", dtype="float32", effect=PURE)
def _bfloat162float(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_bf16.h")
    return f"__bfloat162float({_value_or_deref(emit, call.args[0], '__nv_bfloat16')})"


@intrin("cuda.float22half2", "dst, src")
def _float22half2(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_fp16.h")
    dst, src = call.args
    return f"*{ptr(emit, dst, '__half2')} = __float22half2_rn(*{ptr(emit, src, 'const float2')})"


_H8 = """\
__device__ __forceinline__ void tvm_half8tofloat8(const void* src, void* dst) {
  const __half2* s = (const __half2*)src;
  float2* d = (float2*)dst;
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = __half22float2(s[i]);
}
__device__ __forceinline__ void tvm_float8tohalf8(const void* src, void* dst) {
  const float2* s = (const float2*)src;
  __half2* d = (__half2*)dst;
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = __float22half2_rn(s[i]);
}"""


@intrin("cuda.half8tofloat8", "src_addr, dst_addr")
def _half8tofloat8(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_fp16.h")
    helper(emit, "tvm_half8_float8", _H8)
    return f"tvm_half8tofloat8({emit(call.args[0])}, {emit(call.args[1])})"


@intrin("cuda.float8tohalf8", "src_addr, dst_addr")
def _float8tohalf8(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_fp16.h")
    helper(emit, "tvm_half8_float8", _H8)
    return f"tvm_float8tohalf8({emit(call.args[0])}, {emit(call.args[1])})"


@intrin("cuda.runtime_instr_desc", "desc, sf_id")
def _runtime_instr_desc(call: Call, emit: Emit) -> str:
    # tcgen05 block-scaled instruction descriptor: a_sf_id in bits [29, 31), b_sf_id in [4, 6)
    d = ptr(emit, call.args[0], "unsigned")
    sf = f"((unsigned)({emit(call.args[1])}) & 3u)"
    return f"*{d} = (*{d} & ~((3u << 29) | (3u << 4))) | ({sf} << 29) | ({sf} << 4)"


@intrin("cuda.get_tmem_addr", "addr, row_offset, col_offset", dtype="uint32", effect=PURE)
def _get_tmem_addr(call: Call, emit: Emit) -> str:
    a, r, c = (emit(x) for x in call.args)
    return f"((unsigned)({a}) + ((unsigned)({r}) << 16) + (unsigned)({c}))"


@intrin("cuda.cvta_generic_to_shared", "ptr", dtype="uint32", effect=PURE)
def _cvta(call: Call, emit: Emit) -> str:
    return f"((unsigned)__cvta_generic_to_shared((void*)({emit(call.args[0])})))"


@intrin("cuda.smem_addr_from_uint64", "cluster_addr", dtype="uint32", effect=PURE)
def _smem_from_u64(call: Call, emit: Emit) -> str:
    return f"((unsigned)({emit(call.args[0])}))"


@sugar("cuda.sm100_tma_2sm_mbarrier_addr")
def cuda_sm100_tma_2sm_mbarrier_addr(bar: Any) -> Any:
    """The shared address of ``bar`` with bit 24 cleared (the 2-SM TMA mbarrier operand)."""
    return bitwise_and(build("cuda.cvta_generic_to_shared", bar), const(0xFEFFFFFF, "uint32"))


def _simple(
    path: str,
    params: str,
    dtype: DTypeRule,
    fmt: str,
    *,
    effect: CallEffect = PURE,
    min_arch: int = 0,
    builder: str | None = None,
) -> None:
    """An op whose C++ is ``fmt`` with the operands in order."""

    def rule(call: Call, emit: Emit) -> str:
        return fmt.format(*(emit(a) for a in call.args))

    intrin(path, params, dtype=dtype, effect=effect, min_arch=min_arch, builder=builder)(rule)


_simple("cuda.uint_as_float", "bits", "float32", "__uint_as_float((unsigned)({0}))")
_simple("cuda.float_as_uint", "x", "uint32", "__float_as_uint({0})")
_simple("cuda.ballot_sync", "mask, pred", "uint32", "__ballot_sync({0}, {1})", effect=UPDATE)
_simple("cuda.ffs_u32", "value", "int32", "__ffs((int)({0}))")
_simple(
    "cuda.reduce_add_sync_u32",
    "mask, value",
    "uint32",
    "__reduce_add_sync({0}, (unsigned)({1}))",
    effect=UPDATE,
    min_arch=80,
)
_simple(
    "cuda.reduce_min_sync_u32",
    "mask, value",
    "uint32",
    "__reduce_min_sync({0}, (unsigned)({1}))",
    effect=UPDATE,
    min_arch=80,
)
_simple("cuda.clock64", "", "uint64", "((unsigned long long)clock64())", effect=UPDATE)
# float2 values travel packed in a uint64: x in the low word, y in the high word
_simple(
    "cuda.make_float2",
    "x, y",
    "uint64",
    "(((unsigned long long)__float_as_uint({1}) << 32) | __float_as_uint({0}))",
)
_simple("cuda.float2_x", "packed", "float32", "__uint_as_float((unsigned)({0}))")
_simple(
    "cuda.float2_y", "packed", "float32", "__uint_as_float((unsigned)(((unsigned long long)({0})) >> 32))"
)
_PACK = "(((unsigned long long)__float_as_uint({hi}) << 32) | __float_as_uint({lo}))"
_LO = "__uint_as_float((unsigned)({0}))"
_HI = "__uint_as_float((unsigned)(((unsigned long long)({0})) >> 32))"
for _name, _fn in (("fmul2_rn", "__fmul_rn"), ("fadd2_rn", "__fadd_rn")):
    _simple(
        f"cuda.{_name}",
        "a, b",
        "uint64",
        _PACK.format(
            lo=f"{_fn}({_LO.format('{0}')}, {_LO.format('{1}')})",
            hi=f"{_fn}({_HI.format('{0}')}, {_HI.format('{1}')})",
        ),
    )

_BF = """\
__device__ __forceinline__ unsigned tvm_float22bfloat162_rn(float a, float b) {
  __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
  return *(unsigned*)&v;
}
__device__ __forceinline__ unsigned long long tvm_bfloat1622float2(unsigned p) {
  __nv_bfloat162 v = *(__nv_bfloat162*)&p;
  float2 f = __bfloat1622float2(v);
  return ((unsigned long long)__float_as_uint(f.y) << 32) | __float_as_uint(f.x);
}"""


@intrin("cuda.float22bfloat162_rn", "v0, v1", dtype="uint32", effect=PURE)
def _f22bf2(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_bf16.h")
    helper(emit, "tvm_bf16_pack", _BF)
    return f"tvm_float22bfloat162_rn({emit(call.args[0])}, {emit(call.args[1])})"


@intrin("cuda.float22bfloat162_rn_from_float2", "packed", dtype="uint32", effect=PURE)
def _f22bf2_packed(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_bf16.h")
    helper(emit, "tvm_bf16_pack", _BF)
    p = emit(call.args[0])
    return f"tvm_float22bfloat162_rn({_LO.format(p)}, {_HI.format(p)})"


@intrin("cuda.bfloat1622float2", "packed", dtype="uint64", effect=PURE)
def _bf22f2(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_bf16.h")
    helper(emit, "tvm_bf16_pack", _BF)
    return f"tvm_bfloat1622float2((unsigned)({emit(call.args[0])}))"


_HF = """\
__device__ __forceinline__ unsigned tvm_float22half2_rn(float a, float b) {
  __half2 v = __floats2half2_rn(a, b);
  return *(unsigned*)&v;
}
__device__ __forceinline__ unsigned long long tvm_half22float2(unsigned p) {
  __half2 v = *(__half2*)&p;
  float2 f = __half22float2(v);
  return ((unsigned long long)__float_as_uint(f.y) << 32) | __float_as_uint(f.x);
}"""


@intrin("cuda.float22half2_rn", "v0, v1", dtype="uint32", effect=PURE)
def _f22h2(call: Call, emit: Emit) -> str:
    """Two float32 values rounded to a half2, as its 32 bits (``v0`` in the low half)."""
    emit.ctx.need_header("cuda_fp16.h")
    helper(emit, "tvm_half_pack", _HF)
    return f"tvm_float22half2_rn({emit(call.args[0])}, {emit(call.args[1])})"


@intrin("cuda.half22float2", "packed", dtype="uint64", effect=PURE)
def _h22f2(call: Call, emit: Emit) -> str:
    """The two halves of a 32-bit half2 as a packed float2 (``cuda.float2_x`` / ``_y``)."""
    emit.ctx.need_header("cuda_fp16.h")
    helper(emit, "tvm_half_pack", _HF)
    return f"tvm_half22float2((unsigned)({emit(call.args[0])}))"


_H2 = """\
__device__ __forceinline__ unsigned tvm_h2_{op}(unsigned a, unsigned b) {{
  __half2 r = __h{op}2(*(__half2*)&a, *(__half2*)&b);
  return *(unsigned*)&r;
}}"""


def _h2(op: str) -> Rule:
    def rule(call: Call, emit: Emit) -> str:
        emit.ctx.need_header("cuda_fp16.h")
        name = helper(emit, f"tvm_h2_{op}", _H2.format(op=op))
        return f"{name}((unsigned)({emit(call.args[0])}), (unsigned)({emit(call.args[1])}))"

    return rule


intrin("cuda.hmin2", "a, b", dtype="uint32", effect=PURE, min_arch=80)(_h2("min"))
intrin("cuda.hmax2", "a, b", dtype="uint32", effect=PURE, min_arch=80)(_h2("max"))

_FP8X4 = """\
__device__ __forceinline__ unsigned tvm_fp8x4_e4m3(float x, float y, float z, float w) {
  unsigned lo = __nv_cvt_float2_to_fp8x2(make_float2(x, y), __NV_SATFINITE, __NV_E4M3);
  unsigned hi = __nv_cvt_float2_to_fp8x2(make_float2(z, w), __NV_SATFINITE, __NV_E4M3);
  return (lo & 0xffffu) | (hi << 16);
}"""


@intrin("cuda.fp8x4_e4m3_from_float4", "x, y, z, w", dtype="uint32", effect=PURE)
def _fp8x4(call: Call, emit: Emit) -> str:
    emit.ctx.need_header("cuda_fp8.h")
    helper(emit, "tvm_fp8x4_e4m3", _FP8X4)
    return f"tvm_fp8x4_e4m3({', '.join(emit(a) for a in call.args)})"


# -- shuffles --------------------------------------------------------------------------------------
def _shfl_operands(third: str) -> Any:
    """A warp shuffle of ``var`` (a Buffer stands for its first element); the third parameter
    is ``lane``, ``delta`` or ``lane_mask`` as in CUDA."""

    def operands(mask: Any, var: Any, lane: Any, width: Any = 32) -> tuple[Any, ...]:
        return (mask, element(var), lane, width)

    operands.__doc__ = _shfl_operands.__doc__
    sig = inspect.signature(operands)
    params = list(sig.parameters.values())
    params[2] = params[2].replace(name=third)
    operands.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return operands


def _shfl(name: str) -> Rule:
    def rule(call: Call, emit: Emit) -> str:
        return f"{name}({', '.join(emit(a) for a in call.args)})"

    return rule


# The dunder names are the CUDA functions' own; the seed has no flat op names for them.
for _shfl_fn, _third in (
    ("__shfl_sync", "lane"),
    ("__shfl_up_sync", "delta"),
    ("__shfl_down_sync", "delta"),
    ("__shfl_xor_sync", "lane_mask"),
):
    intrin(
        f"cuda.{_shfl_fn}",
        _shfl_operands(_third),
        nargs=4,
        dtype=arg_dtype(1),
        builder=f"cuda{_shfl_fn[1:]}",
        alias=False,
    )(_shfl(_shfl_fn))


@intrin("cuda.__activemask", dtype="uint32", builder="cuda_activemask", alias=False)
def _activemask(call: Call, emit: Emit) -> str:
    return "__activemask()"


# -- reductions ------------------------------------------------------------------------------------
_REDUCE = """\
template <typename T> __device__ __forceinline__ T tvm_reduce_op(T a, T b, int op) {
  return op == 0 ? (T)(a + b) : op == 1 ? (a > b ? a : b) : (a < b ? a : b);
}
template <typename T> __device__ __forceinline__ T tvm_warp_reduce(T v, int op, int width) {
  for (int mask = width >> 1; mask > 0; mask >>= 1)
    v = tvm_reduce_op(v, (T)__shfl_xor_sync(0xffffffffu, v, mask, 32), op);
  return v;
}
// CTA-wide: every thread of the CTA must call it; scratch holds num_warps values in shared memory.
template <typename T>
__device__ __forceinline__ T tvm_cta_reduce(T v, int op, int num_warps, T* scratch) {
  int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  int lane = tid & 31, warp = tid >> 5;
  v = tvm_warp_reduce(v, op, 32);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    T w = lane < num_warps ? scratch[lane] : scratch[0];
    w = tvm_warp_reduce(w, op, num_warps);
    if (lane == 0) scratch[0] = w;
  }
  __syncthreads();
  T r = scratch[0];
  __syncthreads();
  return r;
}"""
_RED_OPS = {"sum": 0, "max": 1, "min": 2}


def _red_op(call: Call, i: int) -> int:
    op = S(call, i)
    if op not in _RED_OPS:
        raise fail(call, f"reduction must be one of {sorted(_RED_OPS)}, got {op!r}")
    return _RED_OPS[op]


@intrin("cuda.warp_reduce", "value, op, width=32", choices={"op": REDUCTIONS, "width": (2, 4, 8, 16, 32)}, dtype=arg_dtype(0))
def _warp_reduce(call: Call, emit: Emit) -> str:
    helper(emit, "tvm_reduce", _REDUCE)
    return f"tvm_warp_reduce({emit(call.args[0])}, {_red_op(call, 1)}, {emit(call.args[2])})"


@intrin("cuda.cta_reduce", "value, op, num_warps, scratch", choices={"op": REDUCTIONS}, dtype=arg_dtype(0))
def _cta_reduce(call: Call, emit: Emit) -> str:
    helper(emit, "tvm_reduce", _REDUCE)
    v = call.args[0]
    scratch = ptr(emit, call.args[3], ctype(emit, v.dtype))
    return f"tvm_cta_reduce({emit(v)}, {_red_op(call, 1)}, {emit(call.args[2])}, {scratch})"


def _reduction_sugar(op: str) -> None:
    def warp(value: Any, width: Any = 32) -> Call:
        return build("cuda.warp_reduce", value, op, width)

    def cta(value: Any, num_warps: Any, scratch: Any) -> Call:
        return build("cuda.cta_reduce", value, op, num_warps, scratch)

    for kind, fn in (("warp", warp), ("cta", cta)):
        fn.__name__ = fn.__qualname__ = f"cuda_{kind}_{op}"
        fn.__doc__ = f"``{kind}_reduce`` with ``op={op!r}``."
        sugar(f"cuda.{kind}_{op}")(fn)


for _op in REDUCTIONS:
    _reduction_sugar(_op)


# -- copies ----------------------------------------------------------------------------------------
_COPY_TYPES = {16: "uint4", 8: "uint2", 4: "unsigned int", 2: "unsigned short", 1: "unsigned char"}


@intrin("cuda.copy_bytes", "dst, src, num_bytes", choices={"num_bytes": (1, 2, 4, 8, 16)})
def _copy_bytes(call: Call, emit: Emit) -> str:
    n = int_arg(call, 2)
    if n not in _COPY_TYPES:
        raise fail(call, f"num_bytes must be one of {sorted(_COPY_TYPES)}, got {n}")
    t = _COPY_TYPES[n]
    # a helper of the seed's name (its tests read the source for it), inlined
    name = f"tvm_builtin_copy_{8 * n}b"
    helper(emit, name, f"__device__ __forceinline__ void {name}(void* dst, const void* src) {{\n"
                       f"  *({t}*)dst = *(const {t}*)src;\n}}")
    return f"{name}({ptr(emit, call.args[0], 'void')}, {ptr(emit, call.args[1], 'const void')})"


def _copy_sugar(bits: int) -> None:
    def fn(dst: Any, src: Any) -> Call:
        return build("cuda.copy_bytes", dst, src, bits // 8)

    fn.__name__ = fn.__qualname__ = f"cuda_copy_{bits}b"
    fn.__doc__ = f"``copy_bytes`` of {bits // 8} byte(s)."
    sugar(f"cuda.copy_{bits}b")(fn)


for _bits in (128, 64, 32, 16, 8):
    _copy_sugar(_bits)


# -- the event timer -------------------------------------------------------------------------------
# Records are uint64: (globaltimer_ns << 16) | (tag << 2) | kind, kind 0 = start, 1 = end.
_TIMER = """\
__device__ __forceinline__ unsigned long long tvm_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void tvm_timer_init(unsigned long long* buf, int* tag, int* offset,
                                               int num_groups, int group_id) {
  tag[0] = group_id;
  offset[0] = num_groups + group_id;
  if (group_id == 0) buf[0] = (unsigned long long)num_groups;
}
__device__ __forceinline__ void tvm_timer_event(int event, int kind, unsigned long long* buf,
                                                int* tag, int* offset, int stride, bool leader) {
  if (leader) {
    buf[offset[0]] = (tvm_globaltimer() << 16) | ((unsigned long long)(tag[0] * 1024 + event) << 2)
                     | (unsigned long long)kind;
  }
  offset[0] += stride;
}"""


def _timer_ptrs(emit: Emit, args: Any) -> str:
    return (
        f"(unsigned long long*)({emit(args[0])}), (int*)({emit(args[1])}), (int*)({emit(args[2])})"
    )


@intrin(
    "cuda.timer_init",
    "profiler_buffer, profiler_tag, profiler_write_offset, num_groups, group_id",
    builder="timer_init_cuda",
)
def _timer_init(call: Call, emit: Emit) -> str:
    helper(emit, "tvm_timer", _TIMER)
    a = call.args
    return f"tvm_timer_init({_timer_ptrs(emit, a)}, {emit(a[3])}, {emit(a[4])})"


def _timer_event_operands(
    event_type: Any, profiler_buffer: Any, profiler_tag: Any, profiler_write_offset: Any,
    profiler_write_stride: Any, leader_cond: Any,
) -> tuple[Any, ...]:
    """Record a timer event (an int, or an enum member whose ``value`` is one)."""
    event = getattr(event_type, "value", event_type)
    buf = (profiler_buffer, profiler_tag, profiler_write_offset, profiler_write_stride)
    return (event, *buf, leader_cond)


def _timer_event(path: str, kind: int) -> None:
    def rule(call: Call, emit: Emit) -> str:
        helper(emit, "tvm_timer", _TIMER)
        a = call.args
        return (
            f"tvm_timer_event({emit(a[0])}, {kind}, {_timer_ptrs(emit, a[1:4])}, "
            f"{emit(a[4])}, {emit(a[5])})"
        )

    name = path.rsplit(".", 1)[1]
    intrin(path, _timer_event_operands, nargs=6, builder=f"{name}_cuda")(rule)


_timer_event("cuda.timer_start", 0)
_timer_event("cuda.timer_end", 1)


@intrin(
    "cuda.timer_finalize",
    "profiler_buffer, profiler_tag, profiler_write_offset, profiler_write_stride, leader_cond",
    builder="timer_finalize_cuda",
)
def _timer_finalize(call: Call, emit: Emit) -> str:
    helper(emit, "tvm_timer", _TIMER)
    a = call.args
    return f"tvm_timer_event(1023, 2, {_timer_ptrs(emit, a[0:3])}, {emit(a[3])}, {emit(a[4])})"


# -- MMA fragment helpers (m16n8 accumulator layout of mma.sync) --------------------------------------
_MMA_STORE = """\
// Each lane holds 4 values of every 16x8 tile: rows lane/4 and lane/4+8, columns 2*(lane%4)+{0,1}.
template <typename T>
__device__ __forceinline__ void tvm_mma_store(int m, int n, T* dst, const T* src, int stride) {
  int lane = threadIdx.x & 31;
  int t = 0;
  for (int i = 0; i < m; i += 16)
    for (int j = 0; j < n; j += 8, ++t) {
      int r = i + lane / 4, c = j + 2 * (lane % 4);
      dst[r * stride + c] = src[4 * t + 0];
      dst[r * stride + c + 1] = src[4 * t + 1];
      dst[(r + 8) * stride + c] = src[4 * t + 2];
      dst[(r + 8) * stride + c + 1] = src[4 * t + 3];
    }
}"""


def _mma_store(call: Call, emit: Emit) -> str:
    helper(emit, "tvm_mma_store", _MMA_STORE)
    ct = ctype(emit, S(call, 0))
    m, n, dst, src, off, stride = call.args[1:]
    return (
        f"tvm_mma_store({emit(m)}, {emit(n)}, {ptr(emit, dst, ct)}, "
        f"{ptr(emit, src, ct)} + ({emit(off)}), {emit(stride)})"
    )


def _mma_fill(call: Call, emit: Emit) -> str:
    ct = ctype(emit, S(call, 0))
    size, p, off = call.args[1:]
    return (
        f"for (int _i = 0; _i < {emit(size)}; ++_i) {{ {ptr(emit, p, ct)}[({emit(off)}) + _i]"
        f" = ({ct})0; }}"
    )


_MMA_FRAGMENT_OPS = {
    "mma_store": ("dtype, m, n, dst_ptr, src_ptr, src_offset, dst_stride", _mma_store),
    "mma_fill": ("dtype, local_size, local_ptr, offset", _mma_fill),
}
for _name, (_params, _rule) in _MMA_FRAGMENT_OPS.items():
    for _variant in (_name, f"{_name}_legacy"):  # the legacy spelling is the same op
        intrin(
            f"cuda.{_variant}", _params, strings=("dtype",), dtype_forward=True, builder=_variant
        )(_rule)
