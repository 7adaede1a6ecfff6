"""What the GPU benchmarks share: loading the CUDA backend the way a user does, the timing
method (``tvm.tirx.bench``'s: CUDA events on torch's current stream, input sets rotated past 3x
the L2, implementations timed in turns), the machine line, and writing a section of
``docs/perf.md``. torch is imported only by the functions that time (``--smoke`` runs without
it)."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# the timing method is tvm.tirx.bench's (one declaration); these are the names the scripts use
from tvm.tirx.bench import ROUNDS
from tvm.tirx.bench import compare_ms as gpu_compare_ms
from tvm.tirx.bench import group_count as n_sets
from tvm.tirx.bench import l2_cache_bytes as l2_bytes
from tvm.tirx.bench import median_ms as gpu_median_ms

__all__ = ["ROUNDS", "SMOKE_TARGET", "commit", "gpu_compare_ms", "gpu_median_ms", "has_gpu",
           "l2_bytes", "load_cuda", "machine", "n_sets", "now", "target", "write_section"]

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
