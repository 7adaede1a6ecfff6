"""The host-side builtins of a kernel's launch (op ``tirx.<name>``): stack-allocated values,
packed calls, and the values the host derives from an array argument at launch
(:class:`HostDerived`, a TMA tensor map in CUDA). Their ops are registered with the others in
:mod:`tvm.tirx.op`, which re-exports everything here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .._registry import Registry
from ..ir import expr as E
from ..ir.op import Op

TENSOR_MAP_SCOPE = "grid_constant"  # ptr_scope of T.TensorMap / T.handle("tensormap") vars


def tvm_stack_alloca(dtype_str: str, num: Any) -> E.Call:
    """``T.tvm_stack_alloca("tensormap", 1)``: ``num`` values of ``dtype_str`` on the host's
    stack (a handle). The seed fills a tensor map so and passes it to a kernel; here the one
    use that lowers is that one (see :data:`HOST_ENCODERS`)."""
    if not isinstance(dtype_str, str):
        raise TypeError(f"T.tvm_stack_alloca takes the element type as a string, got {dtype_str!r}")
    return Op.get("tirx.tvm_stack_alloca")(E.StringImm(dtype_str), E.convert(num))


def call_packed(name: str, *args: Any) -> E.Call:
    """``T.call_packed("name", *args)``: a call of the packed function ``name`` on the host.
    Only the packed functions a backend lowers (:data:`HOST_ENCODERS`) compile."""
    if not isinstance(name, str):
        raise TypeError(f"T.call_packed takes the function's name first, got {name!r}")
    return Op.get("tirx.call_packed")(E.StringImm(name), *args)


# The packed functions the host part of a kernel may call to fill a value a kernel takes
# (``map = T.tvm_stack_alloca(kind, 1)`` + ``T.call_packed(name, map, ...)``): name -> the
# function that checks the call's arguments and returns the ``tirx.host_derived`` call standing
# for the value; it gets the arguments after ``map`` and the function's buffers by data var.
# Backends register theirs (CUDA: ``runtime.cuTensorMapEncodeTiled``).
HOST_ENCODERS: Registry[str, Callable[[Sequence[Any], dict[Any, Any]], E.Call]] = Registry(
    "host encoder")


class HostDerived(NamedTuple):
    """A kernel argument the host computes at launch from one of the function's array
    arguments (op ``tirx.host_derived``): CUDA's TMA tensor map of a global buffer is one.

    In device code the call stands for the value; ``SplitHostDevice`` makes each distinct one a
    kernel parameter (a handle of ``ptr_scope``), the host's launch passes the call, and the
    launch plan records it as ``("derived", i, kind, shape, params)`` for the backend's runtime,
    which computes it from the i-th argument (and may reuse it while that array is unchanged).

    ``kind`` names the computation (``"cuda.tensor_map"``), ``data`` is the array's data
    variable, ``shape`` the buffer shape the code indexes it with (checked against the
    parameter's), ``params`` constants the backend reads (ints and strings).
    """

    kind: str
    ptr_scope: str
    data: E.Var
    shape: tuple[E.PrimExpr, ...]
    params: tuple[int | str, ...]

    def call(self) -> E.Call:
        """The ``tirx.host_derived`` call of this value."""
        consts = [E.StringImm(p) if isinstance(p, str) else E.IntImm("int64", p)
                  for p in self.params]
        return Op.get("tirx.host_derived")(E.StringImm(self.kind), E.StringImm(self.ptr_scope),
                     self.data, E.IntImm("int32", len(self.shape)), *self.shape, *consts)

    @staticmethod
    def of(call: Any) -> HostDerived | None:
        """The value a ``tirx.host_derived`` call stands for (None for any other node)."""
        if not (isinstance(call, E.Call) and call.op.name == "tirx.host_derived"):
            return None
        kind, scope, data, ndim = call.args[:4]
        rank = int(ndim.value)
        params = tuple(a.value for a in call.args[4 + rank:])
        return HostDerived(str(kind.value), str(scope.value), data,
                           tuple(call.args[4:4 + rank]), params)

    def key(self) -> tuple[Any, ...]:
        """Equal for two calls that stand for the same value."""
        return (self.kind, self.ptr_scope, id(self.data), tuple(map(str, self.shape)),
                self.params)


def host_derived(kind: str, ptr_scope: str, buffer: Any, params: Sequence[int | str]) -> E.Call:
    """``tirx.host_derived``: the kernel argument of kind ``kind`` that the host computes at
    launch from the array argument behind ``buffer`` (:class:`HostDerived`)."""
    return HostDerived(kind, ptr_scope, buffer.data, tuple(buffer.shape), tuple(params)).call()
