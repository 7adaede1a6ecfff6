"""C for the DSP, compiled into Hexagon object files for each version the compiler knows; the
compiler's errors; and what running needs."""

from __future__ import annotations

import shlex
import subprocess

import hexagon_helpers  # noqa: F401 - loads the backend
import numpy as np
import pytest
from hexagon_helpers import EM_HEXAGON, elf_machine_and_flags

import tvm
from tvm.error import CompileError, DeviceUnavailableError
from tvm.script import tirx as T
from tvm.target import Target
from tvm.testing.conformance import KERNELS
from tvm_backend_hexagon import compiler

pytestmark = pytest.mark.hexagon_cc


@pytest.mark.parametrize("name", ["vector_add", "elementwise", "reduction", "gemm"])
def test_object_files_for_v68(name):
    ex = tvm.compile(KERNELS[name](), target="qcom/hexagon-v68")
    assert elf_machine_and_flags(ex.object_file) == (EM_HEXAGON, 0x68)
    assert name.encode() in ex.object_file  # the exported symbol
    assert ex.inspect_source().count(f"TVM_EXPORT int32_t {name}(") == 1


def test_every_seed_version_the_compiler_knows():
    known = compiler.find_compiler().cpus
    for tag in ("qcom/hexagon-v65", "qcom/hexagon-v66", "qcom/hexagon-v68", "qcom/hexagon-v69",
                "qcom/hexagon-v73", "qcom/hexagon-v75"):
        mcpu = Target(tag).attrs["mcpu"]
        if known and mcpu not in known:
            with pytest.raises(CompileError) as err:
                tvm.compile(KERNELS["vector_add"](), target=tag)
            assert f"cannot compile the C of vector_add for {mcpu}: " in str(err.value)
            assert "install the Hexagon SDK (or a newer LLVM) for this version" in str(err.value)
            continue
        ex = tvm.compile(KERNELS["vector_add"](), target=tag)
        assert elf_machine_and_flags(ex.object_file) == (EM_HEXAGON, int(mcpu[8:10], 16))


@T.prim_func
def calls_unknown(A: T.Buffer((64,), "float32")):
    for i in T.serial(64):
        A[i] = T.call_extern("float32", "no_such_function", A[i])


def test_compiler_error_carries_log_and_command():
    with pytest.raises(CompileError) as err:
        tvm.compile(calls_unknown, target="qcom/hexagon-v68")
    assert "failed (exit code 1) compiling the C of calls_unknown for hexagonv68 (its input is " \
        "kept at " in str(err.value)
    assert "no_such_function" in err.value.log
    again = subprocess.run(shlex.split(err.value.command), capture_output=True, text=True)
    assert again.returncode != 0 and "no_such_function" in again.stderr


def test_export_load_and_what_running_needs(tmp_path):
    ex = tvm.compile(KERNELS["gemm"](), target="qcom/hexagon-v69")
    loaded = tvm.runtime.load_module(ex.export_library(tmp_path / "gemm.tvm"))
    assert loaded.object_file == ex.object_file
    assert loaded.inspect_source() == ex.inspect_source()
    a = np.zeros((32, 24), "float32")
    with pytest.raises(DeviceUnavailableError) as err:
        loaded(a, a, a, a)
    assert str(err.value).startswith("cannot run 'gemm' on hexagonv69: running on a Hexagon DSP "
                                     "needs the Hexagon SDK")


def test_no_compiler_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("HEXAGON_TOOLS_ROOT", raising=False)
    with pytest.raises(CompileError) as err:
        tvm.compile(KERNELS["vector_add"](), target="qcom/hexagon-v68", cache=False)
    assert str(err.value) == (
        "cannot compile the C of vector_add for hexagonv68: no Hexagon C compiler; install the "
        "Hexagon SDK (hexagon-clang; set HEXAGON_TOOLS_ROOT) or an LLVM clang with the Hexagon "
        "target (Debian/Ubuntu: apt-get install clang; hipcc brings clang-15)")
