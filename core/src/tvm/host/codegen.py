"""C source for the host target ``c``, printed by the C-style codegen base.

Each PrimFunc becomes an exported ``int32_t <name>(T* restrict A, ..., int32_t n, ...)`` taking
its buffers as pointers and its scalars by value, followed by the symbolic extents the caller
derives from the arrays. It returns 0, or -1 after recording a message that
``tvm_c_get_last_error()`` returns (failed asserts, failed allocations). A function that returns
a value (``T.ret(x)``, ``def f(...) -> T.int32``) stores it through one more parameter, a
pointer after all the others, and the runtime hands it back to the Python caller. Beside it,
``int32_t <name>__tvm_packed(const TVMHostValue* args)`` takes the same parameters as one array
of values (pointers, int64, double), for the runtime's C caller (``kernels/caller.c``).

Host specifics: parallel loops (and ``blockIdx.*`` loops of the kernel form) run through
``#pragma omp parallel for`` when the compiler has OpenMP; other thread-bound loops are serial
loops; vectorized loops carry ``#pragma GCC ivdep`` and vector expressions are printed lane by
lane; float16 is ``_Float16`` when the compiler supports it, else (like bfloat16) stored as
``uint16_t`` and computed in ``float``. Allocations of any scope up to 64 KiB are stack arrays;
larger or dynamic ones are heap blocks, freed at the end of their block.

The host's C kernel library (``kernels/*.c``, shipped with the package): ``exp`` of float32 is
``tvm_expf`` and float ``max``/``min`` are ``tvm_fmaxf``/``tvm_fminf`` (``kernels/math.c``:
branch-free, so loops calling them vectorise; exp within 2 ulp, max/min with fmaxf's NaN rule),
and a ``T.call_extern`` of a library entry (``tvm_host_gemm_f32``, ``tvm_host_gemm_f64``: the blocked
GEMM the host's ``gemm`` dispatch variant calls) brings that entry's source into the module.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from ..codegen.c_style import CodegenCStyle, FunctionInfo, OpTemplate, ParamInfo
from ..error import CodegenError, located
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.dtype import DataType
from ..ir.function import IRModule, PrimFunc
from ..ir.visitor import post_order_visit

__all__ = ["ERROR_SYMBOL", "LIBRARY", "PACKED_SUFFIX", "RETURN_TYPES", "HostCodegen", "generate_c",
           "kernel_source", "return_type"]

ERROR_SYMBOL = "tvm_c_get_last_error"
PACKED_SUFFIX = "__tvm_packed"

_PREAMBLE = """\
#define TVM_EXPORT __attribute__((visibility("default")))

/* The message of the last failure in this thread; entry points return -1 after setting it. */
static _Thread_local char tvm_last_error[1024];

TVM_EXPORT const char* tvm_c_get_last_error(void) { return tvm_last_error; }

/* One argument of a packed entry point (<name>__tvm_packed): the runtime's C caller fills them. */
typedef union { void* p; int64_t i; double f; } TVMHostValue;

static int32_t tvm_fail(const char* message) {
  snprintf(tvm_last_error, sizeof(tvm_last_error), "%s", message);
  return -1;
}

