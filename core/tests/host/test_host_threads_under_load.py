"""The host thread count follows the CPUs actually free (issue 27): with another program keeping
a CPU busy, a parallel loop leaves that CPU to it, whatever state OpenMP's own workers are in."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import tvm
from tvm.host.codegen import kernel_source
from tvm.host.compiler import get_toolchain
from tvm.script import tirx as T

HARNESS = """
int tvm_test_threads(int* max, int* procs) {
  *max = omp_get_max_threads();
  *procs = omp_get_num_procs();
  return tvm_host_threads();
}
"""


@pytest.fixture
def threads_for(tmp_path):
    """``threads_for("0.5 0.5 0.5 R/100 1")``: what tvm_host_threads() answers when
    /proc/loadavg reads so (this process's own runnable threads are real)."""
    cc = get_toolchain()
    if not cc.has_openmp:
        pytest.skip("the C compiler has no OpenMP")
    loadavg = tmp_path / "loadavg"
    source = f"#include <omp.h>\n{kernel_source('threads.c')}\n{HARNESS}"
    binary = cc.compile_shared(source, ["-O2", "-fPIC", "-shared", "-fopenmp",
                                        f'-DTVM_HOST_LOADAVG="{loadavg}"'], what="threads test")
    so = tmp_path / "threads.so"
    so.write_bytes(binary)
    lib = ctypes.CDLL(str(so))
    fn = lib.tvm_test_threads
    fn.restype = ctypes.c_int

    def answer(text: str) -> tuple[int, int, int]:
        loadavg.write_text(text)
        time.sleep(0.26)  # past the quarter-second cache
        mx, procs = ctypes.c_int(), ctypes.c_int()
        n = fn(ctypes.byref(mx), ctypes.byref(procs))
        return n, mx.value, procs.value

    return answer


def test_one_busy_program_takes_one_cpu(threads_for):
    # The machine runs this thread and one other program: one CPU is taken. (The first version
    # subtracted all of OpenMP's threads, read "no other program" and used every CPU.)
    n, mx, procs = threads_for("1.00 1.00 1.00 2/300 4242\n")
    if mx < 2:
        pytest.skip("one OpenMP thread at most here")
    assert n == max(1, min(mx, procs - 1))


def test_idle_machine_uses_every_thread(threads_for):
    n, mx, _ = threads_for("0.00 0.00 0.00 1/300 4242\n")
    assert n == mx


def test_every_cpu_busy_leaves_one_thread(threads_for):
    n, _, procs = threads_for(f"9.00 9.00 9.00 {procs_plus(8)}/300 4242\n")
    assert n == 1


def procs_plus(k: int) -> int:
    return (os.cpu_count() or 1) + k


def test_unreadable_loadavg_uses_openmps_count(threads_for, tmp_path):
    n, mx, _ = threads_for("garbage\n")
    assert n == mx


@T.prim_func
def _team(N: T.Buffer((64,), "int32")):
    for i in T.parallel(64):
        N[i] = T.call_extern("int32", "omp_get_num_threads")


def test_parallel_loop_leaves_a_busy_cpu_alone():
    """A real program spinning on a CPU: the loops that follow run on the CPUs left."""
    procs = os.cpu_count() or 1
    if procs < 2 or procs > 16:
        pytest.skip(f"{procs} CPUs: this check spins one program on a machine of 2 to 16")
    ex = tvm.compile(_team, target="c")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        team = np.zeros(64, "int32")
        sizes = []
        for _ in range(4):
            time.sleep(0.26)
            ex(team)
            sizes.append(int(team.max()))
    finally:
        busy.kill()
        busy.wait()
    assert max(sizes) <= procs - 1, sizes
