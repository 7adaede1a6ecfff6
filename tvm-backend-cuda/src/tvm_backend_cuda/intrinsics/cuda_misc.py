"""``T.cuda`` within a thread and the block's syncs: synchronisation, atomics, loads, printf,
user functions, conversions and bit helpers. The rest of the group (shuffles, reductions,
copies, the timer, the MMA fragment helpers) is :mod:`.cuda_warp`."""

from __future__ import annotations

from typing import Any

from tvm.ir import CallEffect, const
from tvm.ir import expr as E
from tvm.ir.expr import Call
from tvm.tirx.op import bitwise_and

from ._base import Emit, Rule, arg_dtype, arg_str, asm, ctype, fail, helper, ptr
from ._base import str_arg as S
from ._spec import PURE, UPDATE, DTypeRule, Typed, build, intrin, sugar

# -- synchronisation ---------------------------------------------------------------------------


# The seed's helper names (its tests read the source for them): tvm_builtin_cuda_<op>, each a
# one-line wrapper of the CUDA builtin, defined once before the kernels.
_THREAD_FENCE = """\
__device__ __forceinline__ void tvm_builtin_cuda_thread_fence() {
  __threadfence();
}"""


@intrin("cuda.thread_fence")
def _thread_fence(call: Call, emit: Emit) -> str:
    return helper(emit, "tvm_builtin_cuda_thread_fence", _THREAD_FENCE) + "()"


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


_NANO_SLEEP = """\
__device__ __forceinline__ void tvm_builtin_cuda_nano_sleep(unsigned ns) {
  __nanosleep(ns);
}"""


@intrin("cuda.nano_sleep", "time", min_arch=70)
def _nano_sleep(call: Call, emit: Emit) -> str:
    fn = helper(emit, "tvm_builtin_cuda_nano_sleep", _NANO_SLEEP)
    return f"{fn}((unsigned)({emit(call.args[0])}))"


@intrin("cuda.trap_when_assert_failed", "cond")
def _trap(call: Call, emit: Emit) -> str:
    return f"if (!({emit(call.args[0])})) {{ __trap(); }}"


# -- atomics and loads -------------------------------------------------------------------------
def _typed_ptr(emit: Emit, a: Any, dtype: Any) -> str:
    return ptr(emit, a, ctype(emit, dtype))


_ATOMIC_ADD = """\
template <typename T>
__device__ __forceinline__ T tvm_builtin_cuda_atomic_add(T* address, T value) {
  return atomicAdd(address, value);
}"""

_ATOMIC_CAS = """\
template <typename T>
__device__ __forceinline__ T tvm_builtin_cuda_atomic_cas(T* address, T compare, T value) {
  return atomicCAS(address, compare, value);
}"""


@intrin("cuda.atomic_add", "res_addr, value", dtype=arg_dtype(1))
def _atomic_add(call: Call, emit: Emit) -> str:
    addr, value = call.args
    fn = helper(emit, "tvm_builtin_cuda_atomic_add", _ATOMIC_ADD)
    ct = ctype(emit, value.dtype)
    return f"{fn}<{ct}>({_typed_ptr(emit, addr, value.dtype)}, {emit(value)})"


@intrin("cuda.atomic_cas", "ptr, old_val, new_val", dtype=arg_dtype(1))
def _atomic_cas(call: Call, emit: Emit) -> str:
    addr, old, new = call.args
    fn = helper(emit, "tvm_builtin_cuda_atomic_cas", _ATOMIC_CAS)
    ct = ctype(emit, old.dtype)
    return f"{fn}<{ct}>({_typed_ptr(emit, addr, old.dtype)}, {emit(old)}, {emit(new)})"


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


@intrin("cuda.runtime_instr_desc", "desc, sf_id")
def _runtime_instr_desc(call: Call, emit: Emit) -> str:
    # tcgen05 block-scaled instruction descriptor: a_sf_id in bits [29, 31), b_sf_id in [4, 6)
    d = ptr(emit, call.args[0], "unsigned")
    sf = f"((unsigned)({emit(call.args[1])}) & 3u)"
    return f"*{d} = (*{d} & ~((3u << 29) | (3u << 4))) | ({sf} << 29) | ({sf} << 4)"


_simple("cuda.get_tmem_addr", "addr, row_offset, col_offset", "uint32",
        "((unsigned)({0}) + ((unsigned)({1}) << 16) + (unsigned)({2}))")
_simple("cuda.cvta_generic_to_shared", "ptr", "uint32",
        "((unsigned)__cvta_generic_to_shared((void*)({0})))")


@intrin("cuda.smem_addr_from_uint64", "cluster_addr", dtype="uint32", effect=PURE)
def _smem_from_u64(call: Call, emit: Emit) -> str:
    return f"((unsigned)({emit(call.args[0])}))"


@sugar("cuda.sm100_tma_2sm_mbarrier_addr")
def cuda_sm100_tma_2sm_mbarrier_addr(bar: Any) -> Any:
    """The shared address of ``bar`` with bit 24 cleared (the 2-SM TMA mbarrier operand)."""
    return bitwise_and(build("cuda.cvta_generic_to_shared", bar), const(0xFEFFFFFF, "uint32"))


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

