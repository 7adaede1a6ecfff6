"""tvm's conformance kit, run on the example device: each check compiles its kernel for
``example/demo-board`` through this backend's builder, runs it and compares with numpy."""

from __future__ import annotations

import tvm_backend_example
from tvm.testing.conformance import BackendConformance
from tvm_backend_example import runtime

tvm_backend_example.register_backend()  # loaded already when installed; a source checkout too


class TestExampleConformance(BackendConformance):
    target = "example/demo-board"

    def run_unavailable_reason(self) -> str | None:
        return runtime.device_unavailable_reason()
