"""2048 x 2048 x 2048 bf16 GEMM through the Trainium simulator, checked against numpy.

    PYTHONPATH=core/src:tvm-backend-trn/src python bench/trn_gemm_sim.py [--size 2048] [--smoke]

C[M, N] = A[M, K] @ B[K, N], with A passed transposed (``AT[K, M]``, the usual NKI ``lhsT``
operand, because nc_matmul contracts over the partition dim of both inputs). Tiling: 128 on M
(stationary free size), 128 on K (partitions), 512 on N (moving free size = one 2 KiB PSUM
bank of fp32). For each M tile one DMA brings the whole K strip of AT into SBUF as
``[128, K/128, 128]``; for each N tile the K loop streams B tiles and accumulates in PSUM
(``accumulate=k != 0``); the result is evicted PSUM -> SBUF (bf16) and stored to HBM.

A second row compiles the same GEMM written with ``Tx.copy``/``Tx.gemm`` through ``tvm.compile``
for ``aws/trn1/trn1.2xlarge`` and runs the executable (the path users take).

Prints a table with the date and the machine.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import numpy as np

from tvm_backend_trn import isa
from tvm_backend_trn.isa import Var
from tvm_backend_trn.simulator import simulate


def build_gemm(m: int, n: int, k: int, dtype: str = "bfloat16") -> isa.Kernel:
    tm, tn, tk = 128, 512, 128
    assert m % tm == 0 and n % tn == 0 and k % tk == 0, "sizes must be multiples of the tiles"
    kt = k // tk
    at = isa.HbmTensor("AT", (k, m), dtype)
    b = isa.HbmTensor("B", (k, n), dtype)
    c = isa.HbmTensor("C", (m, n), dtype, kind="output")
    esz = isa.dtype_bytes(dtype)
    at_sb = isa.SbufTensor("at_sb", tk, (kt, tm), dtype, offset=0)
    b_sb = isa.SbufTensor("b_sb", tk, (tn,), dtype, offset=kt * tm * esz)
    c_sb = isa.SbufTensor("c_sb", tm, (tn,), dtype, offset=kt * tm * esz + tn * esz)
    ps = isa.PsumTensor("ps", tm, (tn,), "float32", bank=0)
    i, j, kk = Var("i"), Var("j"), Var("kk")
    # AT[kk*128 + p, i*128 + x] for all kk: partition stride m, kk stride 128*m, x stride 1.
    at_strip = isa.AP("AT", tk, ((tk * m, kt), (1, tm)), offset=i * tm, p_stride=m)
    k_loop = isa.Loop("kk", kt, (
        isa.DmaCopy(b_sb.full(), src=b.tile([kk * tk, j * tn], [tk, tn])),
        isa.Matmul(ps.full(), stationary=at_sb.tile((0, tk), (kk, 1), (0, tm)),
                   moving=b_sb.full(), accumulate=kk),
    ))
    n_loop = isa.Loop("j", n // tn, (
        k_loop,
        isa.TensorCopy(c_sb.full(), src=ps.full()),
        isa.DmaCopy(c.tile([i * tm, j * tn], [tm, tn]), src=c_sb.full()),
    ))
    body = (isa.Loop("i", m // tm, (isa.DmaCopy(at_sb.full(), src=at_strip), n_loop)),)
    return isa.Kernel("gemm", (at, b, c), (at_sb, b_sb, c_sb, ps), body)


def main() -> None:
    import ml_dtypes

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--smoke", action="store_true", help="--size 512")
    args = ap.parse_args()
    if args.smoke:
        args.size = 512
    s = args.size
    rng = np.random.default_rng(0)
    a = rng.standard_normal((s, s), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((s, s), dtype=np.float32).astype(ml_dtypes.bfloat16)
    kernel = build_gemm(s, s, s)

    stats: dict[str, int] = {}
    t0 = time.perf_counter()
    out = simulate(kernel, {"AT": np.ascontiguousarray(a.T), "B": b}, stats=stats)["C"]
    t_sim = time.perf_counter() - t0

    # The same GEMM written with Tx tile primitives and compiled by tvm.compile for the trn
    # target: dispatch, layouts, allocation, NKI codegen, then the simulator.
    import tvm
    from tvm_backend_trn.demo import gemm_kernel

    try:
        tvm.backend.load("trn")
    except ImportError:  # a source checkout without installed metadata
        import tvm_backend_trn

        tvm_backend_trn.register_backend()
    t0 = time.perf_counter()
    ex = tvm.compile(gemm_kernel(s, s, s, "bfloat16"), target="aws/trn1/trn1.2xlarge")
    t_compile = time.perf_counter() - t0
    c_dsl = np.zeros((s, s), dtype=ml_dtypes.bfloat16)
    t0 = time.perf_counter()
    ex(a, b, c_dsl)
    t_dsl = time.perf_counter() - t0

    t0 = time.perf_counter()
    ref = a.astype(np.float32) @ b.astype(np.float32)
    t_np = time.perf_counter() - t0
    expect = ref.astype(ml_dtypes.bfloat16).astype(np.float32)
    got = out.astype(np.float32)
    err = float(np.max(np.abs(got - expect)) / np.max(np.abs(expect)))
    err_dsl = float(np.max(np.abs(c_dsl.astype(np.float32) - expect)) / np.max(np.abs(expect)))
    ok = err < 1e-2 and err_dsl < 1e-2

    date = datetime.datetime.now().isoformat(timespec="seconds")
    machine = f"{platform.node()} / {platform.processor() or platform.machine()} / {os.cpu_count()} cores / numpy {np.__version__}"
    print(f"# Trainium simulator GEMM, {date}")
    print(f"# machine: {machine}")
    print(f"# instructions executed: {sum(stats.values())} ({', '.join(f'{k} {v}' for k, v in sorted(stats.items()))})")
    print()
    print("| what | M=N=K | dtype | time (s) | GFLOP/s | max rel err vs numpy | ok |")
    print("|---|---|---|---|---|---|---|")
    flops = 2.0 * s**3
    print(f"| trn simulator (tvm_backend_trn) | {s} | bfloat16 | {t_sim:.2f} | {flops / t_sim / 1e9:.1f} | {err:.2e} | {ok} |")
    print(f"| Tx.gemm via tvm.compile -> trn simulator (compile {t_compile:.2f} s) | {s} | bfloat16 | {t_dsl:.2f} | {flops / t_dsl / 1e9:.1f} | {err_dsl:.2e} | {err_dsl < 1e-2} |")
    print(f"| numpy fp32 matmul (reference) | {s} | float32 | {t_np:.2f} | {flops / t_np / 1e9:.1f} | - | - |")
    if not ok:
        raise SystemExit("simulated GEMM does not match numpy")


if __name__ == "__main__":
    main()
