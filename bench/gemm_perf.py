"""GEMM rows of the CUDA benchmark: our ``tvm_backend_cuda.kernels`` GEMM beside cuBLAS (``torch.matmul``;
``torch._scaled_mm`` for float8) and a Triton GEMM of the same job, in one run.

    PYTHONPATH=core/src:tvm-backend-cuda/src python bench/gemm_perf.py [--quick] [--smoke]

Our GEMM is called the way a user calls it: ``ex = tvm.compile(gemm_func(m, n, k,
num_ctas=balanced_grid(m, n, 256, sms)), target="cuda")`` (its default tile, on the balanced
persistent grid) then ``ex(a, b, c)`` (``ex(a, b, scale_a, scale_b, c)`` for float8, the scales
one-element float32 tensors) on torch tensors; the
executable derives the TMA tensor maps from the arrays and launches on torch's current stream.
For every shape: the result is checked first (fresh random inputs, the output poisoned with NaN
before the call, relative Frobenius error against a float32 product of the same operands), then
the implementations are timed with CUDA events on torch's stream (``_gpu.gpu_compare_ms``): the
median of ``--reps`` calls each, rotating over input sets whose total exceeds 3x the L2; after
a warm-up in which each runs in turn, in rounds, each round timing every implementation, the
order rotated (a sustained GEMM holds the GPU at its power limit, so a single pass favours
whichever runs first). TFLOP/s = 2 m n k / time.
``bench/cuda_perf.py`` calls :func:`rows` for its GEMM table.

``--smoke`` needs no GPU: it compiles every kernel the run would time with NVRTC (sm_90a).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import _gpu

SHAPES = [  # (label, dtype, m, n, k)
    ("bf16 4096^3", "bfloat16", 4096, 4096, 4096),
    ("bf16 8192^3", "bfloat16", 8192, 8192, 8192),
    ("bf16 LLM up (4096, 14336, 4096)", "bfloat16", 4096, 14336, 4096),
    ("bf16 LLM down (8192, 4096, 14336)", "bfloat16", 8192, 4096, 14336),
    ("fp8 e4m3 8192^3", "float8_e4m3fn", 8192, 8192, 8192),
]
ODD_SHAPES = [("bf16 odd", "bfloat16", 1000, 1000, 512), ("bf16 odd 2", "bfloat16", 300, 264, 48),
              ("fp8 odd", "float8_e4m3fn", 777, 1032, 256)]
H200_SMS = 132


def compile_gemm(dtype: str, m: int, n: int, k: int, sms: int, smoke: bool = False
                 ) -> tuple[Any, float]:
    """(our executable, compile seconds), compiled as a user would, on the balanced persistent
    grid over ``sms`` SMs (``kernels.balanced_grid``: every CTA the same number of tiles)."""
    tvm = _gpu.load_cuda()
    from tvm_backend_cuda.kernels import balanced_grid, gemm_func

    t = time.perf_counter()
    arch = "sm_90a" if smoke else None
    ctas = balanced_grid(m, n, 256, sms)
    ex = tvm.compile(gemm_func(m, n, k, dtype, num_ctas=ctas, arch=arch),
                     target=_gpu.target(smoke))
    return ex, time.perf_counter() - t


def _inputs(dtype: str, m: int, n: int, k: int, sets: int) -> list[tuple[Any, ...]]:
    """Input sets ``(a, b, scale_a, scale_b, scale_a, scale_b)``: the scales as one-element
    float32 tensors, which ``torch._scaled_mm`` and ours take alike."""
    import torch

    out = []
    for _ in range(sets):
        a = torch.randn(m, k, device="cuda")
        b = torch.randn(n, k, device="cuda")
        if dtype.startswith("float8"):
            sa, sb = a.abs().max() / 448.0, b.abs().max() / 448.0
            a8 = (a / sa).to(torch.float8_e4m3fn)
            b8 = (b / sb).to(torch.float8_e4m3fn)
            sa, sb = sa.float().reshape(()), sb.float().reshape(())
            out.append((a8, b8, sa, sb, sa.reshape(1), sb.reshape(1)))
        else:
            out.append((a.to(getattr(torch, dtype)), b.to(getattr(torch, dtype)), None, None,
                        None, None))
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


def _call_ours(ex: Any, s: tuple[Any, ...], c: Any) -> None:
    a, b, _, _, fa, fb = s
    if fa is None:
        ex(a, b, c)
    else:
        ex(a, b, fa, fb, c)


def rows(shapes: list[tuple[str, str, int, int, int]] = SHAPES, reps: int = 30,
         with_triton: bool = True) -> list[dict[str, Any]]:
    """Check and time every shape; one dict per shape."""
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    l2 = _gpu.l2_bytes()
    out = []
    for label, dtype, m, n, k in shapes:
        row = _row(label, dtype, m, n, k, sms, l2, reps, with_triton)
        out.append(row)
        print(_line(row), flush=True)
        torch.cuda.empty_cache()
    return out


def _row(label: str, dtype: str, m: int, n: int, k: int, sms: int, l2: int, reps: int,
         with_triton: bool) -> dict[str, Any]:
    import torch

    row: dict[str, Any] = {"label": label, "dtype": dtype, "m": m, "n": n, "k": k}
    ex, row["compile_s"] = compile_gemm(dtype, m, n, k, sms)
    esize = 1 if dtype.startswith("float8") else 2
    nsets = _gpu.n_sets((m * k + n * k) * esize + m * n * 2, l2)
    sets = _inputs(dtype, m, n, k, nsets)
    cs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in sets]
    scaled = dtype.startswith("float8")
    checked: list[tuple[str, Any]] = [("ours", lambda s, c: _call_ours(ex, s, c))]
    if with_triton:
        from _triton_gemm import matmul_abt

        checked.append(("triton", lambda s, c: matmul_abt(s[0], s[1], c, s[2], s[3])))
    errs = {}
    for name, fn in checked:  # correctness first: poisoned outputs, fresh inputs, every set
        worst = 0.0
        for s, c in zip(sets, cs):
            c.fill_(float("nan"))
            fn(s, c)
            torch.cuda.synchronize()
            worst = max(worst, rel_err(c, _reference(s[0], s[1], s[2], s[3])))
        errs[name] = worst
    row["err"] = errs
    row["nsets"] = nsets
    flop = 2.0 * m * n * k

    def run_ours(i: int) -> None:
        _call_ours(ex, sets[i], cs[i])

    def run_cublas(i: int) -> None:
        a, b, sa, sb = sets[i][:4]
        if scaled:
            torch._scaled_mm(a, b.T, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
        else:
            torch.matmul(a, b.T, out=cs[i])

    impls = [("ours", run_ours), ("cublas", run_cublas)]
    if with_triton:
        def run_triton(i: int) -> None:
            a, b, sa, sb = sets[i][:4]
            matmul_abt(a, b, cs[i], sa, sb)

        impls.append(("triton", run_triton))
    # timed in turns after a warm-up (_gpu.gpu_compare_ms): no implementation gains from
    # running first on a GPU not yet at its power limit
    row.update({f"{name}_ms": t for name, t in
                _gpu.gpu_compare_ms(dict(impls), nsets, reps).items()})
    for name in ("ours", "cublas", "triton"):
        if f"{name}_ms" in row:
            row[f"{name}_tflops"] = flop / row[f"{name}_ms"] / 1e9
    row["ratio"] = row["cublas_ms"] / row["ours_ms"]
    return row


def _line(r: dict[str, Any]) -> str:
    tri = f"{r['triton_tflops']:.0f} TF ({r['cublas_ms'] / r['triton_ms']:.2f}x)" \
        if "triton_ms" in r else "-"
    errs = ", ".join(f"{k} {v:.1e}" for k, v in r["err"].items())
    return (f"| {r['label']} | {r['ours_ms']:.3f} ms, "
            f"{r['ours_tflops']:.0f} TF | {r['cublas_ms']:.3f} ms, "
            f"{r['cublas_tflops']:.0f} TF | "
            f"{tri} | **{r['ratio']:.2f}x** | {errs} | {r['nsets']} | {r['compile_s']:.1f} s |")


HEADER = ("| GEMM (C = A @ B^T) | ours `ex(a, b, c)`: time, TFLOP/s | cuBLAS: time, "
          "TFLOP/s | Triton (ratio to cuBLAS) | ours / cuBLAS | rel. error vs fp32 "
          "(worst set) | input sets | our compile |\n|---|---|---|---|---|---|---|---|")


SECTION = "## Tensor-core GEMM vs cuBLAS (bench/cuda_perf.py)"


def section(results: list[dict[str, Any]], odd: list[str], machine: str, reps: int) -> str:
    """The GEMM section of docs/perf.md that ``bench/cuda_perf.py --out`` writes."""
    lines = [SECTION, "",
             f"Run {_gpu.now()} on {machine}, commit {_gpu.commit()}. `C = A @ B^T`, f32 "
             "accumulation, bf16 out; ours (128 x 256 tiles on the balanced persistent grid, "
             "`kernels.balanced_grid`) compiled with `target=\"cuda\"` and called as "
             "`ex(a, b, c)` (fp8: `ex(a, b, scale_a, scale_b, c)`), tensor maps derived at "
             f"launch. Times: median of {reps} CUDA-event timed calls on torch's stream, inputs "
             f"rotated over sets > 3x L2, taken in {_gpu.ROUNDS} rounds after a warm-up, the "
             "implementations in turns (`_gpu.gpu_compare_ms`); ratio = cuBLAS's median / "
             "ours. Shapes off the tile: " + "; ".join(odd) + ".", "", HEADER,
             *(_line(r) for r in results)]
    return "\n".join(lines) + "\n"


def check_odd(shapes: list[tuple[str, str, int, int, int]] = ODD_SHAPES) -> list[str]:
    """Correctness at shapes that are not multiples of the tile."""
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    lines = []
    for label, dtype, m, n, k in shapes:
        ex, _ = compile_gemm(dtype, m, n, k, sms)
        s = _inputs(dtype, m, n, k, sets=1)[0]
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        _call_ours(ex, s, c)
        torch.cuda.synchronize()
        err = rel_err(c, _reference(s[0], s[1], s[2], s[3]))
        lines.append(f"{label} ({m}, {n}, {k}) {dtype}: rel err {err:.2e}")
        print(lines[-1], flush=True)
        if not err < 1e-2:
            raise SystemExit(f"gemm_perf: {lines[-1]}: wrong result")
    return lines


def smoke(shapes: list[tuple[str, str, int, int, int]] = SHAPES + ODD_SHAPES) -> None:
    """Compile every kernel a run would time, for sm_90a, with NVRTC (no GPU needed)."""
    for label, dtype, m, n, k in shapes:
        ex, secs = compile_gemm(dtype, m, n, k, H200_SMS, smoke=True)
        src = ex.inspect_source()
        assert "wgmma.mma_async" in src and "CUtensorMap" in src, label
        print(f"smoke: {label}: compiled for {ex.arch} in {secs:.2f} s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4096^3 bf16 only")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--smoke", action="store_true", help="compile only, no GPU needed")
    ns = ap.parse_args()
    if ns.smoke:
        smoke(SHAPES[:1] + ODD_SHAPES if ns.quick else SHAPES + ODD_SHAPES)
        return 0
    _gpu.load_cuda()
    check_odd()
    print(HEADER)
    rows(SHAPES[:1] if ns.quick else SHAPES, ns.reps, with_triton=not ns.no_triton)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
