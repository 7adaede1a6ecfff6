"""The CUDA backend's script namespaces: ``T.cuda``, ``T.ptx`` (with its nested groups) and
``T.nvshmem``, built from the intrinsic declarations in ``intrinsics/``.

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

from collections.abc import Callable, Mapping
from typing import Any

from tvm.ir import Op

from .intrinsics import all_specs, all_sugar
from .intrinsics._spec import Builder

__all__ = [
    "CUDANamespace",
    "CallableIntrinNamespace",
    "IntrinNamespace",
    "Member",
    "NVSHMEMNamespace",
    "PTXNamespace",
]


class Member(Builder):
    """The script member of an intrinsic: its builder, falling back to the raw operand form.

    A ``dtype=`` keyword becomes the first argument when the spec says so (the seed's
    ``_dtype_forward``) and is dropped otherwise (its ``_op_wrapper``).
    """

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        spec = self.spec
        if not kwargs:  # an alternative form's printed form: T.<path>("<dtype>", *operands)
            call = spec.form_call(args)
            if call is not None:
                return call
        if "dtype" in kwargs:
            dtype = kwargs.pop("dtype")
            if spec.dtype_forward:
                args = (dtype, *args)
        if kwargs:
            return spec.call(*args, **kwargs)
        try:
            return spec.call(*args)
        except TypeError:  # the arguments do not bind: the raw operand list the printer wrote
            if not spec.fits(len(args)):
                raise
            return Op.get(spec.name)(*args)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self.spec.path.rsplit(".", 1)[-1]

    @property
    def __tir_op_name__(self) -> str | None:
        # an alternative form does not name its op: the op prints at its own path
        return None if self.spec.form_of else self.spec.name

    def __repr__(self) -> str:
        return f"<T.{self.spec.path}>"


class IntrinNamespace:
    """A group of ``T.<namespace>`` members (``T.ptx.tcgen05``)."""

    __tir_namespace__ = True

    def __init__(self, path: str, members: Mapping[str, Any]) -> None:
        self._path = path
        for name, value in members.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"<T.{self._path}>"


class CallableIntrinNamespace(IntrinNamespace):
    """A group that is an op too: ``T.ptx.mma(...)`` beside ``T.ptx.mma.sp(...)``."""

    def __init__(self, path: str, members: Mapping[str, Any], call: Callable[..., Any]) -> None:
        super().__init__(path, members)
        self._call = call
        self.__tir_op_name__ = getattr(call, "__tir_op_name__", "")
        self.__doc__ = call.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)


_LEAF = ""  # the key of a node's own member in the path tree


def _tree(namespace: str) -> dict[str, Any]:
    root: dict[str, Any] = {}
    entries: list[tuple[str, Any]] = [(s.path, Member(s)) for s in all_specs()]
    entries += [(s.path, s.fn) for s in all_sugar()]
    for path, value in entries:
        ns, *parts = path.split(".")
        if ns != namespace:
            continue
        node = root
        for part in parts:
            node = node.setdefault(part, {})
        node[_LEAF] = value
    return root


def _build(path: str, node: dict[str, Any]) -> Any:
    children = {k: _build(f"{path}.{k}", v) for k, v in node.items() if k != _LEAF}
    own = node.get(_LEAF)
    if not children:
        return own
    if own is None:
        return IntrinNamespace(path, children)
    return CallableIntrinNamespace(path, children, own)


def _members(namespace: str) -> dict[str, Any]:
    return {k: _build(f"{namespace}.{k}", v) for k, v in _tree(namespace).items()}


class PTXNamespace(IntrinNamespace):
    """``T.ptx``: PTX instructions, flat and in groups."""

    def __init__(self) -> None:
        super().__init__("ptx", _members("ptx"))


class CUDANamespace(IntrinNamespace):
    """``T.cuda``: CUDA C++ device functions and the backend's helpers."""

    def __init__(self) -> None:
        super().__init__("cuda", _members("cuda"))


class NVSHMEMNamespace(IntrinNamespace):
    """``T.nvshmem``: NVSHMEM device calls."""

    def __init__(self) -> None:
        super().__init__("nvshmem", _members("nvshmem"))

