"""``T.cuda`` across threads and over time: warp shuffles and ``__activemask``, warp/CTA
reductions, byte copies, the event timer, and the MMA fragment helpers (declared after
:mod:`.cuda_misc`, the rest of the group)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from tvm.ir.expr import Call, IntImm

from ._base import Emit, Rule, arg_dtype, ctype, fail, helper, int_arg, ptr
from ._base import str_arg as S
from ._spec import build, element, intrin, sugar

REDUCTIONS = ("sum", "max", "min")

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
    op, width = _red_op(call, 1), call.args[2]
    if isinstance(width, IntImm):  # a helper named by the seed's form: tvm_warp_reduce_sum_32
        name = f"tvm_warp_reduce_{S(call, 1)}_{width.value}"
        helper(emit, name, f"template <typename T> __device__ __forceinline__ T {name}(T v) {{\n"
                           f"  return tvm_warp_reduce(v, {op}, {width.value});\n}}")
        return f"{name}({emit(call.args[0])})"
    return f"tvm_warp_reduce({emit(call.args[0])}, {op}, {emit(width)})"


@intrin("cuda.cta_reduce", "value, op, num_warps, scratch", choices={"op": REDUCTIONS}, dtype=arg_dtype(0))
def _cta_reduce(call: Call, emit: Emit) -> str:
    helper(emit, "tvm_reduce", _REDUCE)
    v = call.args[0]
    scratch = ptr(emit, call.args[3], ctype(emit, v.dtype))
    op, warps = _red_op(call, 1), call.args[2]
    if isinstance(warps, IntImm):  # named by the seed's form: tvm_cta_reduce_sum_4
        name = f"tvm_cta_reduce_{S(call, 1)}_{warps.value}"
        helper(emit, name, f"template <typename T> __device__ __forceinline__ T {name}(T v, T* s) "
                           f"{{\n  return tvm_cta_reduce(v, {op}, {warps.value}, s);\n}}")
        return f"{name}({emit(v)}, {scratch})"
    return f"tvm_cta_reduce({emit(v)}, {op}, {emit(warps)}, {scratch})"


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


def _timer(path: str, params: Any, render: Callable[[Emit, Any], str], **kwargs: Any) -> None:
    """Declare the timer intrinsic ``T.<path>`` (builder ``<name>_cuda``): its rule adds the
    ``tvm_timer`` helpers and calls one as ``render(emit, call.args)`` spells it."""

    def rule(call: Call, emit: Emit) -> str:
        helper(emit, "tvm_timer", _TIMER)
        return render(emit, call.args)

    name = path.rsplit(".", 1)[1]
    intrin(path, params, builder=f"{name}_cuda", **kwargs)(rule)


def _timer_event_operands(
    event_type: Any, profiler_buffer: Any, profiler_tag: Any, profiler_write_offset: Any,
    profiler_write_stride: Any, leader_cond: Any,
) -> tuple[Any, ...]:
    """Record a timer event (an int, or an enum member whose ``value`` is one)."""
    event = getattr(event_type, "value", event_type)
    buf = (profiler_buffer, profiler_tag, profiler_write_offset, profiler_write_stride)
    return (event, *buf, leader_cond)


def _timer_event(kind: int) -> Callable[[Emit, Any], str]:
    return lambda emit, a: (f"tvm_timer_event({emit(a[0])}, {kind}, {_timer_ptrs(emit, a[1:4])}, "
                            f"{emit(a[4])}, {emit(a[5])})")


_timer("cuda.timer_init",
       "profiler_buffer, profiler_tag, profiler_write_offset, num_groups, group_id",
       lambda emit, a: f"tvm_timer_init({_timer_ptrs(emit, a)}, {emit(a[3])}, {emit(a[4])})")
_timer("cuda.timer_start", _timer_event_operands, _timer_event(0), nargs=6)
_timer("cuda.timer_end", _timer_event_operands, _timer_event(1), nargs=6)
_timer("cuda.timer_finalize",
       "profiler_buffer, profiler_tag, profiler_write_offset, profiler_write_stride, leader_cond",
       lambda emit, a: (f"tvm_timer_event(1023, 2, {_timer_ptrs(emit, a[0:3])}, {emit(a[3])}, "
                        f"{emit(a[4])})"))


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
