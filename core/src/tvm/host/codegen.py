"""C source for the host target ``c``, printed by the C-style codegen base.

Each PrimFunc becomes an exported ``int32_t <name>(T* restrict A, ..., int32_t n, ...)`` taking
its buffers as pointers and its scalars by value, followed by the symbolic extents the caller
derives from the arrays. It returns 0, or -1 after recording a message that
``tvm_c_get_last_error()`` returns (failed asserts, failed allocations).

Host specifics: parallel loops (and ``blockIdx.*`` loops of the kernel form) run through
``#pragma omp parallel for`` when the compiler has OpenMP; other thread-bound loops are serial
loops; vectorized loops carry ``#pragma GCC ivdep`` and vector expressions are printed lane by
lane; float16 is ``_Float16`` when the compiler supports it, else (like bfloat16) stored as
``uint16_t`` and computed in ``float``. Allocations of any scope up to 64 KiB are stack arrays;
larger or dynamic ones are heap blocks, freed at the end of their block.
"""

from __future__ import annotations

from typing import Any

from ..codegen.c_style import CodegenCStyle, FunctionInfo, ParamInfo
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.dtype import DataType
from ..ir.function import IRModule, PrimFunc

__all__ = ["ERROR_SYMBOL", "HostCodegen", "generate_c"]

ERROR_SYMBOL = "tvm_c_get_last_error"

_PREAMBLE = """\
#define TVM_EXPORT __attribute__((visibility("default")))

/* The message of the last failure in this thread; entry points return -1 after setting it. */
static _Thread_local char tvm_last_error[1024];

TVM_EXPORT const char* tvm_c_get_last_error(void) { return tvm_last_error; }

static int32_t tvm_fail(const char* message) {
  snprintf(tvm_last_error, sizeof(tvm_last_error), "%s", message);
  return -1;
}

static void* tvm_alloc(size_t nbytes) {
  size_t rounded = (nbytes + 63u) & ~(size_t)63u;
  return aligned_alloc(64, rounded ? rounded : 64u);
}"""


class HostCodegen(CodegenCStyle):
    """C for the host: OpenMP parallel loops, serial thread loops, status-returning entries."""

    target_kind = "c"
    function_prefix = "TVM_EXPORT "
    restrict_keyword = "restrict"
    unroll_pragma = "#pragma GCC unroll {n}"
    vectorize_pragma = "#pragma GCC ivdep"
    includes = ("stdint.h", "stdbool.h", "stddef.h", "stdio.h", "stdlib.h", "string.h", "math.h")
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

    def param_decl(self, p: ParamInfo) -> str:
        # ctypes has no half type: 16-bit float scalars cross the boundary as float.
        if p.kind == "scalar" and DataType(p.dtype).is_float and DataType(p.dtype).bits == 16:
            return f"float {p.c_name}"
        return super().param_decl(p)

    # -- loops ------------------------------------------------------------------------------------
    def print_parallel_for(self, loop: S.For) -> None:
        if not self.openmp or self._par_labels:
            self.print_serial_for(loop)  # nested parallel loops run serially inside the outer one
            return
        self.uses_openmp = True
        label, msg = self._fresh_internal("tvm_par_end"), self._fresh_internal("tvm_par_error")
        decl_at = len(self._lines)
        clause = f" num_threads({self.num_threads})" if self.num_threads else ""
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
            self.print_block(loop.body)
            if state[2]:
                self.emit(f"{label}: ;")
            self.emit("}")
        finally:
            self._par_labels.pop()
        if state[2]:
            self._lines.insert(decl_at, "  " * self._indent + f"const char* {msg} = NULL;")
            self.emit(f"if ({msg} != NULL) return tvm_fail({msg});")

    def _fresh_internal(self, base: str) -> str:
        name, i = base, 1
        while name in self._used:
            name = f"{base}_{i}"
            i += 1
        self._used.add(name)
        return name

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
        size = buffer.shape[0] if len(buffer.shape) == 1 else _product(buffer.shape)
        count = self.print_expr(size)
        self.emit(f"{ctype}* {name} = ({ctype}*)tvm_alloc((size_t)({count}) * sizeof({ctype}));")
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


def _is_zero(e: E.PrimExpr) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0


def _product(shape: list[E.PrimExpr]) -> E.PrimExpr:
    out = shape[0]
    for s in shape[1:]:
        out = out * s
    return out
