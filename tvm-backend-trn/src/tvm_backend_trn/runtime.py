"""The Trainium executable: kernels in the instruction form, run by the numpy simulator.

``ex(*arrays)`` takes one array per kernel parameter, checked first by core's
:class:`~tvm.runtime.arguments.ArgumentChecker` against the function's
:class:`~tvm.runtime.arguments.Signature` (derived from the IR at build time and stored in the
exported file, so a loaded executable checks exactly as a fresh one): numpy arrays or other CPU
arrays (DLPack), contiguous, with the parameter's shape and dtype. The kernel's outputs are
written back into the arrays given for them, as on a device. ``inspect_source()`` is the NKI source (current dialect, or
``legacy`` with ``dialect="legacy"``).
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import Any

from tvm.error import TVMError
from tvm.runtime.arguments import ArgumentChecker, Signature
from tvm.runtime.executable import Executable, read_container

from . import isa

__all__ = ["TrnExecutable", "TrnFunction", "load_executable"]

_FORMAT = 2  # 2: argument signatures in the header


class TrnFunction:
    """One kernel, callable on arrays (simulated)."""

    def __init__(self, kernel: isa.Kernel, target: Any, signature: Signature) -> None:
        self.kernel = kernel
        self.target = target
        self.signature = signature
        self._check = ArgumentChecker(signature)
        self.stats: dict[str, int] = {}

    @property
    def name(self) -> str:
        return self.kernel.name

    def __call__(self, *args: Any) -> None:
        import numpy as np

        from .simulator import simulate

        self._check(args)
        args = tuple(a if isinstance(a, np.ndarray) else np.from_dlpack(a) for a in args)
        tensors = self.kernel.tensors
        inputs = {t.name: a for t, a in zip(tensors, args) if t.kind == "input"}
        self.stats = {}
        outs = simulate(self.kernel, inputs, target=self.target, stats=self.stats)
        for t, a in zip(tensors, args):
            if t.kind != "output":
                continue
            np.copyto(a, outs[t.name].astype(a.dtype), casting="unsafe")

    def __repr__(self) -> str:
        params = ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in self.kernel.tensors)
        return f"<TrnFunction {self.name}({params})>"


class TrnExecutable(Executable):
    """What ``tvm.compile(..., target="aws/trn1/...")`` returns."""

    backend = "trn"

    def __init__(self, target: Any, kernels: Mapping[str, isa.Kernel],
                 signatures: Mapping[str, Signature], *, dialect: str = "nki") -> None:
        if dialect not in ("nki", "legacy"):
            raise ValueError(f"dialect must be 'nki' or 'legacy', got {dialect!r}")
        missing = sorted(set(kernels) - set(signatures))
        if missing:
            raise TVMError(f"no argument signature for kernel(s) {missing}")
        super().__init__(target, list(kernels))
        self.kernels = dict(kernels)
        self.signatures = dict(signatures)
        self.dialect = dialect
        self._functions: dict[str, TrnFunction] = {}

    def get_function(self, name: str) -> TrnFunction:
        if name not in self.kernels:
            raise KeyError(f"this executable has no function {name!r}; it has "
                           f"{sorted(self.kernels)}")
        if name not in self._functions:
            self._functions[name] = TrnFunction(self.kernels[name], self.target,
                                                self.signatures[name])
        return self._functions[name]

    def inspect_source(self, kind: str = "") -> str:
        from .nki_render import render_nki, render_nki_legacy

        render = render_nki_legacy if (kind or self.dialect) == "legacy" else render_nki
        return "\n\n".join(render(k) for k in self.kernels.values())

    def export_header(self) -> dict[str, Any]:
        return {"trn_format": _FORMAT, "dialect": self.dialect,
                "arguments": {n: s.to_dict() for n, s in self.signatures.items()}}

    def export_payload(self) -> bytes:
        return pickle.dumps(self.kernels)


def load_executable(path_or_bytes: Any, header: Mapping[str, Any]) -> TrnExecutable | None:
    from tvm.target import Target

    if header.get("backend") != "trn":
        return None
    header, payload = read_container(path_or_bytes)
    if header.get("trn_format") != _FORMAT:
        raise TVMError(f"this executable has trn format {header.get('trn_format')}; this "
                       f"tvm-backend-trn reads {_FORMAT}")
    # The payload is the pickled instruction form this backend wrote (checksummed by the
    # container); only load files you trust, as with any pickle.
    kernels = pickle.loads(payload)  # noqa: S301
    signatures = {n: Signature.from_dict(d) for n, d in header["arguments"].items()}
    return TrnExecutable(Target(header["target"]), kernels, signatures,
                         dialect=header.get("dialect", "nki"))
