"""The conformance kit (tvm.testing.conformance) run against the OpenCL backend: every check
compiles its kernel (and builds it on the device when there is one); the kernels run on this
machine's OpenCL device, PoCL on a CPU."""

from __future__ import annotations

import opencl_helpers  # noqa: F401 - loads the backend

from tvm.testing.conformance import BackendConformance


class TestOpenCLConformance(BackendConformance):
    target = "opencl"

    def run_unavailable_reason(self) -> str | None:
        from tvm_backend_opencl.runtime import unavailable_reason

        return unavailable_reason()


def test_layout():
    import tvm_backend_opencl
    from tvm.testing.layout import check_backend_layout

    check_backend_layout(tvm_backend_opencl)
