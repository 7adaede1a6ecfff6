"""Issue 8's NVSHMEM examples in our DSL: an all-gather, an all-reduce and a GEMM whose B operand
is gathered from the other PEs inside the kernel, written with ``T.nvshmem`` ops, compiled by
``tvm.compile`` and launched through :class:`tvm_backend_cuda.nvshmem.NvshmemContext`.

    python examples/nvshmem_dsl.py --nprocs 2 --check --bench

One process per GPU, each one PE: it joins torch.distributed (NCCL), receives PE 0's NVSHMEM
unique id by broadcast, allocates the symmetric buffers and runs the three kernels; ``--check``
compares every result with torch.distributed's (NCCL) and ``--bench`` times the all-gather and the
all-reduce beside NCCL's (bus bandwidth as nccl-tests defines it). NVLink multicast stays off
(NVSHMEM_DISABLE_NVLS=1, NCCL_NVLS_ENABLE=0), set before anything initialises.

Under the CUDA emulator (``--emulate``, or ``TVM_CUDA_EMULATE=1``), one PE runs in this process
on CPU tensors (:mod:`tvm_backend_cuda.nvshmem_emu`), and the reference is torch.distributed over
``gloo`` with world size 1 (NCCL runs on CUDA devices only); ``--bench`` then times wall-clock
calls of the emulator, which say nothing of a GPU's speed:

    python examples/nvshmem_dsl.py --emulate --check --bench --size 1

The kernels (all sizes are compile-time constants; ``npes`` is the number of PEs the kernel is
built for, checked against ``nvshmem_n_pes()`` by the host):

- :func:`allgather_kernel`: block ``b`` sends chunk ``b`` of ``src`` to every PE with
  ``putmem_signal_nbi.block``, adding 1 to that PE's signal word; each block then waits
  (``wait_until``) for all ``npes * blocks`` chunks of this round to have arrived. Rounds are
  numbered (``epoch``, from 1) because signals only ever grow.
- :func:`allreduce_kernel`: a one-shot all-reduce (sum). Block ``b`` puts chunk ``b`` of its
  ``src`` into slot ``me`` of every PE's ``work`` (``putmem_signal_nbi.block``), waits for the
  ``npes`` slots of its chunk, adds them, then tells every PE with ``signal_op`` that it has read
  its chunk; the next round waits for those before overwriting ``work``. No grid-wide barrier, so
  any number of blocks works.
- :func:`allreduce_barrier_kernel`: the same in one block with ``putmem_nbi.block``, ``quiet`` and
  ``barrier_all`` (launched collectively).
- :func:`gather_gemm_kernel`: ``C = A @ B`` where ``B`` (``K x N``) is sharded by rows over the PEs
  (``K / npes`` rows each, symmetric). Block ``j`` owns the column tile ``j`` of ``C``: its warps
  fetch that tile's rows from their owners with ``getmem_nbi.warp`` into a local scratch ``Bg``,
  ``quiet`` completes the gets, and the block computes ``C[:, tile]``.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from typing import Any, no_type_check

SAFETY_ENV = {"NVSHMEM_DISABLE_NVLS": "1", "NCCL_NVLS_ENABLE": "0",
              "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
os.environ.update(SAFETY_ENV)  # before torch/NCCL/NVSHMEM read them, in this process and children

F32 = 4  # bytes


# -- the kernels -----------------------------------------------------------------------------------


def _script() -> Any:
    """``T``, with the CUDA backend (and so ``T.nvshmem``) loaded, also from a source checkout."""
    from tvm.script import tirx as T
    from tvm_backend_cuda.plugin import register_backend

    register_backend()  # idempotent
    return T


@no_type_check
def allgather_kernel(n: int, npes: int, blocks: int = 32, threads: int = 512) -> Any:
    """``dst[pe * n:(pe + 1) * n] = src`` of PE ``pe``, for every PE; ``sig``: symmetric,
    ``npes`` uint64 words, word ``p`` counting the chunks that arrived from PE ``p``."""
    T = _script()

    if n % blocks:
        raise ValueError(f"n = {n} must be a multiple of blocks = {blocks}")
    chunk = n // blocks

    @T.prim_func
    def allgather(dst: T.Buffer((npes * n,), "float32"), src: T.Buffer((n,), "float32"),
                  sig: T.Buffer((npes,), "int64"), epoch: T.uint64):
        T.device_entry()
        bx = T.cta_id([blocks])
        tx = T.thread_id([threads])
        me = T.nvshmem.my_pe()
        for i in T.serial(npes):
            # stagger the targets so that the PEs do not all hit PE 0 first
            T.nvshmem.putmem_signal_nbi.block(
                T.address_of(dst[me * n + bx * chunk]), T.address_of(src[bx * chunk]),
                chunk * F32, T.address_of(sig[me]), 1, "add", (me + i) % npes)
        if tx == 0:
            # a PE's chunks of round r all land before any of its round r + 1 (its kernel
            # quiets before it ends), so counting per source PE is exact across rounds
            for p in T.serial(npes):
                T.nvshmem.wait_until(T.address_of(sig[p]), "ge", epoch * blocks, "uint64_t")
            T.nvshmem.quiet()  # our puts are complete too: src may change after the kernel
        T.cuda.cta_sync()

    return allgather


@no_type_check
def allreduce_kernel(n: int, npes: int, blocks: int = 32, threads: int = 512) -> Any:
    """``out = sum over PEs of src``; ``work``: symmetric ``npes * n``; ``sig``: symmetric
    ``2 * blocks`` signal words (arrivals, then reads done, per chunk; NVSHMEM's signals are
    uint64, torch's tensors int64)."""
    T = _script()

    if n % (blocks * threads):
        raise ValueError(f"n = {n} must be a multiple of blocks * threads = {blocks * threads}")
    chunk = n // blocks

    @T.prim_func
    def allreduce(out: T.Buffer((n,), "float32"), work: T.Buffer((npes * n,), "float32"),
                  src: T.Buffer((n,), "float32"), sig: T.Buffer((2 * blocks,), "int64"),
                  epoch: T.uint64):
        T.device_entry()
        bx = T.cta_id([blocks])
        tx = T.thread_id([threads])
        acc = T.alloc_buffer((1,), "float32", scope="local")
        me = T.nvshmem.my_pe()
        # every PE has finished reading this chunk of the previous round
        if tx == 0:
            T.nvshmem.wait_until(T.address_of(sig[blocks + bx]), "ge", (epoch - 1) * npes,
                                 "uint64_t")
        T.cuda.cta_sync()
        for i in T.serial(npes):
            T.nvshmem.putmem_signal_nbi.block(
                T.address_of(work[me * n + bx * chunk]), T.address_of(src[bx * chunk]),
                chunk * F32, T.address_of(sig[bx]), 1, "add", (me + i) % npes)
        if tx == 0:
            T.nvshmem.wait_until(T.address_of(sig[bx]), "ge", epoch * npes, "uint64_t")
        T.cuda.cta_sync()
        for k in T.serial(chunk // threads):
            acc[0] = T.float32(0)
            for p in T.serial(npes):
                acc[0] = acc[0] + work[p * n + bx * chunk + k * threads + tx]
            out[bx * chunk + k * threads + tx] = acc[0]
        T.cuda.cta_sync()
        if tx == 0:
            for i in T.serial(npes):
                T.nvshmem.signal_op(T.address_of(sig[blocks + bx]), 1, "add", (me + i) % npes)
            T.nvshmem.quiet()

    return allreduce


@no_type_check
def allreduce_barrier_kernel(n: int, npes: int, threads: int = 1024) -> Any:
    """The one-block all-reduce with ``putmem_nbi.block`` and two ``barrier_all``s (launch it
    with ``collective=True``)."""
    T = _script()

    if n % threads:
        raise ValueError(f"n = {n} must be a multiple of threads = {threads}")

    @T.prim_func
    def allreduce_barrier(out: T.Buffer((n,), "float32"), work: T.Buffer((npes * n,), "float32"),
                          src: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841
        tx = T.thread_id([threads])
        acc = T.alloc_buffer((1,), "float32", scope="local")
        me = T.nvshmem.my_pe()
        for i in T.serial(npes):
            T.nvshmem.putmem_nbi.block(T.address_of(work[me * n]), T.address_of(src[0]),
                                       n * F32, (me + i) % npes)
        T.cuda.cta_sync()
        if tx == 0:
            T.nvshmem.barrier_all()  # completes our puts, then waits for every PE's
        T.cuda.cta_sync()
        for k in T.serial(n // threads):
            acc[0] = T.float32(0)
            for p in T.serial(npes):
                acc[0] = acc[0] + work[p * n + k * threads + tx]
            out[k * threads + tx] = acc[0]
        T.cuda.cta_sync()
        if tx == 0:
            T.nvshmem.fence()
            T.nvshmem.barrier_all()  # nobody overwrites work while a PE still reads it

    return allreduce_barrier


@no_type_check
def gather_gemm_kernel(m: int, n: int, k_per_pe: int, npes: int, tile_n: int = 32,
                       threads: int = 256) -> Any:
    """``C (m x n) = A (m x K) @ B (K x n)``, ``K = npes * k_per_pe``; this PE holds rows
    ``[pe * k_per_pe, (pe + 1) * k_per_pe)`` of B in the symmetric ``Bs``; ``Bg`` (``K x n``,
    local) receives the gathered B."""
    T = _script()

    kk = npes * k_per_pe
    warps = threads // 32
    if n % tile_n or (m * tile_n) % threads or kk % warps:
        raise ValueError("n must be a multiple of tile_n, m * tile_n of threads, K of the warps")

    @T.prim_func
    def gather_gemm(C: T.Buffer((m, n), "float32"), A: T.Buffer((m, kk), "float32"),
                    Bs: T.Buffer((k_per_pe, n), "float32"), Bg: T.Buffer((kk, n), "float32")):
        T.device_entry()
        bx = T.cta_id([n // tile_n])
        tx = T.thread_id([threads])
        w = T.warp_id([warps])
        acc = T.alloc_buffer((1,), "float32", scope="local")
        # gather: warp w fetches rows w, w + warps, ... of the tile from their owners
        for r in T.serial(kk // warps):
            T.nvshmem.getmem_nbi.warp(
                T.address_of(Bg[r * warps + w, bx * tile_n]),
                T.address_of(Bs[(r * warps + w) % k_per_pe, bx * tile_n]),
                tile_n * F32, (r * warps + w) // k_per_pe)
        T.nvshmem.quiet()  # this thread's part of the gets has landed
        T.cuda.cta_sync()
        for e in T.serial(m * tile_n // threads):
            acc[0] = T.float32(0)
            for kx in T.serial(kk):
                acc[0] = acc[0] + A[(e * threads + tx) // tile_n, kx] * \
                    Bg[kx, bx * tile_n + (e * threads + tx) % tile_n]
            C[(e * threads + tx) // tile_n, bx * tile_n + (e * threads + tx) % tile_n] = acc[0]

    return gather_gemm


# -- host side: compile for this PE's GPU, keep the symmetric state, launch ------------------------


def _emulating() -> bool:
    """Whether ``cuda`` builds go to the CUDA emulator here (``TVM_CUDA_EMULATE``)."""
    from tvm_backend_cuda.executable import CudaOptions, emulating

    return emulating(CudaOptions())


def _compile(func: Any, arch: str | None = None) -> Any:
    import tvm

    _script()  # the backend is loaded
    return tvm.compile(func, target={"kind": "cuda", "arch": arch} if arch else "cuda")


class AllGather:
    """``ag(dst, src)``: ``dst`` (symmetric, ``n_pes * n`` float32) gets every PE's ``src``
    (symmetric, ``n``). Collective: every PE calls it, in the same order as its other calls.
    The other PEs may write the next round into ``dst`` as soon as they have this one: read
    ``dst`` between rounds only after a barrier (``ctx.barrier_all()``)."""

    def __init__(self, ctx: Any, n: int, *, blocks: int = 32, threads: int = 512,
                 arch: str | None = None) -> None:
        self.ctx, self.n = ctx, n
        self.ex = _compile(allgather_kernel(n, ctx.n_pes(), blocks, threads), arch)
        self.sig = ctx.zeros(ctx.n_pes(), "int64")  # NVSHMEM's signals are uint64: same bits
        self.epoch = 0

    def __call__(self, dst: Any, src: Any) -> None:
        self.epoch += 1
        self.ctx.run(self.ex, dst, src, self.sig, self.epoch, collective=True)

    def free(self) -> None:
        self.ctx.free(self.sig)


class AllReduce:
    """``ar(out, src)``: ``out`` (any float32 CUDA tensor of ``n``) = the sum over PEs of ``src``
    (symmetric, ``n``); ``work`` and the signals are allocated here (symmetric). Collective;
    rounds hand over through the signals, with no host barrier."""

    def __init__(self, ctx: Any, n: int, *, blocks: int = 32, threads: int = 512,
                 arch: str | None = None) -> None:
        self.ctx, self.n = ctx, n
        self.ex = _compile(allreduce_kernel(n, ctx.n_pes(), blocks, threads), arch)
        self.work = ctx.zeros(ctx.n_pes() * n, "float32")
        self.sig = ctx.zeros(2 * blocks, "int64")
        self.epoch = 0

    def __call__(self, out: Any, src: Any) -> None:
        self.epoch += 1
        self.ctx.run(self.ex, out, self.work, src, self.sig, self.epoch, collective=True)

    def free(self) -> None:
        self.ctx.free(self.work)
        self.ctx.free(self.sig)


class AllReduceBarrier:
    """The one-block ``barrier_all`` all-reduce: ``arb(out, src)``. Collective."""

    def __init__(self, ctx: Any, n: int, *, threads: int = 1024, arch: str | None = None) -> None:
        self.ctx, self.n = ctx, n
        self.ex = _compile(allreduce_barrier_kernel(n, ctx.n_pes(), threads), arch)
        self.work = ctx.zeros(ctx.n_pes() * n, "float32")

    def __call__(self, out: Any, src: Any) -> None:
        self.ctx.run(self.ex, out, self.work, src, collective=True)

    def free(self) -> None:
        self.ctx.free(self.work)


class GatherGemm:
    """``gg(C, A, Bs)``: ``C = A @ B`` where ``B`` is the row-wise concatenation of every PE's
    shard ``Bs`` (symmetric, ``k_per_pe x n``); ``A``: ``m x (n_pes * k_per_pe)``. Collective
    (every PE's shard must be written before any PE calls it: put a barrier in between)."""

    def __init__(self, ctx: Any, m: int, n: int, k_per_pe: int, *, tile_n: int = 32,
                 threads: int = 256, arch: str | None = None) -> None:
        import torch

        self.ctx = ctx
        npes = ctx.n_pes()
        self.ex = _compile(gather_gemm_kernel(m, n, k_per_pe, npes, tile_n, threads), arch)
        self.gathered = torch.empty((npes * k_per_pe, n), device=ctx.torch_device)

    def __call__(self, c: Any, a: Any, b_shard: Any) -> None:
        self.ctx.run(self.ex, c, a, b_shard, self.gathered, collective=True)


# -- several PEs, one process each, against torch.distributed (NCCL; gloo under the emulator) ------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reference(dist: Any) -> str:
    """The torch.distributed backend the results are compared with, as the output names it."""
    backend = str(dist.get_backend())
    return "NCCL" if backend == "nccl" else backend


def _sync(ctx: Any) -> None:
    """Wait for the GPU (the emulator's launches on the default stream are synchronous)."""
    if ctx.torch_device != "cpu":
        import torch

        torch.cuda.synchronize()


def _timeit_emulated(fn: Any, dist: Any, iters: int = 2) -> float:
    """Wall-clock seconds per call on the emulator: one warm-up, then ``iters`` calls."""
    fn()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - start) / iters


def _timeit(fn: Any, dist: Any, iters: int = 20) -> float:
    import torch

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


def run_checks(ctx: Any, dist: Any, say: Any, n: int = 1 << 18) -> None:
    """Each kernel once, compared with torch.distributed's collective (NCCL on the GPU) on the
    same data (exact: integers). ``n``: elements per PE of the all-gather and all-reduce."""
    import torch

    rank, npes = ctx.my_pe(), ctx.n_pes()
    dev = ctx.torch_device  # cuda:N, or cpu under the emulator
    ref_name = _reference(dist)
    ag = AllGather(ctx, n)
    src = ctx.zeros(n, "float32")
    dst = ctx.zeros(npes * n, "float32")
    src.copy_(torch.arange(n, device=dev, dtype=torch.float32) + rank * 1000.0)
    ag(dst, src)
    ref = torch.empty(npes * n, device=dev)
    dist.all_gather_into_tensor(ref, src.clone())
    _sync(ctx)
    assert torch.equal(dst, ref), f"PE {rank}: allgather differs from {ref_name}"
    say("allgather OK")

    g = torch.Generator(device=dev).manual_seed(rank)
    ar = AllReduce(ctx, n)
    x = ctx.zeros(n, "float32")
    x.copy_(torch.randint(-64, 64, (n,), device=dev, generator=g).float())
    out = torch.empty(n, device=dev)
    ref = x.clone()
    dist.all_reduce(ref)
    for _ in range(3):  # the rounds hand over through the signals, no host barrier
        out.zero_()
        ar(out, x)
    _sync(ctx)
    assert torch.equal(out, ref), f"PE {rank}: allreduce differs from {ref_name}"
    say("allreduce OK")

    m = 1 << 14
    arb = AllReduceBarrier(ctx, m)
    y = ctx.zeros(m, "float32")
    y.copy_(torch.randint(-64, 64, (m,), device=dev, generator=g).float())
    out2 = torch.empty(m, device=dev)
    arb(out2, y)
    ref2 = y.clone()
    dist.all_reduce(ref2)
    _sync(ctx)
    assert torch.equal(out2, ref2), f"PE {rank}: allreduce_barrier differs from {ref_name}"
    say("allreduce_barrier OK")

    mm, nn, kp = 128, 256, 64
    gg = GatherGemm(ctx, mm, nn, kp)
    shard = ctx.zeros((kp, nn), "float32")
    shard.copy_(torch.randint(-4, 5, (kp, nn), device=dev, generator=g).float())
    a = torch.randint(-4, 5, (mm, npes * kp), device=dev, generator=g).float()
    c = torch.empty((mm, nn), device=dev)
    ctx.barrier_all()  # every shard is written before anyone reads it
    gg(c, a, shard)
    full = torch.empty((npes * kp, nn), device=dev)
    dist.all_gather_into_tensor(full, shard.clone())
    _sync(ctx)
    assert torch.equal(gg.gathered, full), f"PE {rank}: gathered B differs from {ref_name}'s"
    assert torch.equal(c, a @ full), f"PE {rank}: gather_gemm differs from A @ all_gather(B)"
    say("gather_gemm OK")
    ctx.barrier_all()
    for obj in (ag, ar, arb):
        obj.free()
    for t in (src, dst, x, y, shard):
        ctx.free(t)


def run_bench(ctx: Any, dist: Any, say: Any, mib: int) -> list[str]:
    """All-gather and all-reduce of ``mib`` MiB per PE: ours beside NCCL's (gloo's under the
    emulator, timed by the wall clock), as bus GB/s."""
    import torch

    npes = ctx.n_pes()
    dev = ctx.torch_device  # cuda:N, or cpu under the emulator
    ref_name = _reference(dist)
    n = (mib << 20) // F32
    timeit = _timeit
    if dev == "cpu":
        from tvm_backend_cuda.emulator import EMULATED_SMS as sms

        timeit = _timeit_emulated
    else:
        sms = torch.cuda.get_device_properties(ctx.device).multi_processor_count
    blocks = max(b for b in (sms, 128, 64, 32, 16, 8) if n % (b * 512) == 0 and b <= sms)
    lines = []

    ag = AllGather(ctx, n, blocks=blocks)
    src = ctx.zeros(n, "float32")
    dst = ctx.zeros(npes * n, "float32")
    ref = torch.empty(npes * n, device=dev)
    plain = src.clone()
    t_ours = timeit(lambda: ag(dst, src), dist)
    t_nccl = timeit(lambda: dist.all_gather_into_tensor(ref, plain), dist)
    size = npes * n * F32
    bus = (npes - 1) / npes if npes > 1 else 1.0  # nccl-tests' busbw factor for all-gather
    lines.append(f"allgather {mib} MiB/PE, {npes} PEs: NVSHMEM DSL {t_ours * 1e6:.1f} us "
                 f"({size / t_ours / 1e9 * bus:.1f} GB/s bus), {ref_name} {t_nccl * 1e6:.1f} us "
                 f"({size / t_nccl / 1e9 * bus:.1f} GB/s bus)")

    ar = AllReduce(ctx, n, blocks=blocks)
    x = ctx.zeros(n, "float32")
    out = torch.empty(n, device=dev)
    y = torch.zeros(n, device=dev)
    t_ours = timeit(lambda: ar(out, x), dist)
    t_nccl = timeit(lambda: dist.all_reduce(y), dist)
    size = n * F32
    bus = 2 * (npes - 1) / npes if npes > 1 else 1.0  # all-reduce: 2 (n - 1) / n
    lines.append(f"allreduce {mib} MiB/PE, {npes} PEs: NVSHMEM DSL {t_ours * 1e6:.1f} us "
                 f"({size / t_ours / 1e9 * bus:.1f} GB/s bus), {ref_name} {t_nccl * 1e6:.1f} us "
                 f"({size / t_nccl / 1e9 * bus:.1f} GB/s bus)")
    ctx.barrier_all()
    ag.free()
    ar.free()
    for t in (src, dst, x):
        ctx.free(t)
    for line in lines:
        say(line)
    return lines


def emulated_worker(args: argparse.Namespace, port: int) -> None:
    """The one PE of the CUDA emulator, in this process, against torch.distributed over gloo."""
    import torch.distributed as dist

    from tvm_backend_cuda.nvshmem import NvshmemContext

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    ctx = NvshmemContext.init(0, 1)  # the emulator's one-PE context (CPU tensors)
    print(repr(ctx), flush=True)

    def say(line: str) -> None:
        print(line, flush=True)

    if args.check:
        run_checks(ctx, dist, say, n=args.check_size)
    if args.bench:
        run_bench(ctx, dist, say, args.size)
    ctx.finalize()
    dist.destroy_process_group()


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
    say(f"{ctx!r}; {torch.cuda.get_device_name(rank)}", flush=True)
    if args.check:
        run_checks(ctx, dist, lambda s: say(s, flush=True), n=args.check_size)
    if args.bench:
        run_bench(ctx, dist, lambda s: say(s, flush=True), args.size)
    ctx.finalize()
    dist.destroy_process_group()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nprocs", type=int, default=0, help="PEs (default: every visible GPU)")
    p.add_argument("--check", action="store_true", help="compare with NCCL's results")
    p.add_argument("--bench", action="store_true", help="time all-gather and all-reduce vs NCCL")
    p.add_argument("--size", type=int, default=64, help="MiB per PE for --bench")
    p.add_argument("--heap", type=int, default=2048, help="symmetric heap in MiB")
    p.add_argument("--check-size", type=int, default=1 << 18,
                   help="elements per PE of the checked all-gather and all-reduce")
    p.add_argument("--emulate", action="store_true",
                   help="one PE on the CUDA emulator (as TVM_CUDA_EMULATE=1), against gloo")
    args = p.parse_args()
    if args.emulate:
        os.environ["TVM_CUDA_EMULATE"] = "1"
    if not (args.check or args.bench):
        args.check = True
    if _emulating():
        if args.nprocs > 1:
            print(f"asked for {args.nprocs} PEs but the CUDA emulator runs one", file=sys.stderr)
            return 2
        emulated_worker(args, _free_port())
        return 0
    import torch
    import torch.multiprocessing as mp

    nprocs = args.nprocs or torch.cuda.device_count()
    if nprocs > torch.cuda.device_count():
        print(f"asked for {nprocs} PEs but only {torch.cuda.device_count()} GPUs", file=sys.stderr)
        return 2
    mp.spawn(worker, args=(nprocs, args, _free_port()), nprocs=nprocs, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
