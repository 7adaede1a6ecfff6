"""The example backend's rows of ``python -m tvm demo``: core's demo kernels, built for and run
on the demo board.

``SPEC`` names this module's function (``"tvm_backend_example.demo:demo_cases"``) instead of
importing it: :mod:`tvm.demo` builds kernels from TVMScript and brings argparse, so it loads when
the demo runs, never at ``import tvm``.
"""

from __future__ import annotations

from tvm.backend import sdk

__all__ = ["demo_cases"]


def demo_cases() -> list[sdk.DemoCase]:
    return [sdk.make_case(kernel, "example/demo-board", backend="example") for kernel in sdk.KERNELS]
