"""tvm.compile of a TVMScript kernel through the full ``tirx`` pipeline on the host target:
argument checks with their exact messages, TVM_DUMP_DIR stage files, the CC variable."""

from __future__ import annotations

import json
import os
import shutil
import stat

import numpy as np
import pytest

import tvm
from tvm.ir import IRModule, PrimFunc
from tvm.script import from_source
from tvm.testing.conformance import VADD_N, vector_add_kernel

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc").split()[0]) is None,
                                reason="no C compiler")

TIRX_STAGES = ["00_input.py", "01_TilePrimitiveDispatch.py", "02_FuseRowLoops.py",
               "03_LowerKernelForm.py", "04_StmtSimplify.py", "05_FlattenBuffer.py",
               "06_VectorizeLoop.py", "07_UnrollLoop.py", "08_StmtSimplify.py",
               "09_SplitHostDevice.py", "10_StmtSimplify.py"]


def _ones() -> np.ndarray:
    return np.ones(VADD_N, "float32")


@pytest.mark.parametrize(("make_bad", "message"), [
    (lambda: _ones().astype("float64"),
     "vector_add: argument 'A': expected dtype float32, got float64"),
    (lambda: _ones()[:512].copy(), "vector_add: argument 'A': expected shape (1024,), got (512,)"),
    (lambda: _ones().reshape(128, 8),
     "vector_add: argument 'A': expected a 1-d array of shape (1024,), got a 2-d array of shape "
     "(128, 8)"),
    (lambda: np.ones(2 * VADD_N, "float32")[::2],
     "vector_add: argument 'A': expected a contiguous (row-major) array, got strides (2,) (in "
     "elements) for shape (1024,); pass a contiguous copy: numpy.ascontiguousarray(x) (torch: "
     "x.contiguous())"),
], ids=["dtype", "shape", "rank", "non-contiguous"])
def test_compiled_kernel_checks_arguments_before_running(make_bad, message) -> None:
    ex = tvm.compile(vector_add_kernel(), target="c")
    c = np.zeros(VADD_N, "float32")
    with pytest.raises(ValueError) as info:
        ex(make_bad(), _ones(), c)
    assert str(info.value) == message
    assert not c.any()  # nothing ran
    ex(_ones(), _ones(), c)
    np.testing.assert_array_equal(c, 2.0)


def test_dump_dir_writes_one_file_per_stage_of_the_tirx_pipeline(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TVM_DUMP_DIR", str(tmp_path / "dump"))
    tvm.compile(vector_add_kernel(), target="c")
    everything = sorted(p.name for p in (tmp_path / "dump").iterdir())
    build_stages = ["c-01-source.c", "c-02-binary.so", "c-03-metadata.json"]
    assert everything == TIRX_STAGES + build_stages
    files = TIRX_STAGES
    # The build contract's stages: the C source, the shared object and the metadata.
    assert "vector_add" in (tmp_path / "dump" / "c-01-source.c").read_text()
    assert (tmp_path / "dump" / "c-02-binary.so").read_bytes()[:4] == b"\x7fELF"
    meta = json.loads((tmp_path / "dump" / "c-03-metadata.json").read_text())
    assert list(meta["arguments"]) == ["vector_add"]
    first = (tmp_path / "dump" / "00_input.py").read_text()
    assert "def vector_add(" in first and "T.device_entry()" in first
    # Each stage is TVMScript that parses back; by the last, the kernel form is lowered to
    # thread-bound loops (on the host target there is no separate device function).
    parsed = [from_source((tmp_path / "dump" / name).read_text(), filename=name) for name in files]
    assert all(isinstance(p, (PrimFunc, IRModule)) for p in parsed)
    last = (tmp_path / "dump" / TIRX_STAGES[-1]).read_text()
    assert "T.device_entry()" not in last
    assert 'for tx in T.thread_binding(128, thread="threadIdx.x"):' in last


def test_cc_variable_chooses_the_compiler(tmp_path, monkeypatch) -> None:
    """$CC (with arguments) is the command that builds the shared object."""
    real_cc = shutil.which("cc") or shutil.which("gcc")
    if real_cc is None:
        pytest.skip("no cc to wrap")
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "my-cc"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real_cc}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CC", f"{wrapper} -DTVM_TEST_FLAG=1")
    ex = tvm.compile(vector_add_kernel(), target="c")
    calls = log.read_text().splitlines()
    build = [line for line in calls if "module.c" in line]
    assert len(build) == 1 and build[0].startswith("-DTVM_TEST_FLAG=1 -O3 -fPIC -shared")
    assert ex.compiler["command"] == f"{wrapper} -DTVM_TEST_FLAG=1"
    a, c = _ones(), np.zeros(VADD_N, "float32")
    ex(a, a, c)
    np.testing.assert_array_equal(c, 2.0)
