"""The conformance kit (tvm.testing.conformance) run against the Hexagon backend for v68: every
check compiles its kernel into a Hexagon object file; nothing runs (that needs the Hexagon SDK),
so the runs skip with the reason."""

from __future__ import annotations

from typing import Any

from hexagon_helpers import EM_HEXAGON, elf_machine_and_flags

from tvm.testing.conformance import BackendConformance, NotRun


class TestHexagonConformance(BackendConformance):
    target = "qcom/hexagon-v68"

    def run_unavailable_reason(self) -> str | None:
        from tvm_backend_hexagon.runtime import unavailable_reason

        return unavailable_reason()

    def compile(self, func: Any) -> Any:
        from tvm_backend_hexagon.compiler import compiler_unavailable_reason

        reason = compiler_unavailable_reason()
        if reason is not None:
            raise NotRun(f"not compiled for {self.target}: {reason}")
        return super().compile(func)

    def check_compiled(self, ex: Any) -> None:
        assert elf_machine_and_flags(ex.object_file) == (EM_HEXAGON, 0x68)


def test_layout():
    import tvm_backend_hexagon
    from tvm.testing.layout import check_backend_layout

    check_backend_layout(tvm_backend_hexagon)
