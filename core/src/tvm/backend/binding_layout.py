"""How a shader kernel's parameters are bound: the part the Vulkan and WebGPU backends share.

A shader has no parameter list: each array parameter is a storage buffer at a binding, each
scalar a member of one struct (Vulkan's push constants, WebGPU's uniform). A backend's
``KernelLayout`` subclasses :class:`BindingLayout` with the sizes its struct needs; the layout
travels in the executable's metadata (:meth:`~BindingLayout.to_dict`), and the codegen prints
the declarations from it (:meth:`~BindingLayout.declarations`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from ..codegen.c_style import FunctionInfo
from ..ir.dtype import DataType

__all__ = ["BindingLayout"]

_Layout = TypeVar("_Layout", bound="BindingLayout")

#: (the parameter's name in the shader, its binding or offset, its element or value type) ->
#: a declaration
Declare = Callable[[str, int, str], str]


@dataclass
class BindingLayout:
    """One kernel's parameters, in parameter order: ``(kind, slot, dtype)``, where ``kind`` is
    ``"buffer"`` (``slot``: the binding) or the backend's scalar kind (``slot``: the offset in
    the struct). A subclass adds integer fields (the struct's size, ...)."""

    name: str
    params: list[tuple[str, int, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        extra = {f.name: getattr(self, f.name) for f in fields(self)[2:]}
        return {"name": self.name, "params": [list(p) for p in self.params], **extra}

    @classmethod
    def from_dict(cls: type[_Layout], d: Mapping[str, Any]) -> _Layout:
        extra = {f.name: int(d[f.name]) for f in fields(cls)[2:]}
        return cls(str(d["name"]), [(str(k), int(i), str(t)) for k, i, t in d["params"]],
                   **extra)

    def declarations(self, info: FunctionInfo, storage_type: Callable[[DataType], str],
                     buffer: Declare, member: Declare) -> tuple[list[str], list[str]]:
        """(a declaration per buffer parameter, a struct member per scalar), in parameter
        order: ``buffer(name, binding, type)``, ``member(name, offset, type)``, where ``type``
        is ``storage_type`` of the element or value type."""
        buffers: list[str] = []
        members: list[str] = []
        for p, (kind, slot, dtype) in zip(info.params, self.params):
            ctype = storage_type(DataType(dtype))
            if kind == "buffer":
                buffers.append(buffer(p.c_name, slot, ctype))
            else:
                members.append(member(p.c_name, slot, ctype))
        return buffers, members
