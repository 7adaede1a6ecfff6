"""Memory-bound kernels on the GPU: ours (``tvm_backend_cuda.kernels``) against torch and Triton, as a
fraction of the device-to-device copy bandwidth measured in the same run.

    PYTHONPATH=core/src:tvm-backend-cuda/src python bench/cuda_perf.py [--out docs/perf.md]
                                                                        [--smoke]

Ours are compiled with ``target="cuda"`` and called as ``ex(*arrays)`` on torch tensors. For
each kernel, shape and dtype: the result is checked against a float64 torch reference (output
poisoned with NaN first, fresh random inputs), then ours, torch's op and a Triton kernel of the
same job (``bench/_triton_kernels.py``) are timed with CUDA events on torch's stream
(``_gpu.gpu_median_ms``): the median of ``--reps`` runs after two warm-up passes, each run on
the next of several input sets whose total exceeds 3x the L2 (so no run reads its inputs from
cache). The ceiling: a 1 GiB ``copy_`` timed the same way, bytes read plus written.
``--out`` replaces the section of that file this script wrote last (or appends one).

``--only add:268435456:float32`` runs one case with few repetitions (for ``ncu``). Then the
GEMM rows (``bench/gemm_perf.py``: our tensor-core GEMM against cuBLAS and Triton) unless
``--no-gemm``, and the kernel library's rows (``bench/_lib_perf.py``: ``kernels.gemm`` tuned, at
the shapes of issue 22, against cuBLAS; fused epilogues against cuBLAS plus the eager epilogue
and ``torch.compile``; float8 fast and accurate against ``torch._scaled_mm``; an MLP block of
``torch.ops.tvm.*`` under ``torch.compile``) unless ``--no-lib``; ``--lib-only`` runs only
those. ``--smoke`` needs no GPU: it compiles every kernel the run would time (NVRTC, sm_90a),
the GEMMs included.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import _gpu

SECTION = "## Memory-bound kernels vs copy bandwidth (bench/cuda_perf.py)"
ROW_SHAPES = [(4096, 4096), (8192, 8192), (32768, 1024)]
ADD_SIZES = [1 << 24, 1 << 28]
EPS = {"rmsnorm": 1e-6, "layernorm": 1e-5}
#: "no slower" allows this factor: the spread of one kernel's median between two runs on the
#: H200 was under 0.5% (e.g. 0.7430 / 0.7428 ms)
NOISE = 1.01


@dataclass
class Case:
    kernel: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def label(self) -> str:
        return f"{self.kernel}:{'x'.join(map(str, self.shape))}:{self.dtype}"


def all_cases() -> list[Case]:
    out = []
    for dt in ("float32", "bfloat16"):
        for n in ADD_SIZES:
            out.append(Case("add", (n,), dt))
    for k in ("softmax", "rmsnorm", "layernorm"):
        for dt in ("float32", "bfloat16"):
            for s in ROW_SHAPES:
                out.append(Case(k, s, dt))
    return out


# -- timing ------------------------------------------------------------------------------------

gpu_median_ms = _gpu.gpu_median_ms
n_sets = _gpu.n_sets


def copy_bandwidth(l2: int, reps: int) -> tuple[float, float]:
    """(bytes/s of a 1 GiB device-to-device copy, read + write; its time in ms)."""
    import torch

    n = (1 << 30) // 4
    srcs = [torch.randn(n, device="cuda") for _ in range(2)]
    dsts = [torch.empty_like(s) for s in srcs]
    ms = gpu_median_ms(lambda i: dsts[i].copy_(srcs[i]), 2, reps)
    return 2 * n * 4 / (ms * 1e-3), ms


# -- the jobs ----------------------------------------------------------------------------------


def _torch_dtype(dt: str) -> Any:
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16}[dt]


def build_ours(case: Case, smoke: bool = False) -> Any:
    tvm = _gpu.load_cuda()
    from tvm_backend_cuda.kernels import add_func, layer_norm_func, rms_norm_func, softmax_func

    factory = {"add": add_func, "softmax": softmax_func, "rmsnorm": rms_norm_func,
               "layernorm": layer_norm_func}[case.kernel]
    return tvm.compile(factory(*case.shape, dtype=case.dtype), target=_gpu.target(smoke))


def make_set(case: Case, gen: Any) -> list[Any]:
    """Inputs then the output, fresh random values (the output poisoned with NaN)."""
    import torch

    dt = _torch_dtype(case.dtype)
    if case.kernel == "add":
        (n,) = case.shape
        ins = [torch.randn(n, device="cuda", generator=gen).to(dt) for _ in range(2)]
        return [*ins, torch.full((n,), float("nan"), device="cuda", dtype=dt)]
    m, n = case.shape
    x = (torch.randn(m, n, device="cuda", generator=gen) * 2).to(dt)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    if case.kernel == "softmax":
        return [x, out]
    w = (torch.rand(n, device="cuda", generator=gen) + 0.5).to(dt)
    if case.kernel == "rmsnorm":
        return [x, w, out]
    b = torch.randn(n, device="cuda", generator=gen).to(dt)
    return [x, w, b, out]


def reference(case: Case, args: list[Any]) -> Any:
    import torch

    ins = [a.double() for a in args[:-1]]
    if case.kernel == "add":
        return (args[0].float() + args[1].float()).to(args[0].dtype).double()
    n = case.shape[1]
    if case.kernel == "softmax":
        return torch.softmax(ins[0], -1)
    if case.kernel == "rmsnorm":
        return torch.nn.functional.rms_norm(ins[0], (n,), ins[1], EPS["rmsnorm"])
    return torch.nn.functional.layer_norm(ins[0], (n,), ins[1], ins[2], EPS["layernorm"])


def torch_op(case: Case) -> Callable[[list[Any]], Any]:
    import torch
    import torch.nn.functional as F  # noqa: N812

    if case.kernel == "add":
        return lambda a: torch.add(a[0], a[1], out=a[2])
    n = case.shape[1]
    if case.kernel == "softmax":
        return lambda a: torch.softmax(a[0], -1)
    if case.kernel == "rmsnorm":
        return lambda a: F.rms_norm(a[0], (n,), a[1], EPS["rmsnorm"])
    return lambda a: F.layer_norm(a[0], (n,), a[1], a[2], EPS["layernorm"])


def triton_op(case: Case) -> Callable[[list[Any]], Any]:
    import _triton_kernels as tk

    if case.kernel == "add":
        return lambda a: tk.add(*a)
    if case.kernel == "softmax":
        return lambda a: tk.softmax(*a)
    if case.kernel == "rmsnorm":
        return lambda a: tk.rmsnorm(*a, eps=EPS["rmsnorm"])
    return lambda a: tk.layernorm(*a, eps=EPS["layernorm"])


def bytes_moved(case: Case) -> int:
    b = 4 if case.dtype == "float32" else 2
    if case.kernel == "add":
        return 3 * case.shape[0] * b
    m, n = case.shape
    params = {"softmax": 0, "rmsnorm": 1, "layernorm": 2}[case.kernel]
    return (2 * m * n + params * n) * b


def rel_err(got: Any, want: Any) -> float:
    import torch

    g = got.double()
    if torch.isnan(g).any():
        return float("nan")
    return float(torch.linalg.vector_norm(g - want) / torch.linalg.vector_norm(want))


# -- the run -------------------------------------------------------------------------------------


def run_case(case: Case, l2: int, reps: int, gen: Any) -> dict[str, Any]:
    import torch

    t0 = time.perf_counter()
    ex = build_ours(case)
    compile_s = time.perf_counter() - t0
    per_set = bytes_moved(case)
    nsets = n_sets(per_set, l2)
    sets = [make_set(case, gen) for _ in range(nsets)]
    # correctness first, on every set (each output poisoned)
    tol = 1e-5 if case.dtype == "float32" else 1e-2
    errs = []
    for args in sets:
        ex(*args)
        torch.cuda.synchronize()
        errs.append(rel_err(args[-1], reference(case, args)))
    err = max(errs)
    ok = err == err and err < tol
    tri = triton_op(case)
    tri_args = [[*a[:-1], torch.empty_like(a[-1])] for a in sets]
    tri(tri_args[0])
    tri_err = rel_err(tri_args[0][-1], reference(case, tri_args[0]))
    ours_ms = gpu_median_ms(lambda i: ex(*sets[i]), nsets, reps)
    top = torch_op(case)
    torch_ms = gpu_median_ms(lambda i: top(sets[i]), nsets, reps)
    tri_ms = gpu_median_ms(lambda i: tri(tri_args[i]), nsets, reps)
    # the ceiling at this size: a copy that reads and writes as many bytes
    half = per_set // 2 // 4
    csrc = [torch.randn(half, device="cuda", generator=gen) for _ in range(nsets)]
    cdst = [torch.empty_like(c) for c in csrc]
    same_ms = gpu_median_ms(lambda i: cdst[i].copy_(csrc[i]), nsets, reps)
    csrc.clear()
    cdst.clear()
    sets.clear()
    tri_args.clear()
    torch.cuda.empty_cache()
    return {"case": case, "ours": ours_ms, "torch": torch_ms, "triton": tri_ms, "err": err,
            "same_copy": same_ms,
            "ok": ok, "tri_err": tri_err, "bytes": per_set, "nsets": nsets,
            "compile_s": compile_s}


machine = _gpu.machine


def table(results: list[dict[str, Any]], copy_bw: float, copy_ms: float,
          info: dict[str, str], reps: int) -> str:
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        SECTION, "",
        f"Run {date} on {info['gpu']} ({info['sms']} SMs, L2 {int(info['l2']) >> 20} MiB), "
        f"driver {info['driver']}, torch {info['torch']}, Triton {info['triton']}, commit "
        f"{_gpu.commit()}. "
        f"Command: `python bench/cuda_perf.py --out docs/perf.md`.", "",
        f"Ceiling: device-to-device copy of 1 GiB (`copy_`), read + write: "
        f"**{copy_bw / 1e12:.3f} TB/s** ({copy_ms:.3f} ms). Times: median of {reps} CUDA-event "
        "timed runs after two warm-up passes, inputs rotated over sets > 3x L2. "
        "`ours/copy` = our bytes moved per second / the 1 GiB copy's (the target is 0.90); "
        "`same-size copy` = a `copy_` that reads and writes as many bytes as the kernel, the "
        "ceiling at that size (launch and ramp included); `err` = relative error of ours vs a "
        "float64 reference (bf16 outputs round to 8 bits of mantissa). `target`: ours/copy >= "
        "0.90 and no slower than torch and Triton (within 1%, the run-to-run spread).", "",
        "| kernel | shape | dtype | ours (ms) | torch (ms) | Triton (ms) | ours TB/s | "
        "ours/copy | same-size copy (ms) | ours/same-size copy | vs torch | vs Triton | err | "
        "target |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c: Case = r["case"]
        tbs = r["bytes"] / (r["ours"] * 1e-3) / 1e12
        frac = tbs * 1e12 / copy_bw
        met = frac >= 0.90 and r["ok"] and r["ours"] <= NOISE * min(r["torch"], r["triton"])
        lines.append(
            f"| {c.kernel} | {'x'.join(map(str, c.shape))} | {c.dtype} | {r['ours']:.4f} | "
            f"{r['torch']:.4f} | {r['triton']:.4f} | {tbs:.2f} | {frac:.3f} | "
            f"{r['same_copy']:.4f} | {r['same_copy'] / r['ours']:.3f} | "
            f"{r['torch'] / r['ours']:.2f}x | {r['triton'] / r['ours']:.2f}x | "
            f"{r['err']:.1e} | {'met' if met else 'MISSED'} |")
    return "\n".join(lines) + "\n"


write_section = _gpu.write_section


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--only", default=None, help="kernel:shape:dtype, e.g. softmax:4096x4096:float32")
    ap.add_argument("--no-gemm", action="store_true", help="skip the GEMM rows (bench/gemm_perf.py)")
    ap.add_argument("--no-lib", action="store_true",
                    help="skip the kernel library's rows (bench/_lib_perf.py)")
    ap.add_argument("--lib-only", action="store_true", help="only the kernel library's rows")
    ap.add_argument("--smoke", action="store_true", help="compile only, no GPU needed")
    ns = ap.parse_args()
    if ns.smoke:
        return smoke(ns.no_gemm, ns.no_lib, ns.lib_only)
    if ns.lib_only:
        return lib_rows(ns.out, ns.reps)

    import torch

    _gpu.load_cuda()
    info = machine()
    l2 = int(info["l2"]) or 60 << 20
    gen = torch.Generator(device="cuda").manual_seed(0)
    cases = all_cases()
    reps = ns.reps
    if ns.only:
        cases = [c for c in cases if c.label == ns.only]
        if not cases:
            kernel, shape, dt = ns.only.split(":")
            cases = [Case(kernel, tuple(int(x) for x in shape.split("x")), dt)]
        reps = min(reps, 5)
    copy_bw, copy_ms = copy_bandwidth(l2, reps)
    print(f"copy: {copy_bw / 1e12:.3f} TB/s", flush=True)
    results = []
    for case in cases:
        r = run_case(case, l2, reps, gen)
        results.append(r)
        frac = r["bytes"] / (r["ours"] * 1e-3) / copy_bw
        print(f"{case.label:32s} ours {r['ours']:.4f} ms torch {r['torch']:.4f} triton "
              f"{r['triton']:.4f} copy {r['same_copy']:.4f} frac {frac:.3f} err {r['err']:.1e} "
              f"(triton {r['tri_err']:.1e})"
              f" sets {r['nsets']} compile {r['compile_s']:.2f}s", flush=True)
    text = table(results, copy_bw, copy_ms, info, reps)
    print(text)
    if ns.out and not ns.only:
        write_section(ns.out, text, SECTION)
    if not ns.only and not ns.no_gemm:
        import gemm_perf  # the GEMM rows: ours vs cuBLAS and Triton, checked first

        odd = gemm_perf.check_odd()
        gtext = gemm_perf.section(gemm_perf.rows(reps=ns.reps), odd,
                                  f"{info['gpu']}, driver {info['driver']}, torch "
                                  f"{info['torch']}, Triton {info['triton']}", ns.reps)
        print(gtext)
        if ns.out:
            write_section(ns.out, gtext, gemm_perf.SECTION)
    lib_ok = ns.only or ns.no_lib or lib_rows(ns.out, ns.reps) == 0
    return 0 if all(r["ok"] for r in results) and lib_ok else 1


def lib_rows(out: str | None, reps: int) -> int:
    """The kernel library's rows (bench/_lib_perf.py); 1 when a row's answer was wrong."""
    import _lib_perf

    _gpu.load_cuda()
    text, ok = _lib_perf.run(reps)
    print(text)
    if out:
        write_section(out, text, _lib_perf.SECTION)
    return 0 if ok else 1


def smoke(no_gemm: bool, no_lib: bool = False, lib_only: bool = False) -> int:
    """Compile every kernel a run would time, for sm_90a, with NVRTC (no GPU needed)."""
    if not no_lib:
        import _lib_perf

        _lib_perf.smoke()
    if lib_only:
        return 0
    for case in all_cases():
        t = time.perf_counter()
        ex = build_ours(case, smoke=True)
        print(f"smoke: {case.label}: compiled for {ex.arch} in {time.perf_counter() - t:.2f} s",
              flush=True)
    if not no_gemm:
        import gemm_perf

        gemm_perf.smoke()
    return 0


if __name__ == "__main__":
    sys.exit(main())