static void* tvm_alloc(size_t nbytes) {
  size_t rounded = (nbytes + 63u) & ~(size_t)63u;
  return aligned_alloc(64, rounded ? rounded : 64u);
}"""


@functools.cache
def kernel_source(file: str) -> str:
    """The text of ``tvm/host/kernels/<file>``."""
    return (resources.files(__package__ or "tvm.host") / "kernels" / file).read_text("utf-8")


# Library entries a kernel may call with T.call_extern: name -> (file, #defines before it).
LIBRARY: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "tvm_host_gemm_f32": ("gemm.c", (("TVM_GEMM_T", "float"), ("TVM_GEMM_SFX", "f32"))),
    "tvm_host_gemm_f64": ("gemm.c", (("TVM_GEMM_T", "double"), ("TVM_GEMM_SFX", "f64"))),
}


def _math(cg: CodegenCStyle, name: str) -> str:
    cg.add_helper("tvm_host_math", kernel_source("math.c").strip())
    return name


def _rule_expf(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    return f"{_math(cg, 'tvm_expf')}({args[0]})"


_HOST_TEMPLATES: dict[str, OpTemplate] = {
    **CodegenCStyle.op_templates,
    "tirx.exp": {"float32": _rule_expf, "float64": "exp({0})"},
    "tirx.sigmoid": {"float32": lambda cg, call, args: f"(1.0f / (1.0f + {_rule_expf(cg, call, [f'-({args[0]})'])}))",
                     "float64": "(1.0 / (1.0 + exp(-({0}))))"},
}


class HostCodegen(CodegenCStyle):
    """C for the host: OpenMP parallel loops, serial thread loops, status-returning entries."""

    target_kind = "c"
    function_prefix = "TVM_EXPORT "
    restrict_keyword = "restrict"
    unroll_pragma = "#pragma GCC unroll {n}"
    vectorize_pragma = "#pragma GCC ivdep"
    includes = ("stdint.h", "stdbool.h", "stddef.h", "stdio.h", "stdlib.h", "string.h", "math.h")
    op_templates = _HOST_TEMPLATES
    # A CPU thread's stack is a few MB (and an OpenMP worker's may be less): every allocation,
    # `local` ones included, above max_stack_bytes goes to the heap (docs/decisions.md, issue 17).
    stack_scopes = frozenset()
    max_stack_bytes = 64 * 1024

    def __init__(self, target: Any = None, *, openmp: bool = False, float16: bool = False,
                 num_threads: int | None = None) -> None:
        super().__init__(target)
        self.openmp = openmp
        self.num_threads = num_threads
        self.half_type = "_Float16" if float16 else None
        self.uses_openmp = False
        self._par_labels: list[list[Any]] = []

    def preamble_lines(self) -> list[str]:
        return [*super().preamble_lines(), "", _PREAMBLE]

    def print_function_body(self, func: PrimFunc) -> None:
        # Alignment the IR declares (T.Buffer(..., align=64)) is checked once at entry, then
        # promised to the compiler (aligned vector loads and stores).
        for p in func.params:
            buf = func.buffer_map.get(p)
            if buf is None or buf.align <= buf.dtype.bytes or buf.align & (buf.align - 1):
                continue
            ptr, n = self.buffer_ptr(buf), buf.align
            msg = (f"argument '{buf.name}' is not aligned to {n} bytes "
                   f"(its buffer declares align={n}); pass an array allocated with that alignment")
            self.emit(f"if (((uintptr_t){ptr} & {n - 1}u) != 0) {{")
            self.emit(f"  return tvm_fail({self.c_string(msg)});")
            self.emit("}")
            ctype = self.storage_type(buf.dtype)
            self.emit(f"{ptr} = ({ctype}*)__builtin_assume_aligned({ptr}, {n});")
        super().print_function_body(func)

    def add_function(self, func: PrimFunc, name: str | None = None) -> FunctionInfo:
        info = super().add_function(func, name)
        if not info.is_kernel:
            self._chunks.append(self._packed_entry(info))
        return info

    def _packed_entry(self, info: FunctionInfo) -> str:
        """``<symbol>__tvm_packed(args)``: the function with its parameters read from an array."""
        args = []
        for k, p in enumerate(info.params):
            if p.kind == "buffer":
                args.append(f"({self.storage_type(DataType(p.dtype))}*)args[{k}].p")
            elif p.kind == "handle":
                args.append(f"args[{k}].p")
            elif p.kind == "ret":
                args.append(f"({self.c_type(DataType(p.dtype))}*)args[{k}].p")
            else:
                dt = DataType(p.dtype)
                field = "f" if dt.is_float or dt.code == "bfloat" else "i"
                ctype = self.param_decl(p).rsplit(" ", 1)[0]
                args.append(f"({ctype})args[{k}].{field}")
        call = f"{info.symbol}({', '.join(args)})"
        return (f"{self.function_prefix}int32_t {info.symbol}{PACKED_SUFFIX}"
                f"(const TVMHostValue* args) {{\n  {'(void)args; ' if not args else ''}"
                f"return {call};\n}}")

    # -- values returned with T.ret ----------------------------------------------------------
    def _collect_params(self, func: PrimFunc) -> list[ParamInfo]:
        params = super()._collect_params(func)
        ret = return_type(func)
        if ret is not None:
            if str(ret) not in RETURN_TYPES:
                raise CodegenError(f"function {func.name}: T.ret returns a {ret} value; the host "
                                   f"target returns {', '.join(RETURN_TYPES)} (cast the value)")
            params.append(ParamInfo("ret", self._fresh_internal("tvm_ret"), "ret", str(ret)))
        return params

    def print_return(self, value: E.PrimExpr) -> None:
        slot = self._cur_info.ret
        if slot is None:
            super().print_return(value)
            return
        if self._par_labels:
            raise CodegenError(f"function {self._cur_info.name}: T.ret inside a parallel loop "
                               "(its iterations run in other threads); return after the loop")
        text = self.print_expr(value)
        self.emit(f"*{slot.c_name} = ({self.c_type(DataType(slot.dtype))})({text});")
        self.emit("return 0;")

    def param_decl(self, p: ParamInfo) -> str:
        if p.kind == "ret":
            return f"{self.c_type(DataType(p.dtype))}* {p.c_name}"
        # ctypes has no half type: 16-bit float scalars cross the boundary as float.
        if p.kind == "scalar" and DataType(p.dtype).is_float and DataType(p.dtype).bits == 16:
            return f"float {p.c_name}"
        return super().param_decl(p)

    def expr_Max(self, e: E.Max) -> str:
        return self._minmax(e, "max") if e.dtype.is_float else super().expr_Max(e)

    def expr_Min(self, e: E.Min) -> str:
        return self._minmax(e, "min") if e.dtype.is_float else super().expr_Min(e)

    def _minmax(self, e: E.BinaryOp, what: str) -> str:
        fns = {"float32": _math(self, f"tvm_f{what}f") + "({0}, {1})",
               "float64": f"tvm_f{what}({{0}}, {{1}})"}
        return self._float_call(e, fns)

    def expr_Call(self, call: E.Call) -> str:
        if call.op.name == "tirx.call_extern" and isinstance(call.args[1], E.StringImm):
            entry = LIBRARY.get(call.args[1].value)
            if entry is not None:
                self._use_library(call.args[1].value, *entry)
        return super().expr_Call(call)

    def _threads_helper(self) -> str:
        """``tvm_host_threads``: OpenMP's thread count less the CPUs other programs keep busy
        (``kernels/threads.c``)."""
        return self.add_helper("tvm_host_threads", kernel_source("threads.c").strip())

    def _use_library(self, name: str, file: str, defines: tuple[tuple[str, str], ...]) -> None:
        if name in self._helpers:
            return
        if self.openmp:
            self._threads_helper()
        for dt in ("float16", "bfloat16"):  # the library reads and writes 16-bit floats as bits
            self._need_emulation(DataType(dt))
        head = "\n".join(f"#define {k} {v}" for k, v in defines)
        tail = "\n".join(f"#undef {k}" for k, _ in defines)
        self.add_helper(name, f"{head}\n{kernel_source(file).strip()}\n{tail}")
        # the library parallelises with OpenMP where the compiler has it (else runs serially)
        self.uses_openmp = self.uses_openmp or self.openmp

    # -- loops ------------------------------------------------------------------------------------
    def print_parallel_for(self, loop: S.For) -> None:
        if not self.openmp or self._par_labels:
            self.print_serial_for(loop)  # nested parallel loops run serially inside the outer one
            return
        self.uses_openmp = True
        label, msg = self._fresh_internal("tvm_par_end"), self._fresh_internal("tvm_par_error")
        decl_at = len(self._lines)
        clause = (f" num_threads({self.num_threads})" if self.num_threads
                  else f" num_threads({self._threads_helper()}())")
        self.emit(f"#pragma omp parallel for schedule(static){clause}")
        state = [label, msg, False]  # the last item: an assert inside needs the error exit
        self._par_labels.append(state)
        try:
            v = loop.loop_var
            if isinstance(loop.min, E.IntImm) and loop.min.value >= 0:
                self._nonneg_vars.add(id(v))
            name, ctype = self.var_name(v), self.c_type(v.dtype)
            lo = self.print_expr(loop.min)
            hi = self.print_expr(loop.extent if _is_zero(loop.min) else loop.min + loop.extent)
            self.emit(f"for ({ctype} {name} = {lo}; {name} < {hi}; ++{name}) {{")
            # GCC outlines the loop body into a function that gets its iteration range from
            # OpenMP at run time, so it no longer knows the index is in range: with -fwrapv,
            # index arithmetic might wrap and the inner loops stay scalar (a tiled matmul ran
            # 12x slower than its serial form). Restate the range for the optimizer.
            # Only for bounds the body cannot change (no loads, no calls): they are evaluated
            # again at every iteration here, and a false claim would be undefined behaviour.
            if _invariant(loop.min) and _invariant(loop.extent):
                self._indent += 1
                self.emit(f"if ({name} < {lo} || {name} >= {hi}) __builtin_unreachable();")
                self._indent -= 1
            self.print_block(loop.body)
            if state[2]:
                self.emit(f"{label}: ;")
            self.emit("}")
        finally:
            self._par_labels.pop()
        if state[2]:
            self._lines.insert(decl_at, "  " * self._indent + f"const char* {msg} = NULL;")
            self.emit(f"if ({msg} != NULL) return tvm_fail({msg});")

    def print_thread_binding(self, loop: S.For) -> None:
        # On the CPU a kernel-form index is a loop: CTAs in parallel, threads one after another.
        tag = loop.thread_tag or ""
        if tag.startswith("blockIdx"):
            self.print_parallel_for(loop)
        else:
            self.print_serial_for(loop)

    def assert_fail_lines(self, message: str) -> list[str]:
        if not self._par_labels:
            return super().assert_fail_lines(message)
        # No return from inside an OpenMP loop: record the message and skip the iteration.
        state = self._par_labels[-1]
        state[2] = True
        label, msg = state[0], state[1]
        return ["#pragma omp critical(tvm_error)", f"{{ {msg} = {self.c_string(message)}; }}",
                f"goto {label};"]

    # -- memory -----------------------------------------------------------------------------------
    def print_heap_alloc(self, buffer: Buffer, name: str, ctype: str) -> None:
        nbytes = self.alloc_bytes(buffer, name)  # overflow-checked
        self.emit(f"{ctype}* {name} = ({ctype}*)__builtin_assume_aligned("
                  f"tvm_alloc({nbytes}), 64);")
        self.emit(f"if ({name} == NULL) {{")
        self._indent += 1
        for line in self.assert_fail_lines(f"out of memory allocating buffer {buffer.name}"):
            self.emit(line)
        self._indent -= 1
        self.emit("}")
        self._scopes[-1].append(f"free({name});")


def generate_c(mod: IRModule | PrimFunc, target: Any = None, *, openmp: bool = False,
               float16: bool = False, num_threads: int | None = None
               ) -> tuple[str, list[FunctionInfo], bool]:
    """(C source, function signatures, whether OpenMP is used) for ``mod``."""
    cg = HostCodegen(target, openmp=openmp, float16=float16, num_threads=num_threads)
    source = cg.generate(mod)
    return source, cg.functions, cg.uses_openmp


#: the types a host function may return with T.ret (those ctypes reads back)
RETURN_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float32", "float64")


def return_type(func: PrimFunc) -> DataType | None:
    """What ``func`` returns: its declared ``ret_type``, else the type of its first ``T.ret``
    value (None: nothing). A ``T.ret`` of another type than the declared one is an error."""
    rets: list[E.Call] = []
    post_order_visit(func.body, lambda n: rets.append(n) if isinstance(n, E.Call)
                     and n.op.name == "tirx.ret" else None)
    declared = func.ret_type
    if declared is None:
        return rets[0].args[0].dtype if rets else None
    for call in rets:
        got = call.args[0].dtype
        if got != declared and not (_is_const(call.args[0]) and got.code == declared.code):
            with located(call.span):  # at the T.ret line
                raise CodegenError(f"function {func.name} returns {declared} (its `-> "
                                   f"T.{declared}`) but T.ret gets a {got} value `{call.args[0]}`; cast it "
                                   f"with T.Cast(\"{declared}\", ...)")
    return declared


def _is_const(e: E.PrimExpr) -> bool:
    return isinstance(e, (E.IntImm, E.FloatImm))


def _invariant(e: E.PrimExpr) -> bool:
    """True when ``e`` reads no memory and calls nothing (its value cannot change in a loop)."""
    found: list[Any] = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, (E.BufferLoad, E.Call))
                     else None)
    return not found


def _is_zero(e: E.PrimExpr) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0

