"""The ``llvm`` target kind: Apache TVM's CPU target, built as C for this machine."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import tvm
import tvm.driver
from tvm.error import TVMError
from tvm.script import tirx as T
from tvm.target import Target

tvm.driver.ensure_builtin_backends()


@T.prim_func
def _double(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = A[i] * T.float32(2.0)


def test_llvm_target_with_seed_attributes():
    t = Target("llvm -mtriple=aarch64-linux-gnu -mcpu=carmel -num-cores=8")
    assert t.kind.name == "llvm" and t.keys == ("cpu",) and t.device_type == "cpu"
    assert (t.attrs["mtriple"], t.attrs["mcpu"], t.attrs["num-cores"]) == (
        "aarch64-linux-gnu", "carmel", 8)


def test_llvm_target_compiles_and_runs_here():
    ex = tvm.compile(_double, target="llvm")
    a = np.arange(8, dtype="float32")
    ex(a)
    np.testing.assert_array_equal(a, np.arange(8, dtype="float32") * 2)


def test_llvm_target_for_another_machine_is_refused():
    other = "riscv64-linux-gnu" if platform.machine().lower() != "riscv64" else "x86_64-linux-gnu"
    with pytest.raises(TVMError, match=f"cannot build for '{other}' on this .* machine; the llvm "
                                       "kind compiles C for the machine it runs on"):
        tvm.compile(_double, target=f"llvm -mtriple={other}")
