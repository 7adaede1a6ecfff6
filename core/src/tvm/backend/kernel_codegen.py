"""What the GPU kernels of CUDA-style code (CUDA C++, HIP) hold, for their codegens.

:class:`~tvm.codegen.c_style.CudaStyleCodegen` is the CUDA-style data (keywords, thread
indices, barriers); :class:`KernelCodegen` adds the kernel's memory and its failure, which the
CUDA and ROCm backends printed alike: the one dynamic shared memory array (``extern __shared__``,
laid out per kernel by ``dyn_smem_layout`` and as aligned as its most aligned buffer), each
``shared.dyn`` buffer a typed pointer into it, a constant-size buffer of a stack scope an array
of the kernel at least ``alloc_alignment``-aligned, a failed assert a trap (``trap``), and the
kernel attributes (``__launch_bounds__``, ...) between the return type and the name.

A backend sets ``trap`` and overrides :meth:`kernel_attributes` and :meth:`print_other_alloc`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..codegen.c_style import CudaStyleCodegen, FunctionInfo
from ..error import TVMError
from ..ir.buffer import Buffer, const_numel
from ..ir.function import PrimFunc
from ..tirx.transform import dyn_smem_layout

__all__ = ["DYN_SMEM", "DYN_SMEM_MIN_ALIGN", "KernelCodegen"]

#: the name of a kernel's dynamic shared memory array
DYN_SMEM = "tvm_dyn_smem"
#: the least alignment of that array, bytes (vector accesses rely on it)
DYN_SMEM_MIN_ALIGN = 16


class KernelCodegen(CudaStyleCodegen):
    """CUDA-style kernels with their dynamic shared memory, kernel arrays and traps."""

    #: the statement that stops the kernel on a failed assert
    trap: ClassVar[str] = "__trap()"

    def __init__(self, target: Any = None) -> None:
        super().__init__(target)
        self._func: PrimFunc | None = None
        self._dyn_offsets: dict[int, int] = {}
        self._dyn_align = DYN_SMEM_MIN_ALIGN
        self._dyn_declared = False

    def add_function(self, func: PrimFunc, name: str | None = None) -> FunctionInfo:
        self._func = func
        self._dyn_declared = False
        placed, _ = dyn_smem_layout(func.body, self.target)  # big static tiles spill there
        self._dyn_offsets = {id(buf): off for buf, off in placed}
        # The base must be as aligned as the most aligned buffer: the offsets only keep the
        # alignment the base has (a 128-byte TMA box at offset 128 of a 16-aligned base is not).
        self._dyn_align = max([DYN_SMEM_MIN_ALIGN, *(buf.align for buf, _ in placed)])
        return super().add_function(func, name)

    # -- kernel header --------------------------------------------------------------------------
    def function_header(self, info: FunctionInfo) -> str:
        header = super().function_header(info)
        if not info.is_kernel or self._func is None:
            return header
        attrs = self.kernel_attributes(info, self._func)
        if not attrs:
            return header
        prefix = f"{self.kernel_prefix}{self.kernel_return_type} "
        return prefix + attrs + " " + header[len(prefix):]

    def kernel_attributes(self, info: FunctionInfo, func: PrimFunc) -> str:
        """The attributes of kernel ``func`` (``__launch_bounds__(...)``, ...), or ``""``."""
        return ""

    # -- statements -----------------------------------------------------------------------------
    def assert_fail_lines(self, message: str) -> list[str]:
        text = message.replace("*/", "* /").replace("\n", " ")
        return [f"{self.trap};  /* {text} */"]

    def print_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        if buffer.scope == "shared.dyn" or id(buffer) in self._dyn_offsets:
            self._print_dyn_alloc(buffer)
            return
        n = const_numel(buffer)
        if n is None or buffer.scope not in self.stack_scopes:
            self.print_other_alloc(buffer, annotations)
            return
        # An array of the kernel: at least alloc_alignment-aligned (vector accesses rely on
        # it), more when the buffer asks (``align=128`` for TMA boxes and swizzled tiles).
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        qual = self.storage_qualifiers.get(buffer.scope, "")
        align = self.align_attribute.format(n=max(self.alloc_alignment, buffer.align))
        self.emit(f"{qual}{self.storage_type(buffer.dtype)} {name}[{max(n, 1)}] {align};")

    def print_other_alloc(self, buffer: Buffer, annotations: Mapping[str, Any]) -> None:
        """A buffer of symbolic size or of a scope that is not the kernel's stack: core's C
        allocation (a small array, else :meth:`print_heap_alloc`'s error)."""
        super().print_alloc(buffer, annotations)

    def _print_dyn_alloc(self, buffer: Buffer) -> None:
        offset = self._dyn_offsets.get(id(buffer))
        if offset is None:
            raise TVMError(f"dynamic shared buffer {buffer.name} has no place in the kernel's "
                           "dynamic shared memory layout")
        if not self._dyn_declared:
            self.emit(f"extern __shared__ __attribute__((aligned({self._dyn_align}))) "
                      f"unsigned char {DYN_SMEM}[];")
            self._dyn_declared = True
        name = self.var_name(buffer.data, buffer.name)
        self._buffer_ptrs[id(buffer)] = name
        ctype = self.storage_type(buffer.dtype)
        self.emit(f"{ctype}* {name} = ({ctype}*)({DYN_SMEM} + {offset});")
