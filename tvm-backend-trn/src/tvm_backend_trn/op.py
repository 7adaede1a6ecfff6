"""The NKI intrinsics: ops ``tirx.nki.<name>`` (category ``device_intrin``, namespace ``nki``)
and their builders ``nki_<name>``, with the seed's argument lists and defaults.

Arguments are buffers or buffer regions (the tiles an instruction reads and writes), opcode
strings (``"relu"``, ``"add"``, ``"sum"``) and scalars. Every op returns nothing (``void``).
The seed's spelling of a whole tile, its first element ``A[0]`` (``A[0, 0]``, ...), stands for
the buffer ``A`` and is built (and printed) as ``A``; an element elsewhere is an error, since an
instruction reads a tile, not one element. The seed's flat op names (``tirx.nki_load``) are
aliases of these ops.
"""

from __future__ import annotations

from typing import Any

from tvm.ir import BufferLoad, IntImm
from tvm.ir.op import CallEffect, Op

__all__ = [
    "NKI_OPS",
    "nki_activation",
    "nki_activation_reduce",
    "nki_affine_select",
    "nki_identity",
    "nki_load",
    "nki_matmul",
    "nki_memset",
    "nki_reciprocal",
    "nki_scalar_tensor_scalar",
    "nki_scalar_tensor_tensor",
    "nki_store",
    "nki_tensor_copy",
    "nki_tensorreduce",
    "nki_tensorscalar",
    "nki_tensorscalar_reduce",
    "nki_tensortensor",
    "register_ops",
]

# name -> parameter names (the signature recorded on the op)
NKI_OPS: dict[str, tuple[str, ...]] = {
    "load": ("res", "data"),
    "store": ("res", "data"),
    "tensor_copy": ("res", "data"),
    "matmul": ("res", "lhs", "rhs", "accum"),
    "activation": ("result", "data", "opcode", "bias", "scale"),
    "activation_reduce": ("reduce_res", "act_res", "data", "opcode", "reduce_opcode", "bias",
                          "scale"),
    "reciprocal": ("result", "data"),
    "tensorreduce": ("result", "data", "opcode", "negate", "*axes"),
    "tensortensor": ("result", "operand0", "operand1", "opcode"),
    "tensorscalar": ("result", "operand0", "operand1", "opcode", "reverse"),
    "tensorscalar_reduce": ("reduce_res", "tensorscalar_res", "operand0", "operand1", "opcode",
                            "reduce_opcode", "reverse"),
    "scalar_tensor_tensor": ("result", "data", "operand0", "operand1", "opcode0", "opcode1",
                             "reverse0", "reverse1"),
    "scalar_tensor_scalar": ("result", "data", "operand0", "operand1", "opcode0", "opcode1",
                             "reverse0", "reverse1"),
    "memset": ("result", "value"),
    "identity": ("result", "size"),
    "affine_select": ("result", "pred", "true_value", "false_value"),
}


def register_ops() -> None:
    """Register the 16 NKI ops (called by the ``tvm_register_ops`` hook, once per load)."""
    for name, params in NKI_OPS.items():
        Op.register(f"tirx.nki.{name}", category="device_intrin", namespace="nki",
                    printer_name=f"nki.{name}", dtype="void", effect=CallEffect.UPDATE_STATE,
                    signature=params)
        Op.register_alias(f"tirx.nki_{name}", f"tirx.nki.{name}")


def _call(name: str, *args: Any) -> Any:
    return Op.get(f"tirx.nki.{name}")(*(_tile(name, a) for a in args))


def _tile(op: str, arg: Any) -> Any:
    """A whole buffer for the seed's ``A[0]``; every other argument as it is."""
    if not isinstance(arg, BufferLoad):
        return arg
    if all(isinstance(i, IntImm) and i.value == 0 for i in arg.indices):
        return arg.buffer
    name = arg.buffer.name
    where = ", ".join(str(i) for i in arg.indices)
    region = ", ".join(f"{i.value}:{i.value + 1}" if isinstance(i, IntImm) else f"{i}:{i} + 1"
                       for i in arg.indices)
    raise TypeError(
        f"T.nki.{op}: {name}[{where}] is one element, but NKI instructions take tiles: pass the "
        f"buffer ({name}) or a region of it ({name}[{region}] for that one element); only the "
        f"first element, {name}[{', '.join('0' * len(arg.indices))}], stands for the whole "
        f"buffer")


def _named(name: str) -> Any:
    """Mark a builder with the op it builds (the script printer finds ``T.nki.<name>`` by it)."""

    def mark(fn: Any) -> Any:
        fn.__tir_op_name__ = f"tirx.nki.{name}"
        return fn

    return mark


