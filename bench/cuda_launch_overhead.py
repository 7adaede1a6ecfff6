"""Host time per launch: our CudaExecutable against a bare cuda.core launch of the same cubin.

    PYTHONPATH=core/src:tvm-backend-cuda/src python bench/cuda_launch_overhead.py [--out docs/perf.md]
                                                                        [--smoke]

Budget (issue 21): a call of our executable, argument checks included, costs at most 1.2x the
host time of a bare ``cuda.core.launch`` with the pointers already extracted, for a kernel
taking arrays (a vector add of 3 float32 tensors) and for a kernel reached only through tensor
maps the executable derives from the arrays (a TMA copy of 2 bfloat16 tensors).

Method: every variant launches asynchronously on the current torch stream. A sample is a batch
of ``--batch`` launches timed with ``perf_counter`` (the device is synchronized between batches,
outside the timer, so the launch queue never fills and the GPU's own time never shows); the
variants take turns, batch by batch, so drift hits them alike. Each row gives the median and the
best batch, per launch. Before timing, the script checks the results (also on a side stream and
with requires_grad inputs) and that the executable's argument errors are, word for word, those
of core's ``ArgumentChecker``. ``--smoke`` needs no GPU: it compiles the kernels (sm_90a).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any, no_type_check

import _gpu

SECTION = "## CUDA launch overhead (bench/cuda_launch_overhead.py)"
N = 1 << 12
ROWS, COLS = 64, 128  # the TMA kernel's tile; the arrays are 2 tiles


@no_type_check
def tma_copy_kernel() -> Any:
    """``B = A + 1`` for a (128, 128) bfloat16 array: each of 2 CTAs loads a 64 x 128 tile with
    TMA (128-byte swizzle, completing on an mbarrier), adds 1 in shared memory and stores the
    tile with TMA. Its signature is ``(A, B)``: the executable derives both tensor maps."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.dispatch.tma_utils import tma_shared_layout
    from tvm_backend_cuda.lang import SMEMPool, TMABar

    layout = tma_shared_layout("bfloat16", "128B", (ROWS, COLS))
    nbytes = ROWS * COLS * 2

    @T.prim_func
    def tma_copy(A: T.Buffer((2 * ROWS, COLS), "bfloat16"),
                 B: T.Buffer((2 * ROWS, COLS), "bfloat16")):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([128])
        pool = SMEMPool()
        S = pool.alloc((ROWS, COLS), "bfloat16", layout=layout, align=1024)
        bar = TMABar(pool, 1, init_thread=tx == 0)
        if tx == 0:
            bar.arrive(0, nbytes)
        Tx.cta.copy_async(S, A[bx * ROWS:bx * ROWS + ROWS, 0:COLS], dispatch="tma",
                          config={"mbar": bar[0]})
        bar.wait(0, 0)
        Tx.cta.add(S, S, T.float32(1))
        Tx.cta.copy_async(B[bx * ROWS:bx * ROWS + ROWS, 0:COLS], S, dispatch="tma")

    return tma_copy


@no_type_check
def axpy_kernel() -> Any:
    """``B = alpha * A + B + k``: float32 and int32 scalars among the arrays."""
    from tvm.script import tirx as T

    @T.prim_func
    def axpy(alpha: T.float32, k: T.int32, A: T.Buffer((4096,), "float32"),
             B: T.Buffer((4096,), "float32")):
        T.device_entry()
        bx = T.cta_id([32])
        tx = T.thread_id([128])
        B[bx * 128 + tx] = alpha * A[bx * 128 + tx] + B[bx * 128 + tx] + T.Cast("float32", k)

    return axpy


def compile_all(tvm: Any, target: Any) -> dict[str, Any]:
    from tvm_backend_cuda.kernels import add_func

    return {"add": tvm.compile(add_func(N, "float32"), target=target),
            "tma": tvm.compile(tma_copy_kernel(), target=target),
            "axpy": tvm.compile(axpy_kernel(), target=target)}


def _error(fn: Callable[..., Any], args: Any) -> str:
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the message is what is compared
        return f"{type(e).__name__}: {e}"
    return "(accepted)"


