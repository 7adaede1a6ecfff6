"""All-gather and all-reduce written with NVSHMEM device calls, one process per GPU, checked
against (and timed beside) torch.distributed's NCCL collectives.

    python examples/nvshmem_collectives.py --nprocs 2 --check --bench

Each process is one PE: it joins torch.distributed (NCCL), receives PE 0's NVSHMEM unique id by
broadcast (NvshmemContext.from_torch_distributed), allocates symmetric buffers and launches kernels
that put their data straight into the other GPUs' memory. NVLink multicast stays off
(NVSHMEM_DISABLE_NVLS=1, NCCL_NVLS_ENABLE=0), set before anything initialises.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

SAFETY_ENV = {"NVSHMEM_DISABLE_NVLS": "1", "NCCL_NVLS_ENABLE": "0",
              "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
os.environ.update(SAFETY_ENV)  # before torch/NCCL/NVSHMEM read them, in this process and children

KERNELS = r"""
#include <nvshmem.h>
#include <nvshmemx.h>

// All-gather: dst (symmetric, n_pes * n) gets every PE's src (n floats) at offset pe * n.
// Any number of blocks; block b sends chunk b of src to every PE. Completion and visibility come
// from the nvshmemx_barrier_all_on_stream the host enqueues after the kernel.
extern "C" __global__ void allgather(float* dst, const float* src, long long n) {
  int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  long long chunk = (n + gridDim.x - 1) / gridDim.x;
  long long lo = blockIdx.x * chunk;
  long long len = lo < n ? (n - lo < chunk ? n - lo : chunk) : 0;
  if (len > 0) {
    for (int i = 0; i < npes; ++i) {
      int pe = (me + i) % npes;  // stagger so PEs do not all hit PE 0 first
      nvshmemx_putmem_nbi_block(dst + me * n + lo, src + lo, len * sizeof(float), pe);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) nvshmem_quiet();
}

// All-reduce (sum) in one block: all-gather into work (symmetric, n_pes * n), barrier, add.
extern "C" __global__ void allreduce_sum(float* out, float* work, const float* src, int n) {
  int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  for (int i = 0; i < npes; ++i) {
    int pe = (me + i) % npes;
    nvshmemx_putmem_nbi_block(work + (size_t)me * n, src, (size_t)n * sizeof(float), pe);
  }
  nvshmemx_barrier_all_block();
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    float acc = 0.f;
    for (int p = 0; p < npes; ++p) acc += work[(size_t)p * n + j];
    out[j] = acc;
  }
  nvshmemx_barrier_all_block();
}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank: int, nprocs: int, args: argparse.Namespace, port: int) -> None:
    import torch
    import torch.distributed as dist

    from tvm_backend_cuda.nvshmem import NvshmemContext

    os.environ.update(SAFETY_ENV)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=nprocs, device_id=torch.device("cuda", rank))
    ctx = NvshmemContext.from_torch_distributed(device=rank, symmetric_size=args.heap << 20)
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"{ctx!r}; {torch.cuda.get_device_name(rank)}")
    mod = ctx.compile(KERNELS, {"allgather": ["ptr", "ptr", "int64"],
                                "allreduce_sum": ["ptr", "ptr", "ptr", "int32"]})
    stream = torch.cuda.current_stream()

    def allgather(dst, src, n, blocks):
        ctx.launch((mod, "allgather"), blocks, 512, [dst, src, n])
        ctx.barrier_all(stream)

    if args.check:
        n = 1 << 20
        src = ctx.zeros(n, "float32")
        dst = ctx.zeros(nprocs * n, "float32")
        src.copy_(torch.arange(n, device="cuda", dtype=torch.float32) + rank * 1000.0)
        allgather(dst, src, n, 32)
        ref = torch.empty(nprocs * n, device="cuda")
        dist.all_gather_into_tensor(ref, src.clone())
        torch.cuda.synchronize()
        assert torch.equal(dst, ref), f"PE {rank}: allgather differs from NCCL"
        say("allgather OK")

        m = 1 << 16
        g = torch.Generator(device="cuda").manual_seed(rank)
        x = ctx.zeros(m, "float32")
        x.copy_(torch.randint(-64, 64, (m,), device="cuda", generator=g).float())
        work = ctx.zeros(nprocs * m, "float32")
        out = torch.empty(m, device="cuda")
        ctx.launch((mod, "allreduce_sum"), 1, 1024, [out, work, x, m], collective=True)
        ref = x.clone()
        dist.all_reduce(ref)
        torch.cuda.synchronize()
        assert torch.equal(out, ref), f"PE {rank}: allreduce differs from NCCL"  # integers: exact
        say("allreduce OK")
        for t in (src, dst, x, work):
            ctx.free(t)

    if args.bench:
        n = (args.size << 20) // 4  # floats per PE
        src = ctx.zeros(n, "float32")
        dst = ctx.zeros(nprocs * n, "float32")
        ref = torch.empty(nprocs * n, device="cuda")
        plain_src = src.clone()
        sms = torch.cuda.get_device_properties(rank).multi_processor_count

        def timeit(fn, iters=20):
            for _ in range(3):
                fn()
            dist.barrier()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(iters):
                fn()
            b.record()
            torch.cuda.synchronize()
            return a.elapsed_time(b) / iters / 1e3  # seconds

        t_ours = timeit(lambda: allgather(dst, src, n, sms))
        t_nccl = timeit(lambda: dist.all_gather_into_tensor(ref, plain_src))
        out_bytes = nprocs * n * 4
        # bus bandwidth as nccl-tests defines it for all-gather: algbw * (n - 1) / n
        bus = (nprocs - 1) / nprocs
        say(f"allgather {args.size} MiB/PE, {nprocs} PEs: NVSHMEM {t_ours * 1e6:.1f} us "
            f"({out_bytes / t_ours / 1e9 * bus:.1f} GB/s bus), NCCL {t_nccl * 1e6:.1f} us "
            f"({out_bytes / t_nccl / 1e9 * bus:.1f} GB/s bus)")
        ctx.free(src)
        ctx.free(dst)

    ctx.finalize()
    dist.destroy_process_group()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nprocs", type=int, default=0, help="PEs (default: every visible GPU)")
    p.add_argument("--check", action="store_true", help="compare with NCCL's results")
    p.add_argument("--bench", action="store_true", help="time the all-gather beside NCCL's")
    p.add_argument("--size", type=int, default=64, help="MiB per PE for --bench")
    p.add_argument("--heap", type=int, default=2048, help="symmetric heap in MiB")
    args = p.parse_args()
    import torch
    import torch.multiprocessing as mp

    nprocs = args.nprocs or torch.cuda.device_count()
    if nprocs > torch.cuda.device_count():
        print(f"asked for {nprocs} PEs but only {torch.cuda.device_count()} GPUs", file=sys.stderr)
        return 2
    if not (args.check or args.bench):
        args.check = True
    mp.spawn(worker, args=(nprocs, args, _free_port()), nprocs=nprocs, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
