"""The Metal rows of the main job (``python -m tvm demo``).

On macOS with pyobjc-framework-Metal the kernels run on the GPU. Elsewhere they are compiled to
MSL (what would run on an Apple GPU; ``python -m tvm demo --show-source`` prints it),
syntax-checked with the C++ shim and executed on the CPU emulator; those rows say ``emulated`` in
their backend column and note.
"""

from __future__ import annotations

import shutil
import time
from typing import Any

import tvm
from tvm.backend import sdk
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

from . import runtime

__all__ = ["TARGET", "demo_cases"]

TARGET = "apple/m1-gpu"
SG_M = SG_N = SG_K = 64


def _simdgroup_matmul() -> Any:
    m, n, k = SG_M, SG_N, SG_K

    @T.prim_func
    def simdgroup_matmul(A: T.Buffer((m, k), "float32"),  # type: ignore[valid-type]
                         B: T.Buffer((k, n), "float32"),  # type: ignore[valid-type]
                         C: T.Buffer((m, n), "float32")):  # type: ignore[valid-type]
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([128])
        As = T.alloc_buffer((m, k), "float32", scope="shared")
        Bs = T.alloc_buffer((k, n), "float32", scope="shared")
        Tx.cta.copy(As, A)
        Tx.cta.copy(Bs, B)
        Tx.cta.gemm(C, As, Bs)

    return simdgroup_matmul


def _kernels() -> list[Any]:
    def inputs(rng: Any) -> list[Any]:
        import numpy as np

        return [rng.standard_normal((SG_M, SG_K)).astype("float32"),
                rng.standard_normal((SG_K, SG_N)).astype("float32"),
                np.zeros((SG_M, SG_N), "float32")]

    extra = sdk.DemoKernel("simdgroup matmul (Tx.cta.gemm)", _simdgroup_matmul, inputs,
                           lambda a, b, _c: a.astype("float64") @ b.astype("float64"), output=2,
                           rtol=1e-4, atol=1e-4)
    return [*sdk.KERNELS, extra]


def demo_cases() -> list[sdk.DemoCase]:
    if runtime.is_available():
        return [sdk.make_case(k, TARGET, backend="metal") for k in _kernels()]
    if shutil.which("g++") is None and shutil.which("clang++") is None:
        return []  # neither a GPU nor the emulator's compiler: nothing to show
    return [_emulated_case(k) for k in _kernels()]


def _emulated_case(kernel: Any) -> sdk.DemoCase:
    def run() -> sdk.DemoResult:
        import numpy as np

        rng = np.random.default_rng(0)
        args = kernel.inputs(rng)
        expected = kernel.reference(*args)
        t0 = time.perf_counter()
        ex = tvm.compile(kernel.build(), target=TARGET)
        ex.check_msl()
        compile_ms = (time.perf_counter() - t0) * 1e3
        t = time.perf_counter()
        ex.emulate(*args)
        run_ms = (time.perf_counter() - t) * 1e3
        got = np.asarray(args[kernel.output])
        err = float(np.max(np.abs(got.astype("float64") - expected))) if got.size else 0.0
        ok = bool(np.allclose(got, expected, rtol=kernel.rtol, atol=kernel.atol))
        return sdk.DemoResult(ok, run_ms, err, note=f"emulated on the CPU (MSL shim-checked; "
                                                 f"--show-source prints it); compile "
                                                 f"{compile_ms:.0f} ms",
                              source=ex.inspect_source())

    return sdk.DemoCase(kernel.name, TARGET, run, backend="metal (emulated)", extra={"emulated": True})