@_named("load")
def nki_load(res: Any, data: Any) -> Any:
    """HBM -> SBUF: ``res = data``."""
    return _call("load", res, data)


@_named("store")
def nki_store(res: Any, data: Any) -> Any:
    """SBUF -> HBM: ``res = data``."""
    return _call("store", res, data)


@_named("tensor_copy")
def nki_tensor_copy(res: Any, data: Any) -> Any:
    """On-chip copy with a cast (PSUM -> SBUF eviction)."""
    return _call("tensor_copy", res, data)


@_named("matmul")
def nki_matmul(res: Any, lhs: Any, rhs: Any, accum: Any = True) -> Any:
    """``res (+)= lhs.T @ rhs``: ``lhs[K, M]`` and ``rhs[K, N]`` contract over partitions."""
    return _call("matmul", res, lhs, rhs, accum)


@_named("activation")
def nki_activation(result: Any, data: Any, opcode: Any, bias: Any = 0.0,
                   scale: Any = 1.0) -> Any:
    """``result = opcode(data * scale + bias)``."""
    return _call("activation", result, data, opcode, bias, scale)


@_named("reciprocal")
def nki_reciprocal(result: Any, data: Any) -> Any:
    return _call("reciprocal", result, data)


@_named("tensorreduce")
def nki_tensorreduce(result: Any, data: Any, opcode: Any, negate: Any, *axes: Any) -> Any:
    """``result = (-)reduce(opcode, data, axes)`` over free axes (logical dims of ``data``)."""
    return _call("tensorreduce", result, data, opcode, negate, *axes)


@_named("tensortensor")
def nki_tensortensor(result: Any, operand0: Any, operand1: Any, opcode: Any) -> Any:
    return _call("tensortensor", result, operand0, operand1, opcode)


@_named("tensorscalar")
def nki_tensorscalar(result: Any, operand0: Any, operand1: Any, opcode: Any,
                     reverse: Any = False) -> Any:
    """``result = operand0 opcode operand1`` with ``operand1`` a scalar or a ``[P, 1]`` column."""
    return _call("tensorscalar", result, operand0, operand1, opcode, reverse)


@_named("memset")
def nki_memset(result: Any, value: Any) -> Any:
    return _call("memset", result, value)


@_named("activation_reduce")
def nki_activation_reduce(reduce_res: Any, act_res: Any, data: Any, opcode: Any,
                          reduce_opcode: Any, bias: Any = 0.0, scale: Any = 1.0) -> Any:
    """``act_res = opcode(data * scale + bias)``; ``reduce_res = reduce(act_res)`` over free axes."""
    return _call("activation_reduce", reduce_res, act_res, data, opcode, reduce_opcode, bias,
                 scale)


@_named("tensorscalar_reduce")
def nki_tensorscalar_reduce(reduce_res: Any, tensorscalar_res: Any, operand0: Any, operand1: Any,
                            opcode: Any, reduce_opcode: Any, reverse: Any = False) -> Any:
    return _call("tensorscalar_reduce", reduce_res, tensorscalar_res, operand0, operand1, opcode,
                 reduce_opcode, reverse)


@_named("identity")
def nki_identity(result: Any, size: Any) -> Any:
    """Build a ``size x size`` identity matrix in ``result``."""
    return _call("identity", result, size)


@_named("scalar_tensor_tensor")
def nki_scalar_tensor_tensor(result: Any, data: Any, operand0: Any, operand1: Any, opcode0: Any,
                             opcode1: Any, reverse0: Any = False, reverse1: Any = False) -> Any:
    """``result = (data opcode0 operand0) opcode1 operand1``; operand1 is a tile."""
    return _call("scalar_tensor_tensor", result, data, operand0, operand1, opcode0, opcode1,
                 reverse0, reverse1)


@_named("scalar_tensor_scalar")
def nki_scalar_tensor_scalar(result: Any, data: Any, operand0: Any, operand1: Any, opcode0: Any,
                             opcode1: Any, reverse0: Any = False, reverse1: Any = False) -> Any:
    """``result = (data opcode0 operand0) opcode1 operand1``; both operands scalars/columns."""
    return _call("scalar_tensor_scalar", result, data, operand0, operand1, opcode0, opcode1,
                 reverse0, reverse1)


@_named("affine_select")
def nki_affine_select(result: Any, pred: Any, true_value: Any, false_value: Any) -> Any:
    """``result = pred ? true_value : false_value``; ``pred`` an affine condition of indices."""
    return _call("affine_select", result, pred, true_value, false_value)
