"""The conformance kit (tvm.testing.conformance) run against the Metal backend for
``apple/m1-gpu``. Every compiled module passes the C++-shim syntax check of its MSL; the kernels
run on an Apple GPU on macOS with the Metal runtime, elsewhere on the CPU emulator (the same
MSL compiled against the shim)."""

from __future__ import annotations

import shutil
from typing import Any

from tvm.testing.conformance import BackendConformance


def _cxx() -> str | None:
    return shutil.which("g++") or shutil.which("clang++")


class TestMetalConformance(BackendConformance):
    target = "apple/m1-gpu"

    def run_unavailable_reason(self) -> str | None:
        from tvm_backend_metal.runtime import unavailable_reason

        if unavailable_reason() is None or _cxx() is not None:
            return None
        return "no Apple GPU here and no C++ compiler (g++ or clang++) for the emulator"

    def run(self, ex: Any, args: list[Any]) -> None:
        from tvm_backend_metal.runtime import unavailable_reason

        if unavailable_reason() is None:
            ex(*args)  # the GPU
        else:
            ex.emulate(*args)

    def check_compiled(self, ex: Any) -> None:
        if _cxx() is not None:
            ex.check_msl()  # raises CompileError with the compiler's log
