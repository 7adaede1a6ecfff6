"""The conformance kit (tvm.testing.conformance) run against the WebGPU backend: every kernel's
WGSL passes wgpu-native's validation and runs through wgpu (lavapipe on a CPU) against numpy."""

from __future__ import annotations

from typing import Any

from wg_helpers import TARGET

from tvm.testing.conformance import BackendConformance


class TestWebGPUConformance(BackendConformance):
    target = TARGET

    def run_unavailable_reason(self) -> str | None:
        from tvm_backend_webgpu.runtime import unavailable_reason

        return unavailable_reason()

    def check_compiled(self, ex: Any) -> None:
        assert ex.kernel_names, "no kernel compiled"
        if self.run_unavailable_reason() is None:
            ex.check_wgsl()  # raises CompileError with naga's report
