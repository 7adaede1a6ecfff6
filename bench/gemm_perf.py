"""GEMM rows of the CUDA benchmark: our ``bench/kernels/gemm.py`` beside cuBLAS (``torch.matmul``;
``torch._scaled_mm`` for float8) and a Triton GEMM of the same job, in one run.

    PYTHONPATH=core/src:tvm-backend-cuda/src:bench python bench/gemm_perf.py [--quick]

For every shape: the result is checked first (fresh random inputs, the output poisoned with NaN
before the call, relative Frobenius error against a float32 product of the same operands), then
each implementation is timed with CUDA events: the median of ``reps`` calls after warm-up, the
calls rotating over three input sets. TFLOP/s = 2 m n k / time. ``bench/cuda_perf.py`` calls
:func:`rows` for its GEMM table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

SHAPES = [  # (label, dtype, m, n, k)
    ("bf16 4096^3", "bfloat16", 4096, 4096, 4096),
    ("bf16 8192^3", "bfloat16", 8192, 8192, 8192),
    ("bf16 LLM up (4096, 14336, 4096)", "bfloat16", 4096, 14336, 4096),
    ("bf16 LLM down (8192, 4096, 14336)", "bfloat16", 8192, 4096, 14336),
    ("fp8 e4m3 8192^3", "float8_e4m3fn", 8192, 8192, 8192),
]
ODD_SHAPES = [("bf16 odd", "bfloat16", 1000, 1000, 512), ("bf16 odd 2", "bfloat16", 300, 264, 48),
              ("fp8 odd", "float8_e4m3fn", 777, 1032, 256)]


def _time_ms(fn: Any, reps: int, warmup: int, batch: int = 10) -> float:
    """Median over ``reps`` batches of ``batch`` back-to-back calls, timed on the host around a
    device-wide synchronisation. (CUDA events on torch's stream would miss our launches: with
    every buffer reached through a tensor map, no kernel argument is a torch tensor, so the
    executable launches on its own stream.)"""
    import torch

    for i in range(warmup):
        fn(i)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        for i in range(batch):
            fn(i)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3 / batch)
    return statistics.median(times)


def _inputs(dtype: str, m: int, n: int, k: int, sets: int = 3) -> list[tuple[Any, ...]]:
    import torch

    out = []
    for _ in range(sets):
        a = torch.randn(m, k, device="cuda")
        b = torch.randn(n, k, device="cuda")
        if dtype.startswith("float8"):
            sa, sb = a.abs().max() / 448.0, b.abs().max() / 448.0
            a8 = (a / sa).to(torch.float8_e4m3fn)
            b8 = (b / sb).to(torch.float8_e4m3fn)
            out.append((a8, b8, sa.float().reshape(1), sb.float().reshape(1)))
        else:
            out.append((a.to(getattr(torch, dtype)), b.to(getattr(torch, dtype)), None, None))
    return out


def _reference(a: Any, b: Any, sa: Any, sb: Any) -> Any:
    ref = a.float() @ b.float().T
    if sa is not None:
        ref = ref * (sa * sb)
    return ref


def rel_err(out: Any, ref: Any) -> float:
    import torch

    if not torch.isfinite(out.float()).all():
        return float("inf")
    return float((out.float() - ref).norm() / ref.norm())


class Ours:
    """Our kernel for one shape: compiled once, tensor maps encoded once per input set."""

    def __init__(self, dtype: str, m: int, n: int, k: int, num_ctas: int) -> None:
        from kernels.gemm import gemm

        import tvm

        t = time.perf_counter()
        self.func = gemm(m, n, k, dtype, num_ctas=num_ctas)
        self.ex = tvm.compile(self.func, target={"kind": "cuda", "arch": "sm_90a"})
        self.compile_s = time.perf_counter() - t
        self.scaled = dtype.startswith("float8")
        self._maps: dict[tuple[int, int, int], Any] = {}

    def __call__(self, a: Any, b: Any, c: Any, sa: Any = None, sb: Any = None) -> Any:
        from kernels.gemm import tensor_maps

        key = (a.data_ptr(), b.data_ptr(), c.data_ptr())
        maps = self._maps.get(key)
        if maps is None:
            maps = self._maps[key] = tensor_maps(a, b, c)
        if self.scaled:
            self.ex(a, b, float(sa), float(sb), c, *maps)
        else:
            self.ex(a, b, c, *maps)
        return c


def rows(shapes: list[tuple[str, str, int, int, int]] = SHAPES, reps: int = 7,
         warmup: int = 10, with_triton: bool = True) -> list[dict[str, Any]]:
    """Check and time every shape; one dict per shape."""
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = []
    for label, dtype, m, n, k in shapes:
        row = _row(label, dtype, m, n, k, sms, reps, warmup, with_triton)
        out.append(row)
        print(_line(row), flush=True)
    return out


def _row(label: str, dtype: str, m: int, n: int, k: int, sms: int, reps: int, warmup: int,
         with_triton: bool) -> dict[str, Any]:
    import torch
    from triton_gemm import matmul_abt

    row: dict[str, Any] = {"label": label, "dtype": dtype, "m": m, "n": n, "k": k}
    ours = Ours(dtype, m, n, k, sms)
    row["compile_s"] = ours.compile_s
    sets = _inputs(dtype, m, n, k)
    cs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in sets]
    scaled = dtype.startswith("float8")
    # correctness first: poisoned outputs, fresh inputs
    errs = {}
    checked: list[tuple[str, Any]] = [("ours", ours)]
    if with_triton:
        checked.append(("triton", matmul_abt))
    for name, fn in checked:
        a, b, sa, sb = sets[0]
        cs[0].fill_(float("nan"))
        fn(a, b, cs[0], sa, sb)
        torch.cuda.synchronize()
        errs[name] = rel_err(cs[0], _reference(a, b, sa, sb))
    row["err"] = errs
    flop = 2.0 * m * n * k

    def run_ours(i: int) -> None:
        a, b, sa, sb = sets[i % 3]
        ours(a, b, cs[i % 3], sa, sb)

    def run_cublas(i: int) -> None:
        a, b, sa, sb = sets[i % 3]
        if scaled:
            torch._scaled_mm(a, b.T, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
        else:
            torch.matmul(a, b.T, out=cs[i % 3])

    def run_triton(i: int) -> None:
        a, b, sa, sb = sets[i % 3]
        matmul_abt(a, b, cs[i % 3], sa, sb)

    impls = [("ours", run_ours), ("cublas", run_cublas)]
    if with_triton:
        impls.append(("triton", run_triton))
    for name, fn in impls:  # ours, cuBLAS, Triton, then ours and cuBLAS again
        row[f"{name}_ms"] = _time_ms(fn, reps, warmup)
    row["ours2_ms"] = _time_ms(run_ours, reps, warmup)
    row["cublas2_ms"] = _time_ms(run_cublas, reps, warmup)
    for name in ("ours", "cublas", "triton"):
        if f"{name}_ms" in row:
            row[f"{name}_tflops"] = flop / row[f"{name}_ms"] / 1e9
    # the ratio of the two rounds' medians, each round timing ours just before cuBLAS
    row["ratio"] = (row["cublas_ms"] + row["cublas2_ms"]) / (row["ours_ms"] + row["ours2_ms"])
    return row


def _line(r: dict[str, Any]) -> str:
    tri = f"{r['triton_tflops']:.0f} TF ({r['cublas_ms'] / r['triton_ms']:.2f}x)" \
        if "triton_ms" in r else "-"
    errs = ", ".join(f"{k} {v:.1e}" for k, v in r["err"].items())
    return (f"| {r['label']} | {r['ours_ms']:.3f} / {r['ours2_ms']:.3f} ms, "
            f"{r['ours_tflops']:.0f} TF | {r['cublas_ms']:.3f} / {r['cublas2_ms']:.3f} ms, "
            f"{r['cublas_tflops']:.0f} TF | "
            f"{tri} | **{r['ratio']:.2f}x** | {errs} | {r['compile_s']:.1f} s |")


HEADER = ("| GEMM (C = A @ B^T) | ours: time (2 rounds), TFLOP/s | cuBLAS: time (2 rounds), "
          "TFLOP/s | Triton (ratio to cuBLAS) | ours / cuBLAS | rel. error vs fp32 | our compile |\n"
          "|---|---|---|---|---|---|---|")


SECTION = "## Tensor-core GEMM vs cuBLAS (bench/cuda_perf.py)"


def section(results: list[dict[str, Any]], odd: list[str], machine: str) -> str:
    """The GEMM section of docs/perf.md that ``bench/cuda_perf.py --out`` writes."""
    import datetime

    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [SECTION, "",
             f"Run {date} on {machine}. `C = A @ B^T`, f32 accumulation, bf16 out; times: median "
             "of 7 host-timed batches of 10 calls over 3 input sets, two rounds (ours, then "
             "cuBLAS); ratio = cuBLAS's medians / ours. Shapes off the tile: " + "; ".join(odd)
             + ".", "", HEADER, *(_line(r) for r in results)]
    return "\n".join(lines) + "\n"


def check_odd(shapes: list[tuple[str, str, int, int, int]] = ODD_SHAPES) -> list[str]:
    """Correctness at shapes that are not multiples of the tile."""
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    lines = []
    for label, dtype, m, n, k in shapes:
        ours = Ours(dtype, m, n, k, sms)
        a, b, sa, sb = _inputs(dtype, m, n, k, sets=1)[0]
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        ours(a, b, c, sa, sb)
        torch.cuda.synchronize()
        err = rel_err(c, _reference(a, b, sa, sb))
        lines.append(f"{label} ({m}, {n}, {k}) {dtype}: rel err {err:.2e}")
        print(lines[-1], flush=True)
    return lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="4096^3 bf16 only")
    ap.add_argument("--no-triton", action="store_true")
    ns = ap.parse_args()
    from tvm_backend_cuda.plugin import register_backend

    register_backend()
    check_odd()
    print(HEADER)
    rows(SHAPES[:1] if ns.quick else SHAPES, with_triton=not ns.no_triton)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