# the pair types: C type of the pair, its header, and the name of the helpers' source
_PAIRS = {"bfloat162": ("__nv_bfloat162", "cuda_bf16.h", "tvm_bf16_pack"),
          "half2": ("__half2", "cuda_fp16.h", "tvm_half_pack")}
_PAIR = """\
__device__ __forceinline__ unsigned tvm_float22{t}_rn(float a, float b) {{
  {ct} v = __floats2{t}_rn(a, b);
  return *(unsigned*)&v;
}}
__device__ __forceinline__ unsigned long long tvm_{t}2float2(unsigned p) {{
  {ct} v = *({ct}*)&p;
  float2 f = __{t}2float2(v);
  return ((unsigned long long)__float_as_uint(f.y) << 32) | __float_as_uint(f.x);
}}"""


def _pair_helpers(emit: Emit, t: str) -> None:
    """The header of pair type ``t`` and the helpers that pack two floats into one and back."""
    ctype, header, name = _PAIRS[t]
    emit.ctx.need_header(header)
    helper(emit, name, _PAIR.format(t=t, ct=ctype))


def _to_pair(t: str) -> Rule:
    def rule(call: Call, emit: Emit) -> str:
        _pair_helpers(emit, t)
        return f"tvm_float22{t}_rn({emit(call.args[0])}, {emit(call.args[1])})"

    return rule


def _from_pair(t: str) -> Rule:
    def rule(call: Call, emit: Emit) -> str:
        _pair_helpers(emit, t)
        return f"tvm_{t}2float2((unsigned)({emit(call.args[0])}))"

    return rule


intrin("cuda.float22bfloat162_rn", "v0, v1", dtype="uint32", effect=PURE)(_to_pair("bfloat162"))


@intrin("cuda.float22bfloat162_rn_from_float2", "packed", dtype="uint32", effect=PURE)
def _f22bf2_packed(call: Call, emit: Emit) -> str:
    _pair_helpers(emit, "bfloat162")
    p = emit(call.args[0])
    return f"tvm_float22bfloat162_rn({_LO.format(p)}, {_HI.format(p)})"


intrin("cuda.bfloat1622float2", "packed", dtype="uint64", effect=PURE)(_from_pair("bfloat162"))
intrin("cuda.float22half2_rn", "v0, v1", dtype="uint32", effect=PURE,
       doc="Two float32 values rounded to a half2, as its 32 bits (``v0`` in the low half).",
       )(_to_pair("half2"))
intrin("cuda.half22float2", "packed", dtype="uint64", effect=PURE,
       doc="The two halves of a 32-bit half2 as a packed float2 (``cuda.float2_x`` / ``_y``).",
       )(_from_pair("half2"))


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


# ``T.cuda.cast_vec2(dst, src)``: two adjacent registers converted as one pair (float32 <->
# float16 / bfloat16), through CUDA's paired conversions; the helper's name is the seed's
# (tvm_builtin_cast_float32x2_float16x2: its tests read the source for it).
CAST_VEC2 = {
    ("float32", "float16"): ("__half2", "__float22half2_rn", "float2"),
    ("float32", "bfloat16"): ("__nv_bfloat162", "__float22bfloat162_rn", "float2"),
    ("float16", "float32"): ("float2", "__half22float2", "__half2"),
    ("bfloat16", "float32"): ("float2", "__bfloat1622float2", "__nv_bfloat162"),
}


@intrin("cuda.cast_vec2", "dst, src, src_dtype, dst_dtype",
        choices={"src_dtype": ("float32", "float16", "bfloat16"),
                 "dst_dtype": ("float32", "float16", "bfloat16")})
def _cast_vec2(call: Call, emit: Emit) -> str:
    dst, src = call.args[:2]
    sdt, ddt = S(call, 2), S(call, 3)
    pair = CAST_VEC2.get((sdt, ddt))
    if pair is None:
        raise fail(call, f"converts {', '.join(f'{a}->{b}' for a, b in CAST_VEC2)}; got {sdt}->{ddt}")
    out_t, fn, in_t = pair
    dct, sct = ctype(emit, ddt), ctype(emit, sdt)
    name = f"tvm_builtin_cast_{sdt}x2_{ddt}x2"
    body = (f"__device__ __forceinline__ void {name}({dct}* d, const {sct}* s) {{\n"
            f"  {in_t} v;\n  v.x = s[0];\n  v.y = s[1];\n"
            f"  {out_t} r = {fn}(v);\n  d[0] = r.x;\n  d[1] = r.y;\n}}")
    return f"{helper(emit, name, body)}({ptr(emit, dst, dct)}, {ptr(emit, src, 'const ' + sct)})"


# the rest of T.cuda; imported here, after this module's declarations, so that the
# declaration order stays the group's
from .cuda_warp import REDUCTIONS as REDUCTIONS  # noqa: E402

