"""The kernel library's rows of ``bench/cuda_perf.py`` (issue 22): ``kernels.gemm`` (tuned)
against cuBLAS at the listed shapes, the fused epilogues against cuBLAS plus the eager epilogue
and against ``torch.compile`` of the same, float8 fast and accurate against
``torch._scaled_mm`` (with each one's error), and an MLP block of ``torch.ops.tvm.*`` under
``torch.compile(fullgraph=True)`` against the same block eager and under ``torch.compile``.

Every row is checked before it is timed (relative Frobenius error against a float32 reference
of the same operands, or against eager for the block); times are ``_gpu.gpu_compare_ms`` (CUDA
events on torch's stream, inputs rotated over sets past 3x the L2; ours and the references of
a row timed in turns, in rounds after a warm-up, so that none gains from running first on a GPU
below its power limit). ``smoke()`` compiles
every kernel the rows would run, for sm_90a, with NVRTC (no GPU)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import _gpu

SECTION = "## Kernel library vs torch (bench/cuda_perf.py)"
H200_SMS = 132
#: (label, m, n, k): C[m, n] = A[m, k] @ B[n, k]^T
GEMM_SHAPES = [("4096^3", 4096, 4096, 4096), ("8192^3", 8192, 8192, 8192),
               ("LLM up 4096x14336x4096", 4096, 14336, 4096),
               ("LLM down 8192x4096x14336", 8192, 4096, 14336),
               ("1000x4096x4096", 1000, 4096, 4096), ("2048^3", 2048, 2048, 2048),
               ("16384x1024x8192", 16384, 1024, 8192)]
FUSED = [("bias + SiLU", 4096, 14336, 4096, {"bias": True, "activation": "silu"}),
         ("residual", 4096, 4096, 14336, {"residual": True})]
FP8 = (8192, 8192, 8192)
MLP = (4096, 4096, 14336)  # tokens, hidden, ffn


# -- compile only ----------------------------------------------------------------------------------


def smoke_kernels() -> list[tuple[str, tuple[Any, ...], Callable[[], Any]]]:
    """(label, key, factory call) of every kernel the rows run, in its untuned configuration
    (the MLP block's GEMMs are the fused rows' kernels: one key)."""
    from tvm_backend_cuda import kernels

    def gemm(label: str, m: int, n: int, k: int, dtype: str = "bfloat16", **kw: Any
             ) -> tuple[str, tuple[Any, ...], Callable[[], Any]]:
        cfg = kernels.gemm_candidates(m, n, k, dtype, kw.get("accurate", False))(
            "sm_90a", H200_SMS)[0]
        key = (m, n, k, dtype, tuple(sorted(kw.items())))
        return label, key, lambda: kernels.gemm_func(m, n, k, dtype, arch="sm_90a", **kw, **cfg)

    out = [gemm(f"gemm {label}", m, n, k) for label, m, n, k in GEMM_SHAPES]
    out += [gemm(f"gemm {label} {m}x{n}x{k}", m, n, k, **kw) for label, m, n, k, kw in FUSED]
    out += [gemm("fp8 fast", *FP8, "float8_e4m3fn"),
            gemm("fp8 accurate", *FP8, "float8_e4m3fn", accurate=True)]
    t, h, f = MLP
    out += [("mlp rms_norm", ("rms_norm", t, h),
             lambda: kernels.rms_norm_func(t, h, "bfloat16", 1e-6)),
            gemm("mlp up", t, f, h, bias=True, activation="silu"),
            gemm("mlp down", t, h, f, residual=True)]
    return out


def smoke() -> None:
    tvm = _gpu.load_cuda()
    seen = set()
    for label, key, make in smoke_kernels():
        if key in seen:
            continue
        seen.add(key)
        t = time.perf_counter()
        ex = tvm.compile(make(), target=_gpu.target(True))
        print(f"smoke: {label}: compiled for {ex.arch} in {time.perf_counter() - t:.2f} s",
              flush=True)


# -- the rows --------------------------------------------------------------------------------------


def _rel(got: Any, want: Any) -> float:
    import torch

    g = got.float()
    if not torch.isfinite(g).all():
        return float("inf")
    return float((g - want).norm() / want.norm())


def _sets(make: Callable[[], Any], per_set: int) -> list[Any]:
    return [make() for _ in range(_gpu.n_sets(per_set, _gpu.l2_bytes()))]


def _tuned(before: int) -> str:
    """The GEMM configuration the calls since ``tvm.autotune.history[before]`` ran (the
    tuner's answer: measured now or read from an earlier run's record); every candidate's time
    from the record goes to stdout."""
    import json

    from tvm import autotune

    new = [h for h in autotune.history[before:] if h["kernel"].endswith("gemm")]
    if not new:
        return "?"
    h = new[-1]
    try:
        results = json.loads(h["record"].read_text())["results"] if h["record"] else []
    except (OSError, ValueError, KeyError):
        results = []
    for r in results:
        ms = f"{r['ms']:.3f} ms" if r.get("ms") is not None else r.get("error")
        print(f"  candidate {r['config']}: {ms}", flush=True)
    return ", ".join(f"{k}={v}" for k, v in h["config"].items() if k != "group_m" or v != 8)


def gemm_rows(reps: int) -> list[dict[str, Any]]:


    return [_gemm_row(label, m, n, k, reps) for label, m, n, k in GEMM_SHAPES]


def _gemm_row(label: str, m: int, n: int, k: int, reps: int) -> dict[str, Any]:
    import torch

    from tvm import autotune
    from tvm_backend_cuda import kernels

    def make() -> tuple[Any, Any, Any]:
        return (torch.randn(m, k, device="cuda").to(torch.bfloat16),
                (torch.randn(n, k, device="cuda") / math.sqrt(k)).to(torch.bfloat16),
                torch.empty(m, n, device="cuda", dtype=torch.bfloat16))

    sets = _sets(make, (m * k + n * k + m * n) * 2)
    t = time.perf_counter()
    a, b, c = sets[0]
    c.fill_(float("nan"))
    before = len(autotune.history)
    kernels.gemm(a, b, c)  # compiles (and tunes: an earlier run's record is reused)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t
    config = _tuned(before)
    err = _rel(c, a.float() @ b.float().T)
    tm = _gpu.gpu_compare_ms({
        "ours": lambda i: kernels.gemm(sets[i][0], sets[i][1], sets[i][2]),
        "cublas": lambda i: torch.matmul(sets[i][0], sets[i][1].T, out=sets[i][2])},
        len(sets), reps)
    row = {"label": label, "ours": tm["ours"], "cublas": tm["cublas"],
           "err": err, "ok": err < 1e-2, "first_s": first_s, "tflops": 2 * m * n * k / 1e9,
           "config": config}
    row["ratio"] = row["cublas"] / row["ours"]
    print(f"gemm {label}: ours {row['ours']:.3f} ms cuBLAS {row['cublas']:.3f} ms "
          f"ratio {row['ratio']:.3f} err {err:.1e} first call {first_s:.1f} s ({config})",
          flush=True)
    sets.clear()
    torch.cuda.empty_cache()
    return row


def fused_rows(reps: int) -> list[dict[str, Any]]:
    return [_fused_row(label, m, n, k, kw, reps) for label, m, n, k, kw in FUSED]


def _fused_row(label: str, m: int, n: int, k: int, kw: dict[str, Any], reps: int
               ) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F  # noqa: N812

    from tvm import autotune
    from tvm_backend_cuda import kernels

    def make() -> tuple[Any, ...]:
        return (torch.randn(m, k, device="cuda").to(torch.bfloat16),
                (torch.randn(n, k, device="cuda") / math.sqrt(k)).to(torch.bfloat16),
                torch.randn(n, device="cuda").to(torch.bfloat16),
                torch.randn(m, n, device="cuda").to(torch.bfloat16),
                torch.empty(m, n, device="cuda", dtype=torch.bfloat16))

    if kw.get("residual"):
        def eager(a: Any, b: Any, bias: Any, res: Any) -> Any:
            return torch.matmul(a, b.T) + res

        def ours(s: tuple[Any, ...]) -> Any:
            return kernels.gemm(s[0], s[1], s[4], residual=s[3])
    else:
        def eager(a: Any, b: Any, bias: Any, res: Any) -> Any:
            return F.silu(torch.matmul(a, b.T) + bias)

        def ours(s: tuple[Any, ...]) -> Any:
            return kernels.gemm(s[0], s[1], s[4], bias=s[2], activation="silu")

    compiled = torch.compile(eager, fullgraph=True, dynamic=False)
    sets = _sets(make, (m * k + n * k + 2 * m * n) * 2)
    s0 = sets[0]
    before = len(autotune.history)
    got = ours(s0)
    torch.cuda.synchronize()
    config = _tuned(before)
    want = eager(*[x.float() for x in s0[:4]])
    err = _rel(got, want)
    err_c = _rel(compiled(*s0[:4]), want)
    t = _gpu.gpu_compare_ms({"ours": lambda i: ours(sets[i]),
                             "eager": lambda i: eager(*sets[i][:4]),
                             "compiled": lambda i: compiled(*sets[i][:4])}, len(sets), reps)
    t_ours, t_eager, t_comp = t["ours"], t["eager"], t["compiled"]
    row = {"label": f"{label} {m}x{n}x{k}", "ours": t_ours, "eager": t_eager,
           "compiled": t_comp, "err": err, "err_compiled": err_c, "ok": err < 2e-2,
           "config": config}
    print(f"fused {row['label']}: ours {t_ours:.3f} eager {t_eager:.3f} compile "
          f"{t_comp:.3f} ms, err {err:.1e}", flush=True)
    sets.clear()
    torch.cuda.empty_cache()
    return row


def fp8_rows(reps: int) -> list[dict[str, Any]]:
    import torch

    from tvm import autotune
    from tvm_backend_cuda import kernels

    m, n, k = FP8

    def make() -> tuple[Any, ...]:
        a, b = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
        sa, sb = a.abs().max() / 448, b.abs().max() / 448
        return ((a / sa).to(torch.float8_e4m3fn), (b / sb).to(torch.float8_e4m3fn),
                sa.float().reshape(1), sb.float().reshape(1),
                torch.empty(m, n, device="cuda", dtype=torch.bfloat16))

    sets = _sets(make, (m * k + n * k) + m * n * 2)
    A, B, sa, sb, c = sets[0]
    ref = (A.double() @ B.double().T) * (sa.double() * sb.double())
    ref = ref.float()

    def scaled_mm(s: tuple[Any, ...]) -> Any:
        return torch._scaled_mm(s[0], s[1].T, scale_a=s[2].reshape(()), scale_b=s[3].reshape(()),
                                out_dtype=torch.bfloat16)

    err_cublas = _rel(scaled_mm(sets[0]), ref)

    def ours(s: tuple[Any, ...], accurate: bool) -> Any:
        return kernels.gemm(s[0], s[1], s[4], scale_a=s[2], scale_b=s[3], accurate=accurate)

    errs, configs = {}, {}
    for accurate in (False, True):  # checked (and tuned) before anything is timed
        before = len(autotune.history)
        got = ours(sets[0], accurate)
        torch.cuda.synchronize()
        errs[accurate] = _rel(got, ref)
        configs[accurate] = _tuned(before)
    t = _gpu.gpu_compare_ms({"fast": lambda i: ours(sets[i], False),
                             "accurate": lambda i: ours(sets[i], True),
                             "cublas": lambda i: scaled_mm(sets[i])}, len(sets), reps)
    rows = []
    for accurate in (False, True):
        mode = "accurate" if accurate else "fast"
        err = errs[accurate]
        row = {"label": f"fp8 {mode} {m}x{n}x{k}", "ours": t[mode], "cublas": t["cublas"],
               "ratio": t["cublas"] / t[mode], "err": err, "err_cublas": err_cublas,
               "ok": err < 3e-2, "config": configs[accurate]}
        print(f"{row['label']}: ours {t[mode]:.3f} _scaled_mm {t['cublas']:.3f} ms ratio "
              f"{row['ratio']:.3f}, err {err:.3e} (_scaled_mm {err_cublas:.3e})", flush=True)
        rows.append(row)
    sets.clear()
    torch.cuda.empty_cache()
    return rows


def mlp_row(reps: int) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F  # noqa: N812

    import tvm_backend_cuda.kernels  # noqa: F401 - registers torch.ops.tvm.*

    t, h, f = MLP
    g = torch.Generator(device="cuda").manual_seed(0)
    w_norm = (torch.rand(h, device="cuda", generator=g) + 0.5).to(torch.bfloat16)
    w1 = (torch.randn(f, h, device="cuda", generator=g) / math.sqrt(h)).to(torch.bfloat16)
    b1 = (torch.randn(f, device="cuda", generator=g) * 0.1).to(torch.bfloat16)
    w2 = (torch.randn(h, f, device="cuda", generator=g) / math.sqrt(f)).to(torch.bfloat16)

    def ours_block(x: Any) -> Any:
        y = torch.ops.tvm.rms_norm(x, w_norm, 1e-6)
        y = torch.ops.tvm.gemm(y, w1, bias=b1, activation="silu")
        return torch.ops.tvm.gemm(y, w2, residual=x)

    def torch_block(x: Any) -> Any:
        y = F.rms_norm(x, (h,), w_norm, 1e-6)
        y = F.silu(F.linear(y, w1, b1))
        return F.linear(y, w2) + x

    explain = torch._dynamo.explain(ours_block)(torch.randn(t, h, device="cuda").to(torch.bfloat16))
    ours = torch.compile(ours_block, fullgraph=True, dynamic=False)
    theirs = torch.compile(torch_block, fullgraph=True, dynamic=False)
    sets = _sets(lambda: torch.randn(t, h, device="cuda").to(torch.bfloat16), t * h * 2 * 2)
    x = sets[0]
    want = torch_block(x)
    err = _rel(ours(x), want.float())
    err_c = _rel(theirs(x), want.float())
    tm = _gpu.gpu_compare_ms({"ours": lambda i: ours(sets[i]),
                              "eager": lambda i: torch_block(sets[i]),
                              "compiled": lambda i: theirs(sets[i])}, len(sets), reps)
    t_ours, t_eager, t_comp = tm["ours"], tm["eager"], tm["compiled"]
    row = {"label": f"MLP block {t} tokens, hidden {h}, ffn {f}, bf16", "ours": t_ours,
           "eager": t_eager, "compiled": t_comp, "err": err, "err_compiled": err_c,
           "breaks": explain.graph_break_count, "ok": err < 2e-2 and
           explain.graph_break_count == 0}
    print(f"mlp: ours {t_ours:.3f} eager {t_eager:.3f} compile {t_comp:.3f} ms, err {err:.1e}, "
          f"graph breaks {explain.graph_break_count}", flush=True)
    sets.clear()
    torch.cuda.empty_cache()
    return row


def run(reps: int) -> tuple[str, bool]:
    """Every row, then the section of docs/perf.md; (text, all rows correct)."""
    info = _gpu.machine()
    g, fu, f8, mlp = gemm_rows(reps), fused_rows(reps), fp8_rows(reps), mlp_row(reps)
    ok = all(r["ok"] for r in [*g, *fu, *f8, mlp])
    return section(g, fu, f8, mlp, info, reps), ok


def _met(flag: bool) -> str:
    return "met" if flag else "MISSED"


def section(g: list[dict[str, Any]], fu: list[dict[str, Any]], f8: list[dict[str, Any]],
            mlp: dict[str, Any], info: dict[str, str], reps: int) -> str:
    lines = [
        SECTION, "",
        f"Run {_gpu.now()} on {info['gpu']}, driver {info['driver']}, torch {info['torch']}, "
        f"commit {_gpu.commit()}. Command: `python bench/cuda_perf.py --out docs/perf.md`. "
        f"Ours: `tvm_backend_cuda.kernels` called on torch tensors (tuned by `tvm.autotune` on "
        f"its first call; the record in the cache directory is reused by later runs). Times: "
        f"median of {reps} CUDA-event timed calls on torch's stream, inputs rotated over sets "
        f"> 3x L2; a row's implementations timed in turns, {_gpu.ROUNDS} rounds after a "
        f"warm-up (`_gpu.gpu_compare_ms`). Every row checked first (relative error vs a float32 reference).", "",
        "| GEMM bf16 (m x n x k) | ours (ms) | cuBLAS `torch.matmul` (ms) | ours TFLOP/s | "
        "cuBLAS / ours | err | target >= 0.95 | tuned config |",
        "|---|---|---|---|---|---|---|---|"]
    for r in g:
        lines.append(f"| {r['label']} | {r['ours']:.3f} | {r['cublas']:.3f} | "
                     f"{r['tflops'] / r['ours']:.0f} | **{r['ratio']:.3f}** | {r['err']:.1e} | "
                     f"{_met(r['ok'] and r['ratio'] >= 0.95)} | {r['config']} |")
    lines += ["", "| fused GEMM | ours (ms) | cuBLAS + eager epilogue (ms) | `torch.compile` "
              "(ms) | vs eager (>= 1.15) | vs compile (>= 1.0) | err | target | tuned config |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in fu:
        ve, vc = r["eager"] / r["ours"], r["compiled"] / r["ours"]
        goal = ve >= 1.15 and vc >= 1.0 if "SiLU" in r["label"] else ve >= 1.0
        lines.append(f"| {r['label']} | {r['ours']:.3f} | {r['eager']:.3f} | "
                     f"{r['compiled']:.3f} | {ve:.2f}x | {vc:.2f}x | {r['err']:.1e} | "
                     f"{_met(r['ok'] and goal)} | {r['config']} |")
    lines += ["", "| fp8 e4m3 | ours (ms) | `torch._scaled_mm` (ms) | _scaled_mm / ours | "
              "err ours | err _scaled_mm | target | tuned config |",
              "|---|---|---|---|---|---|---|---|"]
    for r in f8:
        goal = r["ratio"] >= (0.9 if "accurate" in r["label"] else 1.0)
        if "accurate" in r["label"]:
            goal = goal and r["err"] <= r["err_cublas"]
        lines.append(f"| {r['label']} | {r['ours']:.3f} | {r['cublas']:.3f} | "
                     f"{r['ratio']:.3f} | {r['err']:.3e} | {r['err_cublas']:.3e} | "
                     f"{_met(r['ok'] and goal)} | {r['config']} |")
    ve, vc = mlp["eager"] / mlp["ours"], mlp["compiled"] / mlp["ours"]
    lines += ["", "| block | `torch.ops.tvm.*` under `torch.compile` (ms) | eager (ms) | "
              "`torch.compile` (ms) | vs eager | vs compile | graph breaks | err vs eager | "
              "target |", "|---|---|---|---|---|---|---|---|---|",
              f"| {mlp['label']} | {mlp['ours']:.3f} | {mlp['eager']:.3f} | "
              f"{mlp['compiled']:.3f} | {ve:.2f}x | {vc:.2f}x | {mlp['breaks']} | "
              f"{mlp['err']:.1e} | {_met(mlp['ok'] and ve > 1 and vc > 1)} |"]
    return "\n".join(lines) + "\n"
