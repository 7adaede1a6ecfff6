"""Run one GEMM a few times so ``ncu`` can profile it (the profile behind docs/perf.md's GEMM note).

    ncu --clock-control none -k regex:gemm_sm90 -s 2 -c 1 --section ... \\
        python bench/gemm_ncu.py ours 4096 4096 4096
    ncu --clock-control none -k regex:'nvjet|gemm|xmma|cutlass' -s 2 -c 1 ... \\
        python bench/gemm_ncu.py cublas 4096 4096 4096
    python bench/gemm_ncu.py --smoke     # compile only, no GPU needed
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    if sys.argv[1:2] == ["--smoke"]:  # compile only, no GPU needed
        from gemm_perf import compile_gemm

        ex, _ = compile_gemm("bfloat16", 4096, 4096, 4096, 132, smoke=True)
        print(f"smoke: gemm 4096^3 compiled for {ex.arch}")
        return 0
    import torch

    which, m, n, k = sys.argv[1], *(int(x) for x in sys.argv[2:5])
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    if which == "ours":
        from gemm_perf import compile_gemm

        sms = torch.cuda.get_device_properties(0).multi_processor_count
        ex, _ = compile_gemm("bfloat16", m, n, k, sms)
        for _ in range(4):
            ex(a, b, c)
    else:
        for _ in range(4):
            torch.matmul(a, b.T, out=c)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
