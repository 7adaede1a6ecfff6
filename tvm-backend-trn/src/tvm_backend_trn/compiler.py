"""Trainium's compile stage: the instruction form -> the payload the simulator runs.

The binary of a Trainium executable is its kernels in the instruction form (:mod:`isa`),
serialised as JSON: every instruction, tensor and access pattern is a frozen dataclass of
numbers, strings and tuples, written as ``{"_": "ClassName", field: value, ...}``. Reading it
back builds only the classes of :mod:`isa` (anything else is an error), so loading a file runs no
code from it, unlike a pickle. Serialising is cheap, so nothing here is cached (the builder
sets ``cached = False``).

>>> data = encode_kernels({"k": kernel})
>>> decode_kernels(data) == {"k": kernel}
True
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from tvm.error import TVMError

from . import isa

__all__ = ["PAYLOAD_FORMAT", "decode_kernels", "encode_kernels"]

PAYLOAD_FORMAT = "tvm-trn-isa/1"

#: the classes a payload may name: the dataclasses of the instruction form
_CLASSES: dict[str, type] = {
    name: obj for name in isa.__all__
    if isinstance(obj := getattr(isa, name), type) and dataclasses.is_dataclass(obj)
}


def encode_kernels(kernels: Mapping[str, isa.Kernel]) -> bytes:
    """The payload of ``kernels`` (by function name): UTF-8 JSON."""
    body = {"format": PAYLOAD_FORMAT, "kernels": {n: _encode(k) for n, k in kernels.items()}}
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def decode_kernels(data: bytes) -> dict[str, isa.Kernel]:
    """The kernels of a payload written by :func:`encode_kernels`; a :class:`TVMError` names
    what is wrong with a damaged or foreign one."""
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise TVMError(f"the Trainium payload is not JSON ({err}); compile and export the "
                       "kernel again") from None
    if not isinstance(body, dict) or body.get("format") != PAYLOAD_FORMAT:
        found = body.get("format") if isinstance(body, dict) else type(body).__name__
        raise TVMError(f"the Trainium payload has format {found!r}; this tvm-backend-trn reads "
                       f"{PAYLOAD_FORMAT!r}")
    kernels = {}
    for name, value in dict(body.get("kernels") or {}).items():
        kernel = _decode(value)
        if not isinstance(kernel, isa.Kernel):
            raise TVMError(f"the Trainium payload's entry {name!r} is not a kernel")
        kernels[name] = kernel
    return kernels


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value).__name__
        if _CLASSES.get(cls) is not type(value):
            raise TypeError(f"cannot serialise a {cls}: not a class of the instruction form")
        out: dict[str, Any] = {"_": cls}
        for f in dataclasses.fields(value):
            out[f.name] = _encode(getattr(value, f.name))
        return out
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot serialise {type(value).__name__} {value!r} in a Trainium kernel")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    if not isinstance(value, dict):
        return value
    name = value.get("_")
    cls = _CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise TVMError(f"the Trainium payload names {name!r}, which is not a class of the "
                       "instruction form")
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    kwargs = {k: _decode(v) for k, v in value.items() if k != "_"}
    unknown = sorted(set(kwargs) - fields)
    if unknown:
        raise TVMError(f"the Trainium payload gives {name} the unknown field(s) {unknown}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as err:
        raise TVMError(f"the Trainium payload has a bad {name}: {err}") from None
