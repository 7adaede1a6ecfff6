"""How long ``import tvm`` takes in a fresh interpreter, in the current environment.

    python bench/import_time.py [--runs 15] [--importtime]

Each run starts a new interpreter and times ``import tvm`` inside it (interpreter start-up
excluded), with the backends that environment has installed and ``TVM_BACKENDS`` as set. It
also times discovery (the ``tvm.backends`` entry-point scan, with tvm's scanner and with
``importlib.metadata`` for comparison) and reports whether numpy got imported. Budget: under
100 ms with core alone, under 150 ms with the three hardware backends. Prints a table; writes
nothing but Python's bytecode cache.

The runs import compiled bytecode, as an installed wheel does (pip compiles it at install time):
``PYTHONDONTWRITEBYTECODE`` is dropped for the child interpreters, so the warm-up run writes the
cache. With it set, every run would compile every module from source (about 150 ms more here),
which is not what a user's ``import tvm`` costs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import datetime, timezone

PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
import tvm
import tvm.backend
tvm.backend._autoload()
t1 = time.perf_counter()
from tvm.backend import _discovery
t2 = time.perf_counter()
eps = _discovery.scan_entry_points()
t3 = time.perf_counter()
print(json.dumps({
    "import_ms": (t1 - t0) * 1e3,
    "scan_ms": (t3 - t2) * 1e3,
    "numpy": "numpy" in sys.modules,
    "importlib_metadata": "importlib.metadata" in sys.modules,
    "entry_points": len(eps),
    "loaded": [r.name for r in tvm.backend.list_backends() if r.state == "loaded"],
    "failed": [r.name for r in tvm.backend.list_backends() if r.state in ("failed", "incompatible")],
}))
"""

SLOW_SCAN = r"""
import json, time
t0 = time.perf_counter()
from importlib import metadata
t1 = time.perf_counter()
eps = list(metadata.entry_points(group="tvm.backends"))
t2 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "scan_ms": (t2 - t1) * 1e3}))
"""


#: the child interpreters' environment: this one's, with the bytecode cache on (see above)
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=_ENV,
    )


def _json(code: str) -> dict:
    return json.loads(_run(code).stdout.strip().splitlines()[-1])


def _importtime_top(n: int = 15) -> list[tuple[int, int, str]]:
    proc = _run("import tvm, tvm.backend; tvm.backend._autoload()", "-X", "importtime")
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, self_us, cumulative_us, name = (
            part.strip() for part in line.split("|", 1)[0].split(":", 1) + line.split("|")[1:]
        )
        rows.append((int(cumulative_us), int(self_us), name))
    return sorted(rows, reverse=True)[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--importtime",
        action="store_true",
        help="also show the slowest modules from python -X importtime",
    )
    parser.add_argument("--smoke", action="store_true", help="2 runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.runs = 2

    _json(PROBE)  # warm the file-system caches and write the bytecode cache once
    runs = [_json(PROBE) for _ in range(args.runs)]
    slow = [_json(SLOW_SCAN) for _ in range(max(3, args.runs // 3))]
    imports = [r["import_ms"] for r in runs]
    scans = [r["scan_ms"] for r in runs]
    last = runs[-1]

    print(
        f"# import tvm — {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{platform.node()}, Python {platform.python_version()}, {args.runs} runs"
    )
    print(
        f"# TVM_BACKENDS={os.environ.get('TVM_BACKENDS', '(unset)')}; "
        f"loaded: {', '.join(last['loaded']) or 'none'}"
        + (f"; failed: {', '.join(last['failed'])}" if last["failed"] else "")
    )
    rows = [
        ("import tvm (median)", f"{statistics.median(imports):.1f} ms"),
        ("import tvm (min / max)", f"{min(imports):.1f} / {max(imports):.1f} ms"),
        ("entry-point scan, tvm's scanner (median)", f"{statistics.median(scans):.2f} ms"),
        (
            "entry-point scan, importlib.metadata (median)",
            f"{statistics.median(s['scan_ms'] for s in slow):.2f} ms "
            f"+ {statistics.median(s['import_ms'] for s in slow):.1f} ms to import it",
        ),
        ("tvm.backends entry points found", str(last["entry_points"])),
        ("numpy imported by import tvm", "yes (over budget)" if last["numpy"] else "no"),
        ("importlib.metadata imported", "yes" if last["importlib_metadata"] else "no"),
        (
            "bytecode cache",
            "on (PYTHONDONTWRITEBYTECODE dropped for the runs)"
            if "PYTHONDONTWRITEBYTECODE" in os.environ
            else "on",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key.ljust(width)}  {value}")
    if args.importtime:
        print("\n# slowest modules (python -X importtime, cumulative / self, microseconds)")
        for cumulative, self_us, name in _importtime_top():
            print(f"{cumulative:>9}  {self_us:>9}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