def check(torch: Any, exes: dict[str, Any]) -> list[str]:
    """Correctness of the fast path, and its errors against core's ArgumentChecker."""
    from tvm.runtime.arguments import ArgumentChecker

    notes = []
    ex = exes["add"]
    f = ex.get_function(ex.entry_name)
    for _ in range(3):  # the first call takes the full path, the others the fast one
        a, b, c = (torch.randn(N, device="cuda") for _ in range(3))
        ex(a, b, c)
        torch.cuda.synchronize()
        torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    assert f._fast_call is not None, "the fast call was not prepared"
    assert f._fast_call((a, b, c), None) is True
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(1_000_000)  # a launch on another stream would race with the fill
        c2 = torch.full_like(c, float("nan"))
        ex(a, b, c2)
        d = c2.clone()
    s.synchronize()
    torch.testing.assert_close(d, a + b, rtol=0, atol=0)
    notes.append("vector add: exact on 3 fresh inputs and on a side stream")
    ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
    with torch.no_grad():
        ex(ag, bg, c)  # other tensors than the guard was built from: the Python checks
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    notes.append("requires_grad inputs (guard miss, Python checks): exact")
    core = ArgumentChecker(f.plan.signature)
    bad = {"dtype": (a, b, c.double()), "shape": (a, b, c[:100]), "device": (a, b, c.cpu()),
           "strides": (a, b, torch.randn(2 * N, device="cuda")[::2]), "count": (a, b),
           "type": (a, b, 3)}
    for what, args in bad.items():
        ours, want = _error(ex, args), _error(core, (args,))
        assert ours == want and ours != "(accepted)", f"{what}: ours {ours!r} != core {want!r}"
    notes.append(f"argument errors identical to core's ArgumentChecker: {', '.join(bad)}")

    tma = exes["tma"]
    for _ in range(3):
        x = torch.randn(2 * ROWS, COLS, device="cuda").to(torch.bfloat16)
        y = torch.full_like(x, float("nan"))
        tma(x, y)
        torch.cuda.synchronize()
        torch.testing.assert_close(y, (x.float() + 1).to(torch.bfloat16))
    assert tma.get_function(tma.entry_name)._fast_call is not None
    notes.append("TMA copy (tensor maps derived at launch): correct on 3 fresh inputs")

    ax = exes["axpy"]
    for alpha, k in ((2.5, 3), (-1.25, -7), (3, 0)):
        x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
        want = alpha * x + y + k
        ax(alpha, k, x, y)
        torch.cuda.synchronize()
        torch.testing.assert_close(y, want)
    core2 = ArgumentChecker(ax.get_function(ax.entry_name).plan.signature)
    for args, what in (((2.5, 2**31, x, y), "int32 overflow"), ((2.5, 1.5, x, y), "float for int"),
                       ((2.5, True, x, y), "bool for int")):
        ours, want = _error(ax, args), _error(core2, (args,))
        assert ours == want and ours != "(accepted)", f"axpy {what}: {ours!r} != {want!r}"
    notes.append("axpy (float32 + int32 scalars): correct on 3 inputs; int32 overflow, float and "
                 "bool for the int: errors identical to core's")
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


