"""NVSHMEM device calls: ``T.nvshmem.my_pe``, ``putmem_nbi`` (``.warp``, ``.block``),
``putmem_signal_nbi``, ``signal_op``, ``wait_until``, ``quiet``, ``fence``, ``barrier_all``, ...

Only a kernel that uses one of these ops asks for ``nvshmem.h``/``nvshmemx.h``, and only such a
kernel takes the NVSHMEM path: ``tvm.compile`` hands the source to
:func:`tvm_backend_cuda.nvshmem.compile_auto`, which compiles it with NVRTC as relocatable device
code against the headers of the ``nvidia-nvshmem-cu13`` wheel and links it with the wheel's
``libnvshmem_device.a`` (nvJitLink; no toolkit, no driver), and the executable loads the cubin as
an :class:`~tvm_backend_cuda.nvshmem.NvshmemModule`, bound to this process's
:class:`~tvm_backend_cuda.nvshmem.NvshmemContext` (initialise one before the first call). Without
the wheel, compiling such a kernel raises ``BackendNotInstalledError`` naming it. See
``docs/nvshmem.md``."""

from __future__ import annotations

from tvm.ir.expr import Call

from ._base import Emit, fail, ptr
from ._base import str_arg as S
from ._spec import DTypeRule, intrin

_SIG = {"set": "NVSHMEM_SIGNAL_SET", "add": "NVSHMEM_SIGNAL_ADD"}
_CMP = {
    "eq": "NVSHMEM_CMP_EQ",
    "ne": "NVSHMEM_CMP_NE",
    "gt": "NVSHMEM_CMP_GT",
    "ge": "NVSHMEM_CMP_GE",
    "lt": "NVSHMEM_CMP_LT",
    "le": "NVSHMEM_CMP_LE",
}
# C type of wait_until -> the TYPENAME in nvshmem_TYPENAME_wait_until
_TYPENAME = {
    "uint64_t": "uint64",
    "int64_t": "int64",
    "uint32_t": "uint32",
    "int32_t": "int32",
    "int": "int",
    "long": "long",
    "long long": "longlong",
    "unsigned int": "uint",
    "unsigned long long": "ulonglong",
    "short": "short",
    "size_t": "size",
    "unsigned long": "ulong",
    "unsigned short": "ushort",
    "ptrdiff_t": "ptrdiff",
}


SIG_OPS = {"sig_op": ("set", "add")}


def _headers(emit: Emit) -> None:
    emit.ctx.need_header("nvshmem.h")
    emit.ctx.need_header("nvshmemx.h")


def _plain(path: str, fn: str, dtype: DTypeRule = "void") -> None:
    def rule(call: Call, emit: Emit) -> str:
        _headers(emit)
        return f"{fn}()"

    intrin(path, dtype=dtype)(rule)


_plain("nvshmem.my_pe", "nvshmem_my_pe", dtype="int32")
_plain("nvshmem.n_pes", "nvshmem_n_pes", dtype="int32")
_plain("nvshmem.quiet", "nvshmem_quiet")
_plain("nvshmem.fence", "nvshmem_fence")
_plain("nvshmem.barrier_all", "nvshmem_barrier_all")


def _sig(call: Call, i: int) -> str:
    op = S(call, i)
    if op not in _SIG:
        raise fail(call, f"sig_op must be one of {sorted(_SIG)}, got {op!r}")
    return _SIG[op]


@intrin("nvshmem.signal_op", "sig_addr, signal, sig_op, pe", choices=SIG_OPS)
def _signal_op(call: Call, emit: Emit) -> str:
    _headers(emit)
    addr, signal, _, pe = call.args
    return (
        f"nvshmemx_signal_op({ptr(emit, addr, 'uint64_t')}, (uint64_t)({emit(signal)}), "
        f"{_sig(call, 2)}, {emit(pe)})"
    )


@intrin(
    "nvshmem.wait_until",
    "ivar, cmp, cmp_value, type='uint64_t'",
    choices={"cmp": ("eq", "ne", "gt", "ge", "lt", "le")},
)
def _wait_until(call: Call, emit: Emit) -> str:
    _headers(emit)
    ivar, _, value, _ = call.args
    ctype, cmp = S(call, 3), S(call, 1)
    if ctype not in _TYPENAME or cmp not in _CMP:
        raise fail(call, f"no nvshmem wait_until for type {ctype!r} and comparison {cmp!r}")
    return (
        f"nvshmem_{_TYPENAME[ctype]}_wait_until({ptr(emit, ivar, ctype)}, {_CMP[cmp]}, "
        f"({ctype})({emit(value)}))"
    )


def _mem(path: str, fn: str) -> None:
    def rule(call: Call, emit: Emit) -> str:
        _headers(emit)
        dst, src, n, pe = call.args
        return f"{fn}((void*)({emit(dst)}), (const void*)({emit(src)}), (size_t)({emit(n)}), {emit(pe)})"

    intrin(path, "dst, src, nelems, pe")(rule)


def _mem_signal(path: str, fn: str) -> None:
    def rule(call: Call, emit: Emit) -> str:
        _headers(emit)
        dst, src, n, sig, signal, _, pe = call.args
        return (
            f"{fn}((void*)({emit(dst)}), (const void*)({emit(src)}), (size_t)({emit(n)}), "
            f"{ptr(emit, sig, 'uint64_t')}, (uint64_t)({emit(signal)}), {_sig(call, 5)}, "
            f"{emit(pe)})"
        )

    intrin(path, "dst, src, nelems, sig_addr, signal, sig_op, pe", choices=SIG_OPS)(rule)


for _what in ("getmem_nbi", "putmem_nbi"):
    _mem(f"nvshmem.{_what}", f"nvshmem_{_what}")
    _mem(f"nvshmem.{_what}.warp", f"nvshmemx_{_what}_warp")
    _mem(f"nvshmem.{_what}.block", f"nvshmemx_{_what}_block")
_mem_signal("nvshmem.putmem_signal_nbi", "nvshmem_putmem_signal_nbi")
_mem_signal("nvshmem.putmem_signal_nbi.warp", "nvshmemx_putmem_signal_nbi_warp")
_mem_signal("nvshmem.putmem_signal_nbi.block", "nvshmemx_putmem_signal_nbi_block")
