"""What the GPU benchmarks share: loading the CUDA backend the way a user does, timing with CUDA
events on torch's current stream, input sets rotated past the L2, the machine line, and writing
a section of ``docs/perf.md``. torch is imported only by the functions that time (``--smoke``
runs without it)."""

from __future__ import annotations

import datetime
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

#: the arch a ``--smoke`` run compiles for (the H200's), whatever this machine has
SMOKE_TARGET = {"kind": "cuda", "arch": "sm_90a"}


def load_cuda() -> Any:
    """The seed's contract, as the scripts' docstrings start them: ``register_backend()`` of
    the CUDA backend (installed, or a source checkout on ``PYTHONPATH``), then ``import tvm``."""
    from tvm_backend_cuda.plugin import register_backend

    register_backend()
    import tvm

    return tvm


def has_gpu() -> bool:
    from tvm_backend_cuda.runtime import has_cuda_device

    return has_cuda_device()


def target(smoke: bool) -> Any:
    """What the benchmark compiles for: this GPU (``"cuda"``), or sm_90a in a smoke run."""
    return SMOKE_TARGET if smoke else "cuda"


def gpu_median_ms(fn: Callable[[int], Any], nsets: int, reps: int, warmup_passes: int = 2
                  ) -> float:
    """Median CUDA-event time (ms) of ``fn(i)`` over ``reps`` runs, ``i`` rotating over
    ``nsets`` input sets. The events are recorded on torch's current stream, where our
    executables launch; the GPU is kept busy (``torch.cuda._sleep``) while the CPU queues every
    run, so that the events bracket the kernels and not the launches."""
    import torch

    for i in range(warmup_passes * nsets):
        fn(i % nsets)
    torch.cuda.synchronize()
    return statistics.median(_event_times(fn, nsets, reps))


def _event_times(fn: Callable[[int], Any], nsets: int, reps: int) -> list[float]:
    """The CUDA-event times (ms) of ``reps`` runs of ``fn``, queued behind a GPU sleep."""
    import torch

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda._sleep(int(2.0e9 * reps * 80e-6))
    for r in range(reps):
        starts[r].record()
        fn(r % nsets)
        ends[r].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


#: rounds of :func:`gpu_compare_ms`
ROUNDS = 6


def gpu_compare_ms(fns: dict[str, Callable[[int], Any]], nsets: int, reps: int,
                   rounds: int = ROUNDS, warmup_s: float = 1.5) -> dict[str, float]:
    """Median CUDA-event times (ms) of implementations of one job, timed in turns, so that
    none is favoured by when it runs: a long kernel (an 8192^3 GEMM) holds the GPU at its power
    limit, and whatever runs first after an idle spell runs on a cooler, faster-clocked GPU.
    First every implementation runs in turn for ``warmup_s`` seconds (the clock settles); then
    ``rounds`` rounds, each timing ``reps`` runs of every implementation as
    :func:`gpu_median_ms` does, the order rotated every round. An implementation's time is the
    median of all its runs."""
    import time

    import torch

    names = list(fns)
    t0 = time.perf_counter()
    while True:
        for name in names:
            for i in range(nsets):
                fns[name](i)
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= warmup_s:
            break
    times: dict[str, list[float]] = {name: [] for name in names}
    per_round = max(1, -(-reps // rounds))
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name] += _event_times(fns[name], nsets, per_round)
    return {name: statistics.median(v) for name, v in times.items()}


def n_sets(bytes_per_set: int, l2_bytes: int) -> int:
    """Input sets whose total exceeds 2.5x the L2, so that no run reads its inputs from cache."""
    return max(2, -(-int(2.5 * l2_bytes) // bytes_per_set))


def l2_bytes() -> int:
    import torch

    return int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0)) or 60 << 20


def machine() -> dict[str, str]:
    """The GPU, its driver and the library versions, for the tables."""
    import torch

    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                                 "--format=csv,noheader"], capture_output=True, text=True,
                                timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        driver = "?"
    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = "-"
    return {"gpu": props.name, "sms": str(props.multi_processor_count),
            "l2": str(getattr(props, "L2_cache_size", 0)), "driver": driver or "?",
            "torch": torch.__version__, "triton": triton_version}


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def commit() -> str:
    """The commit measured, for the tables (a figure counts from main's commit): ``TVM_COMMIT``
    when set (a copy of the tree without its git history), else the checkout's, else '?'."""
    if os.environ.get("TVM_COMMIT"):
        return os.environ["TVM_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10, cwd=HERE)
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def write_section(path: str, text: str, section: str) -> None:
    """Replace the section headed ``section`` in ``path`` with ``text`` (or append it)."""
    old = "# Performance\n"
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    start = old.find(section)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        nxt = old.find("\n## ", start + len(section))
        new = old[:start] + text + (old[nxt:] if nxt >= 0 else "")
    with open(path, "w") as f:
        f.write(new)