def _raw_floor(kernel: Any, stream_handle: int, values: list[Any], grid: int, block: int,
               smem: int = 0) -> Callable[[], None]:
    """``cuLaunchKernel`` with a parameter block built once: the floor of any launch."""
    from cuda.bindings import driver

    from tvm_backend_cuda import runtime as rt

    params, holders = rt._raw_param_array(values)
    fn = driver.CUfunction(int(kernel.handle))
    addr = ctypes.addressof(params)
    cu_launch = driver.cuLaunchKernel

    keep = (params, holders)  # the driver reads both at every launch

    def raw() -> None:
        _ = keep
        (err,) = cu_launch(fn, grid, 1, 1, block, 1, 1, smem, stream_handle, addr, 0)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(err)

    return raw


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--batches", type=int, default=300)
    ap.add_argument("--smoke", action="store_true", help="compile only, no GPU needed")
    ap.add_argument("--out", default=None,
                    help="replace this script's section of that file (e.g. docs/perf.md)")
    ns = ap.parse_args()
    tvm = _gpu.load_cuda()
    if ns.smoke:
        for name, ex in compile_all(tvm, _gpu.SMOKE_TARGET).items():
            print(f"smoke: {name}: compiled for {ex.arch}", flush=True)
        return 0

    import torch
    from cuda.core import LaunchConfig, launch

    from tvm_backend_cuda import runtime as rt
    from tvm_backend_cuda.fast_call import tensor_guard

    exes = compile_all(tvm, "cuda")
    notes = check(torch, exes)

    a, b, c = (torch.randn(N, device="cuda") for _ in range(3))
    x = torch.randn(2 * ROWS, COLS, device="cuda").to(torch.bfloat16)
    y = torch.empty_like(x)
    ex, tma = exes["add"], exes["tma"]
    ex(a, b, c)
    tma(x, y)
    ex(a, b, c)
    tma(x, y)
    torch.cuda.synchronize()
    kern = ex.module().get_kernel(ex.kernel_names[0])._loaded[0].kernel
    tkern = tma.module().get_kernel(tma.kernel_names[0])._loaded[0].kernel
    [step] = ex.get_function(ex.entry_name).plan.steps
    [tstep] = tma.get_function(tma.entry_name).plan.steps
    cfg = LaunchConfig(grid=tuple(step.grid), block=tuple(step.block))
    handle = torch.cuda.current_stream().cuda_stream
    stream = rt.core_stream(handle)
    pa, pb, pc = a.data_ptr(), b.data_ptr(), c.data_ptr()
    maps = [rt.derived_tensor_map(t, ref[3]) for t, ref in zip((x, y), tstep.args)]
    fk = ex.get_function(ex.entry_name)

    variants: dict[str, Callable[[], Any]] = {
        "bare": lambda: launch(stream, cfg, kern, pa, pb, pc),
        "bare_ptr": lambda: launch(stream, cfg, kern, a.data_ptr(), b.data_ptr(), c.data_ptr()),
        "raw": _raw_floor(kern, handle, [pa, pb, pc], step.grid[0], step.block[0]),
        "ours": lambda: ex(a, b, c),
        "ours_func": lambda: fk(a, b, c),
        "raw_tma": _raw_floor(tkern, handle, maps, tstep.grid[0], tstep.block[0],
                              int(tstep.smem)),
        "ours_tma": lambda: tma(x, y),
        "torch_add": lambda: torch.add(a, b, out=c),
    }
    guard = tensor_guard((a, b, c))
    notes.append(f"torch's C++ tensor guard available: {guard is not None}")
    from tvm_backend_cuda import c_launcher

    notes.append(f"the C launcher of the hot call (tvm_backend_cuda/c_launcher.py): "
                 f"{c_launcher.status()}")
    raw_stream = rt.torch_raw_stream_getter()
    dptr = torch.Tensor.data_ptr
    pieces: dict[str, Callable[[], Any]] = {
        "empty_call": lambda: None,
        "guard_check_3": (lambda: guard(a, b, c)) if guard else (lambda: None),
        "data_ptr_3": lambda: list(map(dptr, (a, b, c))),
        "raw_stream": lambda: raw_stream(0),
    }
    tp = _time(pieces, lambda: None, ns.batch, 50)
    notes.append("pieces, median ns per call: " + ", ".join(
        f"{k} {statistics.median(v) * 1e3:.0f}" for k, v in tp.items()))

    t = _time(variants, torch.cuda.synchronize, ns.batch, ns.batches)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b)
    torch.testing.assert_close(y, (x.float() + 1).to(torch.bfloat16))
    med = {k: statistics.median(v) for k, v in t.items()}
    best = {k: min(v) for k, v in t.items()}
    half = ns.batches // 2
    spread = {k: abs(statistics.median(v[:half]) - statistics.median(v[half:]))
              for k, v in t.items()}
    labels = {
        "bare": "bare `cuda.core.launch(stream, cfg, k, pa, pb, pc)`, pointers pre-extracted",
        "bare_ptr": "bare `cuda.core.launch(..., a.data_ptr(), b.data_ptr(), c.data_ptr())`",
        "raw": "bare `driver.cuLaunchKernel`, parameter block built once (the floor)",
        "ours": "**our executable `ex(a, b, c)`** (vector add: checks + launch)",
        "ours_func": "our `ex.get_function(name)(a, b, c)`",
        "raw_tma": "TMA copy: bare `driver.cuLaunchKernel`, tensor maps encoded once (the floor)",
        "ours_tma": "**our executable `tma(x, y)`** (TMA copy: checks, derived maps, launch)",
        "torch_add": "`torch.add(a, b, out=c)` (reference)",
    }
    props = torch.cuda.get_device_properties(0)
    import cuda.bindings
    import cuda.core

    head = (f"{SECTION}\n\n{datetime.date.today().isoformat()}, {props.name}, "
            f"{platform.node()}, Python {platform.python_version()}, torch {torch.__version__}, "
            f"cuda.core {cuda.core.__version__}, cuda.bindings {cuda.bindings.__version__}, "
            f"commit {_gpu.commit()}\n\n"
            "`PYTHONPATH=core/src:tvm-backend-cuda/src python bench/cuda_launch_overhead.py` "
            f"(vector add 2^12 f32, 3 torch tensors; TMA copy 128x128 bf16, 2 torch tensors; "
            f"{ns.batches} batches of {ns.batch} async launches per row, taking turns)\n\n"
            "| path | median us/launch | best | vs bare (pre-extracted) | vs bare (data_ptr) | "
            "median drift |\n|---|---|---|---|---|---|\n")
    rows = [f"| {labels[k]} | {med[k]:.2f} | {best[k]:.2f} | {med[k] / med['bare']:.2f}x | "
            f"{med[k] / med['bare_ptr']:.2f}x | {spread[k]:.2f} |" for k in variants]
    piece = {k: statistics.median(v) - statistics.median(tp["empty_call"]) for k, v in tp.items()}
    floor = med["bare_ptr"] + piece["guard_check_3"] + piece["raw_stream"]
    verdict = (f"\nThe checked floor: the bare launch with `data_ptr()` x3 plus torch's tensor guard "
               f"and current-stream lookup, measured apart ({floor:.2f} us), is "
               f"{floor / med['bare']:.2f}x of the bare pre-extracted launch: what a call that "
               "checks its tensors and follows torch's stream through torch's Python API pays "
               "(our hot call reads them in C instead where torch has the DLPack C exchange API: "
               "see the C launcher's line below).")
    verdict += "".join(
        f"\nBudget 1.2x of the bare pre-extracted launch: {what} {med[k] / med['bare']:.2f}x -> "
        f"{'within' if med[k] <= 1.2 * med['bare'] else 'OVER'} budget."
        for k, what in (("ours", "array kernel"), ("ours_tma", "tensor-map kernel")))
    text = (head + "\n".join(rows) + "\n" + verdict + "\n\n"
            + "\n".join(f"- {n}" for n in notes) + "\n")
    print(text)
    if ns.out:
        _gpu.write_section(ns.out, text, SECTION)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
