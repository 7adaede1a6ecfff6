"""FlashAttention forward and backward (``kernels.attention``, ``kernels.attention_backward``)
against torch's attention backends on the GPU.

    PYTHONPATH=core/src:tvm-backend-cuda/src python bench/attention_perf.py [--out docs/perf.md]
                                                                     [--smoke] [--profile]

Rows (issue 23): batch 4, 16 heads, seq 4096 and batch 1, 16 heads, seq 16384, d 128 (the rows
of the targets), then batch 4, 16 heads, seq 1024, d 128 and batch 4, 32 heads, seq 4096, d 64;
bfloat16; causal and not; the forward, then the backward. Each row checks our result against torch's
(relative Frobenius error) before timing, then times ours and ``scaled_dot_product_attention``
under each backend torch has here (cuDNN, flash, efficient) and, for the forward, a Triton
kernel (``_triton_attention.py``), each the median of CUDA-event timed calls on torch's stream
with the inputs rotated over sets past 3x the L2. The forward
counts ``4 * b * h * s^2 * d`` FLOP (halved when causal), the backward 2.5 times that. The
backward rows time ``kernels.attention_backward`` as called by default (its first kernel
makes D = rowsum(dO * O); then dQ either added in float32 with atomics by the dK/dV kernel, or
computed by a second kernel, whichever was faster on the H200), and beside it each of the two
ways forced (``deterministic=False`` / ``True``), against ``torch.autograd.grad`` of torch's
forward output (its backward kernels). ``--smoke`` needs no GPU: it compiles every kernel the rows time, for
sm_90a. ``--profile`` runs each of our kernels a few times at the first shape and times nothing
(the run to give ``ncu``: ``ncu --kernel-name regex:attention --launch-skip 4 ...``).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import _gpu

SECTION = "## FlashAttention forward and backward vs torch (bench/attention_perf.py)"
#: (batch, heads, seq, d)
SHAPES = [(4, 16, 4096, 128), (1, 16, 16384, 128), (4, 16, 1024, 128), (4, 32, 4096, 64)]
#: the rows of issue 23's targets (the others are for the picture: a short sequence, d 64)
TARGET_SHAPES = SHAPES[:2]


def _flops(b: int, h: int, s: int, d: int, causal: bool) -> float:
    return 4.0 * b * h * s * s * d / (2 if causal else 1)


def smoke() -> None:
    tvm = _gpu.load_cuda()
    from tvm_backend_cuda import kernels

    for b, h, s, d in SHAPES:
        for causal in (False, True):
            for factory, kw in ((kernels.attention_func, {}), (kernels.attention_bwd_dkdv_func, {}),
                                (kernels.attention_bwd_dkdv_func, {"dq_atomic": False}),
                                (kernels.attention_bwd_dq_func, {})):
                f = factory(b, h, h, s, s, d, "bfloat16", causal=causal, arch="sm_90a", **kw)
                tvm.compile(f, target=_gpu.SMOKE_TARGET)
            for fn in (kernels.attention_bwd_pre_func, kernels.attention_bwd_post_func):
                tvm.compile(fn(b * h, s, d, "bfloat16"), target=_gpu.SMOKE_TARGET)
            print(f"compiled attention b{b} h{h} s{s} d{d} causal={causal}")


def run(out: str | None, reps: int) -> None:
    _gpu.load_cuda()
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from tvm_backend_cuda import kernels

    F = torch.nn.functional  # noqa: N806 - torch's own spelling
    backends = [("cuDNN", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    l2 = _gpu.l2_bytes()
    rows = []
    bwd_rows = []
    for b, h, s, d in SHAPES:
        nsets = _gpu.n_sets(3 * b * h * s * d * 2, l2)
        sets = [[torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                 for _ in range(3)] for _ in range(nsets)]
        for causal in (False, True):
            q, k, v = sets[0]
            ours = kernels.attention(q, k, v, causal=causal)
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            err = float((ours.float() - ref.float()).norm() / ref.float().norm())
            if not err < 1e-2:
                raise SystemExit(f"attention b{b} h{h} s{s} causal={causal}: error {err:.2e}")
            fl = _flops(b, h, s, d, causal)
            t_ours = _gpu.gpu_median_ms(
                lambda i, sets=sets, causal=causal: kernels.attention(*sets[i], causal=causal),
                nsets, reps)
            theirs: dict[str, float] = {}
            for name, be in backends:
                try:
                    with sdpa_kernel([be]):
                        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        theirs[name] = _gpu.gpu_median_ms(
                            lambda i, sets=sets, causal=causal:
                                F.scaled_dot_product_attention(*sets[i], is_causal=causal),
                            nsets, reps)
                except RuntimeError:  # a backend torch does not have for these inputs
                    continue
            best_name = min(theirs, key=theirs.__getitem__)
            tf = {n: fl / (t * 1e-3) / 1e12 for n, t in theirs.items()}
            ratio = theirs[best_name] / t_ours
            t_tri = _triton_ms(torch, sets, nsets, reps, ref, causal)
            if t_tri is not None:
                tf["Triton"] = fl / (t_tri * 1e-3) / 1e12
            label = f"b{b} h{h} s{s} d{d}{' causal' if causal else ''}"
            print(f"{label}: ours {t_ours:.3f} ms {fl / (t_ours * 1e-3) / 1e12:.0f} TFLOP/s; "
                  + ", ".join(f"{n} {theirs[n]:.3f} ms {tf[n]:.0f}" for n in theirs)
                  + f"; vs fastest ({best_name}) {ratio:.3f}; err {err:.1e}")
            rows.append((label, t_ours, fl / (t_ours * 1e-3) / 1e12, tf, best_name, ratio,
                         err))
            bwd_rows.append(_backward_row(torch, F, kernels, backends, sdpa_kernel, sets, nsets,
                                          reps, (b, h, s, d), causal))
    m = _gpu.machine()
    names = [n for n, _ in backends]
    fwd_names = [*names, "Triton"]
    text = [SECTION, "",
            f"Run {_gpu.now()} on {m['gpu']}, driver {m['driver']}, torch {m['torch']}, "
            f"commit {_gpu.commit()}. Command: `python bench/attention_perf.py --out "
            f"docs/perf.md`. Ours: `kernels.attention` and `kernels.attention_backward` "
            f"(bfloat16; the backward rows against `torch.autograd.grad` of each backend's "
            f"forward; 'atomic dQ' and 'dQ kernel' force `deterministic=False` / `True`). Times: "
            f"median of {reps} CUDA-event timed calls on torch's stream, inputs rotated past "
            f"the L2. TFLOP/s count 4 b h s^2 d, halved when causal.", "",
            "| shape | ours (ms) | ours TFLOP/s | " + " | ".join(f"{n} TFLOP/s" for n in fwd_names)
            + " | fastest torch / ours | err | target >= 0.95 |",
            "|---|---|---|" + "---|" * len(fwd_names) + "---|---|---|"]
    for label, t, tfo, tf, best, ratio, err in rows:
        cells = " | ".join(f"{tf[n]:.0f}" if n in tf else "-" for n in fwd_names)
        text.append(f"| {label} | {t:.3f} | {tfo:.0f} | {cells} | **{ratio:.3f}** ({best}) | "
                    f"{err:.1e} | {_verdict(label, ratio, 0.95)} |")
    text += ["", "| backward | ours (ms) | ours TFLOP/s | atomic dQ TFLOP/s | dQ kernel TFLOP/s | "
             + " | ".join(f"{n} TFLOP/s" for n in names)
             + " | fastest torch / ours | worst err (dq, dk, dv) | target >= 0.85 |",
             "|---|---|---|---|---|" + "---|" * len(names) + "---|---|---|"]
    for label, t, tfo, tf, best, ratio, err, tatom, tdet in bwd_rows:
        if math.isnan(t):
            text.append(f"| {label} | WRONG: error {err:.1e} against torch, not timed |")
            continue
        cells = " | ".join(f"{tf[n]:.0f}" if n in tf else "-" for n in names)
        text.append(f"| {label} | {t:.3f} | {tfo:.0f} | {tatom:.0f} | {tdet:.0f} | {cells} | "
                    f"**{ratio:.3f}** ({best}) | {err:.1e} | "
                    f"{_verdict(label, ratio, 0.85)} |")
    section = "\n".join(text) + "\n"
    print(section)
    if out:
        _gpu.write_section(out, section, SECTION)


def _verdict(label: str, ratio: float, target: float) -> str:
    """met / MISSED for the rows of the targets, - for the others."""
    if label.removesuffix(" causal") not in {f"b{b} h{h} s{s} d{d}" for b, h, s, d in TARGET_SHAPES}:
        return "-"
    return "met" if ratio >= target else "MISSED"


def _triton_ms(torch: Any, sets: list[list[Any]], nsets: int, reps: int, ref: Any,
               causal: bool) -> float | None:
    """The Triton reference's time (``_triton_attention``), after checking it against torch's
    result; None (and why, printed) where Triton is missing, fails or is wrong."""
    try:
        import _triton_attention
    except ImportError as e:
        print(f"Triton reference skipped: {e}")
        return None
    try:
        got = _triton_attention.attention(*sets[0], causal)
        err = float((got.float() - ref.float()).norm() / ref.float().norm())
        if not err < 1e-2:
            print(f"Triton reference WRONG (error {err:.2e}); not timed")
            return None
        return _gpu.gpu_median_ms(lambda i: _triton_attention.attention(*sets[i], causal),
                                  nsets, reps)
    except Exception as e:  # a reference that does not run here is a missing column
        print(f"Triton reference failed: {type(e).__name__}: {e}")
        return None


def _backward_row(torch: Any, F: Any, kernels: Any, backends: list[Any], sdpa_kernel: Any,
                  sets: list[list[Any]], nsets: int, reps: int, shape: tuple[int, int, int, int],
                  causal: bool) -> tuple[Any, ...]:
    """Time our backward against torch's for each backend; check it first."""
    b, h, s, d = shape
    fl = 2.5 * _flops(b, h, s, d, causal)
    grads = [torch.randn_like(st[0]) for st in sets]
    outs = [kernels.attention(*st, causal=causal, return_lse=True) for st in sets]
    q, k, v = (t.detach().requires_grad_() for t in sets[0])
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    want = torch.autograd.grad(ref, (q, k, v), grads[0])
    err = 0.0
    for det in (False, True):
        got = kernels.attention_backward(*sets[0], *outs[0], grads[0], causal=causal,
                                         deterministic=det)
        err = max([err] + [float((g.float() - w.float()).norm() / w.float().norm())
                           for g, w in zip(got, want)])
    label = f"b{b} h{h} s{s} d{d}{' causal' if causal else ''}"
    if not err < 2e-2:  # reported in the table, not timed (the forward rows still count)
        print(f"backward {label}: WRONG, error {err:.2e} against torch; not timed")
        return label, math.nan, math.nan, {}, "-", math.nan, err, math.nan, math.nan
    t_ours = _gpu.gpu_median_ms(
        lambda i: kernels.attention_backward(*sets[i], *outs[i], grads[i], causal=causal),
        nsets, reps)
    t_atom = _gpu.gpu_median_ms(
        lambda i: kernels.attention_backward(*sets[i], *outs[i], grads[i], causal=causal,
                                             deterministic=False), nsets, reps)
    t_det = _gpu.gpu_median_ms(
        lambda i: kernels.attention_backward(*sets[i], *outs[i], grads[i], causal=causal,
                                             deterministic=True), nsets, reps)
    theirs: dict[str, float] = {}
    for name, be in backends:
        try:
            with sdpa_kernel([be]):
                fwd = []
                for st in sets:
                    leaves = [t.detach().requires_grad_() for t in st]
                    fwd.append((leaves, F.scaled_dot_product_attention(*leaves,
                                                                       is_causal=causal)))
                theirs[name] = _gpu.gpu_median_ms(
                    lambda i, fwd=fwd: torch.autograd.grad(fwd[i][1], fwd[i][0], grads[i],
                                                           retain_graph=True), nsets, reps)
        except RuntimeError:  # a backend torch does not have for these inputs
            continue
    best = min(theirs, key=theirs.__getitem__)
    tf = {n: fl / (t * 1e-3) / 1e12 for n, t in theirs.items()}
    ratio = theirs[best] / t_ours
    print(f"backward {label}: ours {t_ours:.3f} ms {fl / (t_ours * 1e-3) / 1e12:.0f} TFLOP/s; "
          + ", ".join(f"{n} {theirs[n]:.3f} ms {tf[n]:.0f}" for n in theirs)
          + f"; vs fastest ({best}) {ratio:.3f}; err {err:.1e}; atomic dQ {t_atom:.3f} ms, "
          + f"dQ kernel {t_det:.3f} ms")
    return (label, t_ours, fl / (t_ours * 1e-3) / 1e12, tf, best, ratio, err,
            fl / (t_atom * 1e-3) / 1e12, fl / (t_det * 1e-3) / 1e12)


def profile() -> None:
    """Our kernels, a few calls each at the first shape, causal and not (for ``ncu``)."""
    _gpu.load_cuda()
    import torch

    from tvm_backend_cuda import kernels

    b, h, s, d = SHAPES[0]
    q, k, v, g = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    for causal in (False, True):
        for _ in range(3):
            out, lse = kernels.attention(q, k, v, causal=causal, return_lse=True)
            kernels.attention_backward(q, k, v, out, lse, g, causal=causal)
    torch.cuda.synchronize()
    print(f"profiled b{b} h{h} s{s} d{d}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None, help="write the table into this markdown file")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--smoke", action="store_true", help="compile only, no GPU needed")
    ap.add_argument("--profile", action="store_true", help="run our kernels for ncu, no timing")
    args = ap.parse_args()
    if args.smoke:
        smoke()
        return
    if args.profile:
        profile()
        return
    if not _gpu.has_gpu():
        raise SystemExit("attention_perf.py needs a CUDA GPU (use --smoke to compile only)")
    run(args.out, args.reps)


if __name__ == "__main__":
    main()
