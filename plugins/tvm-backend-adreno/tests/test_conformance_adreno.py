"""The conformance kit (tvm.testing.conformance) for what Adreno declares: its OpenCL tag,
compiled through the ``adreno`` pipeline and the OpenCL backend, run on this machine's OpenCL
device (PoCL on a CPU); and the file layout every backend has."""

from __future__ import annotations

import tvm_backend_adreno
from tvm.testing.conformance import BackendConformance
from tvm.testing.layout import check_backend_layout

tvm_backend_adreno.register_backend()  # a source checkout has no entry point: load in-process


class TestAdrenoOpenCLConformance(BackendConformance):
    target = "qcom/adreno-opencl"

    def run_unavailable_reason(self) -> str | None:
        from tvm_backend_opencl.runtime import unavailable_reason

        return unavailable_reason()


def test_layout():
    check_backend_layout(tvm_backend_adreno)
