"""The CUDA backend's script namespaces: ``T.cuda``, ``T.ptx`` (with its nested groups) and
``T.nvshmem``, built from the intrinsic declarations in ``intrinsics/`` (core's
:class:`tvm.ir.intrin.IntrinTable` makes the members, :class:`~tvm.ir.intrin.Member`).

Every declared path becomes a member (``ptx.tcgen05.wait.ld`` is ``T.ptx.tcgen05.wait.ld``); a
path that is also the prefix of others is a callable group (``T.ptx.mma(...)`` beside
``T.ptx.mma.sp(...)``). Members carry ``__tir_op_name__``, so registering a namespace gives
each op its attribute path as printer name. A member accepts the builder's own signature
(``T.ptx.tcgen05.ld(addr, r0, r1, shape="32x32b", num=2)``) and also the op's raw operand list,
which is what the printer writes (``T.ptx.tcgen05.ld(addr, 0, 0, "32x32b", 2, T.bool(False),
r0, r1)``): with no keyword arguments, arguments the builder cannot bind (a ``TypeError``) are
taken as raw operands when their count fits the op. A ``ValueError`` (a bad value) propagates.
The member of an op with an alternative operand form (``form_of=``) also takes that form's printed
form, the call's dtype then its operands: ``T.ptx.cp_async("float16", dst, 0, src, 8, 16)``.
"""

from __future__ import annotations

from typing import Any

from tvm.ir.intrin import CallableIntrinNamespace, IntrinNamespace, Member

from .intrinsics import TABLE

__all__ = [
    "CUDANamespace",
    "CallableIntrinNamespace",
    "IntrinNamespace",
    "Member",
    "NVSHMEMNamespace",
    "PTXNamespace",
]


def alloc_tcgen05_ldst_frag(instr_shape: str, tensor_shape: Any, dtype: str) -> Any:
    """``frag = T.alloc_tcgen05_ldst_frag("16x256b", (64, 32), "float32")``: the registers a
    warpgroup's ``tcgen05.ld``/``st`` of ``instr_shape`` fills, as a local buffer of
    ``tensor_shape`` laid out by :func:`~tvm_backend_cuda.layout.tcgen05_atom_layout` (each
    thread allocates its share); a tile copy between it and a ``tmem`` buffer uses that atom."""
    from tvm.script.tirx import alloc_local  # noqa: PLC0415 - tvm.script loads with the parser

    from .layout import tcgen05_atom_layout  # noqa: PLC0415 - the layouts load with the backend

    return alloc_local(tensor_shape, dtype,
                       layout=tcgen05_atom_layout(instr_shape, tensor_shape, dtype))


class PTXNamespace(IntrinNamespace):
    """``T.ptx``: PTX instructions, flat and in groups."""

    def __init__(self) -> None:
        super().__init__("ptx", TABLE.members("ptx"))


class CUDANamespace(IntrinNamespace):
    """``T.cuda``: CUDA C++ device functions and the backend's helpers."""

    def __init__(self) -> None:
        super().__init__("cuda", TABLE.members("cuda"))


class NVSHMEMNamespace(IntrinNamespace):
    """``T.nvshmem``: NVSHMEM device calls."""

    def __init__(self) -> None:
        super().__init__("nvshmem", TABLE.members("nvshmem"))
