"""The conformance kit (tvm.testing.conformance) run against the ROCm backend for gfx90a: every
check compiles its kernel with hipcc and checks the code object; nothing runs (no launcher in
this version), so the runs skip with the reason."""

from __future__ import annotations

from typing import Any

from rocm_helpers import EM_AMDGPU, MACH, elf_machine_and_mach

from tvm.testing.conformance import BackendConformance, NotRun


class TestRocmConformance(BackendConformance):
    target = "amd/instinct-mi250x"

    def run_unavailable_reason(self) -> str | None:
        from tvm_backend_rocm.runtime import unavailable_reason

        return unavailable_reason()

    def compile(self, func: Any) -> Any:
        from tvm_backend_rocm.compiler import hipcc_unavailable_reason

        reason = hipcc_unavailable_reason()
        if reason is not None:
            raise NotRun(f"not compiled for {self.target}: {reason}")
        return super().compile(func)

    def check_compiled(self, ex: Any) -> None:
        assert elf_machine_and_mach(ex.code_object) == (EM_AMDGPU, MACH["gfx90a"])


def test_layout():
    import tvm_backend_rocm
    from tvm.testing.layout import check_backend_layout

    check_backend_layout(tvm_backend_rocm)
