"""The host backend's rows of ``python -m tvm demo``: core's demo kernels on the ``c`` target.

Named by the plugin's ``SPEC`` (``demo_cases="tvm.host.demo:demo_cases"``), so :mod:`tvm.demo`
loads when the demo runs, not at ``import tvm``.
"""

from __future__ import annotations

from ..demo import KERNELS, make_case
from ..plugin import DemoCase

__all__ = ["demo_cases"]


def demo_cases() -> list[DemoCase]:
    return [make_case(kernel, "c", backend="c") for kernel in KERNELS]
