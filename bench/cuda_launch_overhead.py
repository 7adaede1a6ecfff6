"""Host time per launch: our CudaExecutable against a bare cuda.core launch of the same cubin.

    PYTHONPATH=core/src:tvm-backend-cuda/src python bench/cuda_launch_overhead.py

Budget (issue 5): a call of our executable, argument checks included, costs at most 1.5x the
host time of a bare ``cuda.core.launch`` with the pointers already extracted.

Method: every variant launches the same small kernel asynchronously on the current torch
stream. A sample is a batch of ``--batch`` launches timed with ``perf_counter`` (the device is
synchronized between batches, outside the timer, so the launch queue never fills and the GPU's
own time never shows); the variants take turns, batch by batch, so drift hits them alike. Each
row gives the median and the best batch, per launch. Before timing, the script checks the
results and that the executable's argument errors are, word for word, core's.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any


def _check_results_and_errors(torch: Any, tvm: Any) -> list[str]:
    """Correctness of the fast path, and its errors against core's check_arguments."""
    from cuda_kernels import vector_add

    from tvm.script import tirx as T
    from tvm.tirx.transform import check_arguments

    notes = []
    n = 1 << 12
    ex = tvm.compile(vector_add(n, 128), target="cuda")
    f = ex.get_function(ex.entry_name)
    for _ in range(3):  # the first call takes the full path, the others the fast one
        a, b, c = (torch.randn(n, device="cuda") for _ in range(3))
        ex(a, b, c)
        torch.cuda.synchronize()
        torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    assert f._fast_call is not None, "the fast call was not prepared"
    assert f._fast_launch((a, b, c)) is True
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(1_000_000)  # a launch on another stream would race and read stale c
        c2 = torch.empty_like(c)
        ex(a, b, c2)
    s.synchronize()
    torch.testing.assert_close(c2, a + b, rtol=0, atol=0)
    notes.append("vector add: exact on 3 fresh inputs and on a side stream")
    ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
    with torch.no_grad():
        ex(ag, bg, c)  # other tensors than the guard was built from: the Python checks
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    notes.append("requires_grad inputs (guard miss, Python checks): exact")

    bad = {
        "dtype": (a, b, c.double()),
        "shape": (a, b, c[:100]),
        "device": (a, b, c.cpu()),
        "strides": (a, b, torch.randn(2 * n, device="cuda")[::2]),
        "count": (a, b),
        "type": (a, b, 3),
    }
    for what, args in bad.items():
        try:
            ex(*args)
        except Exception as e:  # noqa: BLE001 - compared with core's below
            ours = f"{type(e).__name__}: {e}"
        else:
            raise AssertionError(f"{what}: no error")
        try:
            check_arguments(f.specs, args, "cuda", func_name=f.name)
        except Exception as e:  # noqa: BLE001
            core = f"{type(e).__name__}: {e}"
        else:
            core = "(core accepts it)"
        assert ours == core, f"{what}: ours {ours!r} != core {core!r}"
    notes.append(f"argument errors identical to core's check_arguments: {', '.join(bad)}")

    @T.prim_func
    def axpy(alpha: T.float32, k: T.int32, A: T.Buffer((4096,), "float32"),
             B: T.Buffer((4096,), "float32")):
        T.device_entry()
        bx = T.cta_id([32])
        tx = T.thread_id([128])
        B[bx * 128 + tx] = alpha * A[bx * 128 + tx] + B[bx * 128 + tx] + T.Cast("float32", k)

    ex2 = tvm.compile(axpy, target="cuda")
    f2 = ex2.get_function(ex2.entry_name)
    for alpha, k in ((2.5, 3), (-1.25, -7), (3, 0)):
        x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
        want = alpha * x + y + k
        ex2(alpha, k, x, y)
        torch.cuda.synchronize()
        torch.testing.assert_close(y, want)
    assert f2._fast_call is not None
    for args, what in (((2.5, 2**31, x, y), "int32 overflow"), ((2.5, 1.5, x, y), "float for int"),
                       ((2.5, True, x, y), "bool for int")):
        try:
            ex2(*args)
        except Exception as e:  # noqa: BLE001
            ours = f"{type(e).__name__}: {e}"
        else:
            ours = "(accepted)"
        try:
            check_arguments(f2.specs, args, "cuda", func_name=f2.name)
            core = "(core accepts it)"
        except Exception as e:  # noqa: BLE001
            core = f"{type(e).__name__}: {e}"
        assert ours == core, f"axpy {what}: ours {ours!r} != core {core!r}"
    notes.append("axpy (float32 + int32 scalars, reordered kernel params): correct on 3 inputs; "
                 "int32 overflow, float and bool for the int: errors identical to core's")
    return notes


