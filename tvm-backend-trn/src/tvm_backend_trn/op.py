"""The NKI intrinsics: ops ``tirx.nki.<name>`` (category ``device_intrin``, namespace ``nki``)
and their builders ``nki_<name>``, with the seed's argument lists and defaults.

Arguments are buffers or buffer regions (the tiles an instruction reads and writes), opcode
strings (``"relu"``, ``"add"``, ``"sum"``) and scalars. Every op returns nothing (``void``).
The seed's spelling of a whole tile, its first element ``A[0]`` (``A[0, 0]``, ...), stands for
the buffer ``A`` and is built (and printed) as ``A``; an element elsewhere is an error, since an
instruction reads a tile, not one element. The seed's flat op names (``tirx.nki_load``) are
aliases of these ops.

Each instruction is one declaration of the table ``INTRINSICS`` (core's
:class:`tvm.ir.intrin.IntrinTable`): the op, its builder here, its ``T.nki`` member
(``script.py`` derives the namespace from the table), its printed form and its codegen rule,
which for this backend is the name of the method of the NKI lowering (``codegen.py``) that
emits the instruction (``nki_<name>``).
"""

from __future__ import annotations

from typing import Any

from tvm.ir import BufferLoad, IntImm
from tvm.ir.intrin import IntrinTable

from .tags import KIND

__all__ = ["INTRINSICS", "NKI_OPS", "register_ops"]  # and the builders nki_<name> (below)

#: every NKI instruction; builders are the seed's ``nki_<name>``, flat op names their aliases
INTRINSICS = IntrinTable(KIND)


def _tile(path: str, arg: Any) -> Any:
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
        f"T.{path}: {name}[{where}] is one element, but NKI instructions take tiles: pass the "
        f"buffer ({name}) or a region of it ({name}[{region}] for that one element); only the "
        f"first element, {name}[{', '.join('0' * len(arg.indices))}], stands for the whole "
        f"buffer")


def _nki(name: str, params: str, doc: str = "") -> None:
    """``T.nki.<name>``: an instruction (void, ordered), emitted by ``_Lowering.nki_<name>``."""
    INTRINSICS.declare(f"nki.{name}", params, rule=f"nki_{name}", alias=True, convert=_tile,
                       doc=doc)


_nki("load", "res, data", "HBM -> SBUF: ``res = data``.")
_nki("store", "res, data", "SBUF -> HBM: ``res = data``.")
_nki("tensor_copy", "res, data", "On-chip copy with a cast (PSUM -> SBUF eviction).")
_nki("matmul", "res, lhs, rhs, accum=True",
     "``res (+)= lhs.T @ rhs``: ``lhs[K, M]`` and ``rhs[K, N]`` contract over partitions.")
_nki("activation", "result, data, opcode, bias=0.0, scale=1.0",
     "``result = opcode(data * scale + bias)``.")
_nki("activation_reduce",
     "reduce_res, act_res, data, opcode, reduce_opcode, bias=0.0, scale=1.0",
     "``act_res = opcode(data * scale + bias)``; ``reduce_res = reduce(act_res)`` over free "
     "axes.")
_nki("reciprocal", "result, data")
_nki("tensorreduce", "result, data, opcode, negate, *axes",
     "``result = (-)reduce(opcode, data, axes)`` over free axes (logical dims of ``data``).")
_nki("tensortensor", "result, operand0, operand1, opcode")
_nki("tensorscalar", "result, operand0, operand1, opcode, reverse=False",
     "``result = operand0 opcode operand1`` with ``operand1`` a scalar or a ``[P, 1]`` column.")
_nki("tensorscalar_reduce",
     "reduce_res, tensorscalar_res, operand0, operand1, opcode, reduce_opcode, reverse=False")
_nki("scalar_tensor_tensor",
     "result, data, operand0, operand1, opcode0, opcode1, reverse0=False, reverse1=False",
     "``result = (data opcode0 operand0) opcode1 operand1``; operand1 is a tile.")
_nki("scalar_tensor_scalar",
     "result, data, operand0, operand1, opcode0, opcode1, reverse0=False, reverse1=False",
     "``result = (data opcode0 operand0) opcode1 operand1``; both operands scalars/columns.")
_nki("memset", "result, value")
_nki("identity", "result, size", "Build a ``size x size`` identity matrix in ``result``.")
_nki("affine_select", "result, pred, true_value, false_value",
     "``result = pred ? true_value : false_value``; ``pred`` an affine condition of indices.")

# name -> parameter names (the signature recorded on the op)
NKI_OPS: dict[str, tuple[str, ...]] = {s.op_suffix: s.param_names for s in INTRINSICS.specs()}
__all__ += sorted(INTRINSICS.builders())


def register_ops() -> None:
    """Register the 16 NKI ops (called by the ``tvm_register_ops`` hook, once per load)."""
    INTRINSICS.register_ops()


# the builders (INTRINSICS.builders()) are this module's attributes too
__getattr__, __dir__ = INTRINSICS.module_hooks(globals())
