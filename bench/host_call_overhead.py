"""Host time per call of a host (``c``) executable, and the foreign-function layers behind it.

    PYTHONPATH=core/src python bench/host_call_overhead.py [--rounds 30]

Budget (issue 15): at most 3 us per call for three numpy arrays, every check of core's argument
checker kept. The kernel is a 16-element float32 add (so the time is the call, not the work).
Rows, all calling the same compiled function:

- ``ex(a, b, c)`` and ``ex.get_function("add")(a, b, c)``: what users call;
- ``f.call_checked``: the full path (core's argument checker, then ctypes), which every call
  took before and which now runs when the C caller's checks do not pass;
- ctypes, pointers extracted before the timing: the floor of a ctypes call;
- ctypes with a Python fast path (type, dtype, shape and contiguity checks, then the data
  pointer from ``__array_interface__``): the best a pure-Python path does;
- cffi (ABI mode, ``ffi.cast`` of ``ctypes.data``, and ``ffi.from_buffer``): when cffi is
  installed;
- the host's C caller (``_tvm_host_caller.Caller``: checks in C, packed entry point);
- numpy's own ``np.add(a, b, out=c)`` for scale.

Method: the rows take turns, round by round; a round times a batch of 20000 calls; the table
gives the median and the best round per call. The header gives machine and load average.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any, no_type_check

import numpy as np

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

N = 16


@no_type_check
def _kernel() -> Any:
    @T.prim_func
    def add(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"),
            C: T.Buffer((N,), "float32")):
        Tx.add(C, A, B)

    return add


def variants(ex: Any, a: Any, b: Any, c: Any) -> dict[str, Callable[[], Any]]:
    lib = ctypes.CDLL(ex.lib_path)
    fn = lib.add
    fn.restype = ctypes.c_int32
    fn.argtypes = [ctypes.c_void_p] * 3
    pa, pb, pc = a.ctypes.data, b.ctypes.data, c.ctypes.data
    f = ex.get_function("add")
    ndarray, f32, shape = np.ndarray, np.dtype("float32"), (N,)

    def py_fast(x: Any, y: Any, z: Any) -> None:
        for arr in (x, y, z):
            if not (type(arr) is ndarray and arr.dtype == f32 and arr.shape == shape
                    and arr.flags.c_contiguous):
                raise TypeError("slow path")
        if fn(x.__array_interface__["data"][0], y.__array_interface__["data"][0],
              z.__array_interface__["data"][0]) != 0:
            raise RuntimeError("kernel failed")

    out: dict[str, Callable[[], Any]] = {
        "`ex(a, b, c)` (executable)": lambda: ex(a, b, c),
        "`f(a, b, c)`, f = ex.get_function('add')": lambda: f(a, b, c),
        "`f.call_checked(a, b, c)`: core's checker + ctypes (the path before; the fallback now)":
            lambda: f.call_checked(a, b, c),
        "ctypes, pointers extracted beforehand (floor, no checks)": lambda: fn(pa, pb, pc),
        "ctypes + Python fast path (checks, __array_interface__ pointers)":
            lambda: py_fast(a, b, c),
    }
    try:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef("int32_t add(float* A, float* B, float* C);")
        clib = ffi.dlopen(ex.lib_path)
        out["cffi ABI mode, ffi.cast of .ctypes.data (no checks)"] = lambda: clib.add(
            ffi.cast("float*", a.ctypes.data), ffi.cast("float*", b.ctypes.data),
            ffi.cast("float*", c.ctypes.data))
        out["cffi ABI mode, ffi.from_buffer (no checks)"] = lambda: clib.add(
            ffi.from_buffer("float[]", a), ffi.from_buffer("float[]", b),
            ffi.from_buffer("float[]", c))
    except ImportError:
        pass
    from tvm.host.caller import caller_module, make_caller

    if caller_module() is not None:
        caller = make_caller(lib, ex.functions["add"], ex.signatures["add"],
                             lambda *args: None, RuntimeError)
        out["C caller (_tvm_host_caller: checks in C, packed entry)"] = lambda: caller(a, b, c)
    out["numpy np.add(a, b, out=c) (reference)"] = lambda: np.add(a, b, out=c)
    return out


def measure(fns: dict[str, Callable[[], Any]], rounds: int, batch: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        for _ in range(1000):
            fn()
    for _ in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            for _ in range(batch):
                fn()
            times[name].append((time.perf_counter() - t) / batch * 1e6)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--batch", type=int, default=20000)
    parser.add_argument("--smoke", action="store_true", help="2 rounds of 200 calls")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.batch = 2, 200
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(N).astype("float32") for _ in range(3))
    ex = tvm.compile(_kernel(), target="c")
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    fns = variants(ex, a, b, c)
    load0 = os.getloadavg()
    times = measure(fns, args.rounds, args.batch)
    load1 = os.getloadavg()
    print(f"# Host call overhead, {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(f"# machine: {platform.node()} / {platform.machine()} / {os.cpu_count()} cores / "
          f"Python {platform.python_version()} / numpy {np.__version__}")
    print(f"# load average: before {load0[0]:.2f}, after {load1[0]:.2f}; {args.rounds} rounds "
          f"of {args.batch} calls, taking turns")
    print()
    print("| path | median us/call | best |")
    print("|---|---|---|")
    for name, ts in times.items():
        print(f"| {name} | {statistics.median(ts):.2f} | {min(ts):.2f} |")


if __name__ == "__main__":
    main()