def _time(variants: dict[str, Callable[[], Any]], sync: Callable[[], None], batch: int,
          batches: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(20):  # warm-up: the first batches of a process run slower
        for fn in variants.values():
            for _ in range(batch):
                fn()
        sync()
    for _ in range(batches):
        for name, fn in variants.items():
            sync()
            t = time.perf_counter()
            for _ in range(batch):
                fn()
            times[name].append((time.perf_counter() - t) / batch * 1e6)
    sync()
    return times


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--batches", type=int, default=300)
    ns = ap.parse_args()

    import sys

    import torch

    import tvm
    from tvm_backend_cuda.plugin import register_backend

    register_backend()
    sys.path.insert(0, "tvm-backend-cuda/tests")
    from cuda_kernels import vector_add

    notes = _check_results_and_errors(torch, tvm)

    from cuda.bindings import driver
    from cuda.core import Device, LaunchConfig, ObjectCode, Stream, launch

    n = 1 << 12
    a, b, c = (torch.randn(n, device="cuda") for _ in range(3))
    ex = tvm.compile(vector_add(n, 128), target="cuda")
    ex(a, b, c)
    ex(a, b, c)
    dev = Device(0)
    dev.set_current()
    kern = ObjectCode.from_cubin(ex.cubin).get_kernel(ex.kernel_names[0])
    cfg = LaunchConfig(grid=(n // 128, 1, 1), block=(128, 1, 1))
    handle = torch.cuda.current_stream().cuda_stream
    stream = Stream.from_handle(handle)
    pa, pb, pc = a.data_ptr(), b.data_ptr(), c.data_ptr()

    # the floor of our approach: cuLaunchKernel with a prebuilt parameter block
    import ctypes

    vals = (ctypes.c_uint64 * 3)(pa, pb, pc)
    ptrs = (ctypes.c_void_p * 3)(*(ctypes.addressof(vals) + 8 * i for i in range(3)))
    fn = driver.CUfunction(int(kern.handle))
    cus = driver.CUstream(handle)
    params = ctypes.addressof(ptrs)
    cu_launch = driver.cuLaunchKernel

    fk = ex.get_function(ex.entry_name)
    cuda_kernel = ex.module().get_kernel(ex.kernel_names[0])
    grid, block = (n // 128, 1, 1), (128, 1, 1)

    def raw() -> None:
        (err,) = cu_launch(fn, 32, 1, 1, 128, 1, 1, 0, cus, params, 0)
        if err:
            raise RuntimeError(err)

    variants: dict[str, Callable[[], Any]] = {
        "bare": lambda: launch(stream, cfg, kern, pa, pb, pc),
        "bare_ptr": lambda: launch(stream, cfg, kern, a.data_ptr(), b.data_ptr(), c.data_ptr()),
        "raw": raw,
        "ours": lambda: ex(a, b, c),
        "ours_func": lambda: fk(a, b, c),
        "kernel_launch": lambda: cuda_kernel.launch(grid, block, (a, b, c)),
        "torch_add": lambda: torch.add(a, b, out=c),
    }
    # what the pieces of a call cost on this machine (no launch)
    from tvm_backend_cuda import runtime as rt
    from tvm_backend_cuda.executable import _tensor_guard

    guard = _tensor_guard((a, b, c))
    notes.append(f"torch's C++ tensor guard available: {guard is not None}")
    raw_stream = rt.torch_raw_stream_getter()
    shape = (n,)
    dptr = torch.Tensor.data_ptr
    pieces: dict[str, Callable[[], Any]] = {
        "empty_call": lambda: None,
        "guard_check_3": (lambda: guard(a, b, c)) if guard else (lambda: None),
        "python_checks_1": lambda: (type(a) is torch.Tensor and a.dtype is torch.float32
                                    and a.shape == shape and a.is_cuda and a.is_contiguous()
                                    and a.get_device()),
        "data_ptr_3": lambda: list(map(dptr, (a, b, c))),
        "raw_stream": lambda: raw_stream(0),
    }
    tp = _time(pieces, lambda: None, ns.batch, 50)
    notes.append("pieces, median ns per call: " + ", ".join(
        f"{k} {statistics.median(v) * 1e3:.0f}" for k, v in tp.items()))

    t = _time(variants, torch.cuda.synchronize, ns.batch, ns.batches)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b)
    med = {k: statistics.median(v) for k, v in t.items()}
    best = {k: min(v) for k, v in t.items()}
    # the same variant's spread: median of the first half of the batches against the second
    half = ns.batches // 2
    spread = {k: abs(statistics.median(v[:half]) - statistics.median(v[half:])) for k, v in t.items()}

    labels = {
        "bare": "bare `cuda.core.launch(stream, cfg, k, pa, pb, pc)`, pointers pre-extracted",
        "bare_ptr": "bare `cuda.core.launch(..., a.data_ptr(), b.data_ptr(), c.data_ptr())`",
        "raw": "bare `driver.cuLaunchKernel` with a prebuilt parameter block (the floor)",
        "ours": "**our executable `ex(a, b, c)`** (rank/shape/dtype/device/strides checks + launch)",
        "ours_func": "our `ex.get_function(name)(a, b, c)`",
        "kernel_launch": "`CudaKernel.launch(grid, block, (a, b, c))` (runtime.py, cuda.core)",
        "torch_add": "`torch.add(a, b, out=c)` (reference)",
    }
    props = torch.cuda.get_device_properties(0)
    import cuda.bindings
    import cuda.core

    head = (f"## Launch overhead ({datetime.date.today().isoformat()}, {props.name}, "
            f"{platform.node()}, Python {platform.python_version()}, torch {torch.__version__}, "
            f"cuda.core {cuda.core.__version__}, cuda.bindings {cuda.bindings.__version__})\n\n"
            "`PYTHONPATH=core/src:tvm-backend-cuda/src python bench/cuda_launch_overhead.py` "
            f"(vector add 2^12 f32, 3 torch tensors; {ns.batches} batches of {ns.batch} async "
            "launches per row, taking turns)\n\n"
            "| path | median us/launch | best | vs bare (pre-extracted) | vs bare (data_ptr) | "
            "median drift |\n|---|---|---|---|---|---|\n")
    rows = [f"| {labels[k]} | {med[k]:.2f} | {best[k]:.2f} | {med[k] / med['bare']:.2f}x | "
            f"{med[k] / med['bare_ptr']:.2f}x | {spread[k]:.2f} |" for k in variants]
    verdict = (f"\nBudget 1.5x of the bare pre-extracted launch: ours "
               f"{med['ours'] / med['bare']:.2f}x -> "
               f"{'within' if med['ours'] <= 1.5 * med['bare'] else 'OVER'} budget.\n")
    print("\n".join(f"- {x}" for x in notes))
    print()
    print(head + "\n".join(rows) + "\n" + verdict)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
