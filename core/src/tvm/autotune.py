"""Autotuning: pick the fastest of a kernel factory's configurations, once per machine.

A kernel factory (``gemm_func(m, n, k, dtype, *, block_n=..., stages=...)``) has tuning
options whose best values depend on the shape and the device. :func:`tune` compiles every
candidate configuration (in parallel processes), runs each on the caller's inputs, checks its
answer first (a wrong candidate is never picked, however fast), times the correct ones with a
pluggable timer, and keeps the fastest in a small JSON record under
``<cache dir>/autotune/`` (``TVM_CACHE_DIR``; see :mod:`tvm.runtime.cache`). The record's name
hashes what the result depends on: the kernel, its arguments, the device's name and driver, and
the versions the caller names (tvm's at least). A later process with the same key reads the
record and measures nothing.

``TVM_AUTOTUNE=0`` turns tuning off: :func:`tune` returns the first candidate (the factory's
default) without compiling, measuring or reading a record. A search longer than a few seconds
prints a progress line on stderr.

    result = tvm.autotune.tune(
        "my_kernel", my_factory, (n, "float32"), [{"unroll": 1}, {"unroll": 4}],
        target="c", run=lambda ex: (lambda: ex(a, b)), check=lambda ex: verify(b))
    ex = result.executable or tvm.compile(my_factory(n, "float32", **result.config), "c")
"""

from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import importlib
import json
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._version import __version__
from .driver import compile as tvm_compile
from .error import AutotuneError
from .runtime.cache import _atomic_write, _make_dirs, _read_json, cache_dir, cache_enabled
from .runtime.executable import load_module
from .target import Target

__all__ = ["RECORD_FORMAT", "TuneResult", "enabled", "history", "host_device", "lookup",
           "record_path", "stats", "tune", "wall_timer"]

RECORD_FORMAT = 1
#: searches longer than this (seconds) show a progress line
PROGRESS_AFTER_S = 2.0
#: timing rounds of a search: the candidates take turns, each keeps its median
ROUNDS = 3
#: what this process did: searches measured, records reused, candidates compiled
stats = {"measured": 0, "reused": 0, "compiled": 0}
#: every configuration :func:`tune` returned in this process, in order: ``kernel``, ``args``,
#: ``config``, ``measured`` and ``record`` (its path, or None), for a benchmark to report what
#: it ran
history: list[dict[str, Any]] = []


@dataclass
class TuneResult:
    """The configuration picked, where its record is, and whether it was measured now (then
    ``executable`` is the compiled best, ready to call; a reused record compiles nothing)."""

    config: dict[str, Any]
    measured: bool
    record: Path | None = None
    executable: Any = None
    results: list[dict[str, Any]] = field(default_factory=list)


def enabled() -> bool:
    """False when ``TVM_AUTOTUNE`` is ``0`` (or ``false``, ``no``, ``off``)."""
    return os.environ.get("TVM_AUTOTUNE", "1").strip().lower() not in ("0", "false", "no", "off")


def host_device() -> dict[str, str]:
    """The CPU as a tuning key: its model name and the OS."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"name": model, "driver": f"{platform.system()} {platform.release()}"}


def wall_timer(fn: Callable[[], Any], *, repeat: int = 7, min_time: float = 0.02) -> float:
    """Median seconds of one call of ``fn`` (synchronous work, e.g. the host target): each of
    ``repeat`` samples runs ``fn`` as often as fills ``min_time``."""
    fn()
    t = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t, 1e-7)
    number = max(1, int(min_time / once))
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t) / number)
    return statistics.median(samples)


# -- records --------------------------------------------------------------------------------------


def _versions(extra: Mapping[str, str] | None) -> dict[str, str]:
    return {"tvm": __version__, **{str(k): str(v) for k, v in (extra or {}).items()}}


def _key(kernel: str, args: Sequence[Any], device: Mapping[str, str],
         versions: Mapping[str, str]) -> dict[str, Any]:
    return {"kernel": kernel, "args": _jsonable(list(args)), "device": dict(device),
            "versions": dict(versions)}


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def record_path(kernel: str, args: Sequence[Any], device: Mapping[str, str] | None = None,
                versions: Mapping[str, str] | None = None) -> Path:
    """Where the record of this search is (or would be)."""
    key = _key(kernel, args, device or host_device(), _versions(versions))
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:20]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in kernel)[:60]
    return cache_dir() / "autotune" / f"{safe}-{digest}.json"


def lookup(kernel: str, args: Sequence[Any], device: Mapping[str, str] | None = None,
           versions: Mapping[str, str] | None = None, fixed: Mapping[str, Any] | None = None
           ) -> dict[str, Any] | None:
    """The best configuration recorded for this key (as :func:`tune` takes it), or None (none,
    or a record that does not read back as one of ours: it is then measured again and
    rewritten). Measures nothing."""
    device = device or host_device()
    versions = _versions(versions)
    if fixed:
        args = [*args, dict(fixed)]
    path = record_path(kernel, args, device, versions)
    try:
        record = _read_json(path)
    except (OSError, ValueError):
        return None
    want = _key(kernel, args, device, versions)
    if (not isinstance(record, dict) or record.get("format") != RECORD_FORMAT
            or any(record.get(k) != v for k, v in want.items())
            or not isinstance(record.get("best"), dict)):
        return None
    return dict(record["best"])


def _write_record(path: Path, key: Mapping[str, Any], best: Mapping[str, Any],
                  results: list[dict[str, Any]]) -> Path | None:
    if not cache_enabled():
        return None
    record = {"format": RECORD_FORMAT, **key, "best": dict(best), "results": results,
              "created": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="seconds")}
    try:
        _make_dirs(path.parent)
        _atomic_write(path, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode())
    except OSError:
        return None
    return path


# -- the search -----------------------------------------------------------------------------------


def tune(kernel: str, factory: Callable[..., Any], args: Sequence[Any],
         candidates: Sequence[Mapping[str, Any]], *, target: Any = None,
         run: Callable[[Any], Callable[[], Any]],
         check: Callable[[Any], Any] | None = None,
         timer: Callable[[Callable[[], Any]], float] | None = None,
         device: Mapping[str, str] | None = None, versions: Mapping[str, str] | None = None,
         options: Mapping[str, Any] | None = None, workers: int | None = None,
         setup: str | None = None, fixed: Mapping[str, Any] | None = None) -> TuneResult:
    """The best of ``candidates`` (keyword arguments of ``factory(*args, **fixed,
    **candidate)``) for ``kernel`` at ``args`` and ``fixed`` on this device.

    ``run(ex)`` returns a call that runs the compiled candidate ``ex`` on prepared inputs (it
    is called once per candidate, just before that candidate's first call: the place to poison
    the outputs, so that a candidate writing nothing cannot pass on an earlier one's answer);
    ``check(ex)`` (after that first call) raises or returns False when the answer is wrong;
    ``timer(call)`` returns seconds (default :func:`wall_timer`; a GPU caller passes one that
    times on the device). ``device`` (``{"name", "driver"}``, default :func:`host_device`) and
    ``versions`` join the record's key. Candidates compile in up to ``workers`` processes
    (default: one per candidate, at most the CPUs) when ``factory`` is importable by name;
    ``setup`` (``"module:function"``) runs first in each of them (e.g. a backend's
    ``register_backend`` in a source checkout). ``options`` go to ``tvm.compile``."""
    if not candidates:
        raise AutotuneError(f"autotune {kernel}: no candidates to choose from")
    first = dict(candidates[0])
    if not enabled():
        return _remember(kernel, args, TuneResult(first, measured=False))
    device = dict(device or host_device())
    versions = _versions(versions)
    fixed = dict(fixed or {})
    key_args = [*args, fixed] if fixed else list(args)
    path = record_path(kernel, key_args, device, versions)
    found = lookup(kernel, args, device, versions, fixed)
    if found is not None:
        stats["reused"] += 1
        return _remember(kernel, key_args, TuneResult(found, measured=False, record=path))
    progress = _Progress(kernel, args, len(candidates))
    try:
        merged = [{**fixed, **c} for c in candidates]
        exes = _compile_all(factory, args, merged, target, dict(options or {}), workers,
                            setup, progress)
        results, best = _measure(candidates, exes, run, check, timer or wall_timer, progress)
    finally:
        progress.close()
    stats["measured"] += 1
    if best is None:
        lines = "\n".join(f"  {r['config']}: {r['error']}" for r in results)
        raise AutotuneError(f"autotune {kernel} {list(args)}: no candidate compiled and gave the "
                            f"right answer:\n{lines}")
    config = dict(candidates[best])
    written = _write_record(path, _key(kernel, key_args, device, versions), config, results)
    return _remember(kernel, key_args, TuneResult(config, measured=True, record=written,
                                                  executable=exes[best][0], results=results))


def _remember(kernel: str, args: Sequence[Any], result: TuneResult) -> TuneResult:
    history.append({"kernel": kernel, "args": _jsonable(list(args)), "config": result.config,
                    "measured": result.measured, "record": result.record})
    return result


def _compile_all(factory: Callable[..., Any], args: Sequence[Any],
                 candidates: Sequence[Mapping[str, Any]], target: Any,
                 options: dict[str, Any], workers: int | None, setup: str | None,
                 progress: _Progress) -> list[tuple[Any, str | None]]:
    """(executable or None, error or None) per candidate."""
    ref = _importable(factory)
    n = len(candidates)
    workers = min(n, os.cpu_count() or 1) if workers is None else max(1, workers)
    if ref is None or workers <= 1 or n == 1:
        out = []
        for i, cfg in enumerate(candidates):
            progress.update(f"compiling {i + 1}/{n}")
            out.append(_compile_here(factory, args, cfg, target, options))
        return out
    tgt = target if isinstance(target, Target) else Target(target or "c")
    with tempfile.TemporaryDirectory(prefix="tvm-autotune-") as tmp:
        ctx = multiprocessing.get_context("spawn")  # no fork: the parent may hold a GPU context
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            futures = [pool.submit(_compile_child, setup, ref, list(args), dict(cfg),
                                   tgt.export(), options, os.path.join(tmp, f"{i}.tvmex"))
                       for i, cfg in enumerate(candidates)]
            for done, _ in enumerate(concurrent.futures.as_completed(futures), 1):
                progress.update(f"compiled {done}/{n} in {workers} processes")
            return [_load_compiled(f.result()) for f in futures]


def _compile_here(factory: Callable[..., Any], args: Sequence[Any], cfg: Mapping[str, Any],
                  target: Any, options: dict[str, Any]) -> tuple[Any, str | None]:
    try:
        ex = tvm_compile(factory(*args, **cfg), target, **options)
    except Exception as err:  # noqa: BLE001 - a failing candidate is reported, not fatal
        return None, f"{type(err).__name__}: {err}"
    stats["compiled"] += 1
    return ex, None


def _load_compiled(result: tuple[str | None, str | None]) -> tuple[Any, str | None]:
    path, error = result
    if path is None:
        return None, error
    stats["compiled"] += 1
    return load_module(path), None


def _importable(factory: Callable[..., Any]) -> str | None:
    """``module:qualname`` when a fresh process can import ``factory`` by that name."""
    module, name = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    if not module or module == "__main__" or "<" in name:
        return None
    obj: Any = sys.modules.get(module)
    if getattr(obj, "__spec__", None) is None:  # made by hand (an exec'd page): not importable
        return None
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return f"{module}:{name}" if obj is factory else None


def _resolve(ref: str) -> Any:
    module, name = ref.split(":", 1)
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _compile_child(setup: str | None, ref: str, args: list[Any], cfg: dict[str, Any],
                   target: Any, options: dict[str, Any], path: str
                   ) -> tuple[str | None, str | None]:
    """In a worker process: compile one candidate and export it to ``path``."""
    try:
        if setup:
            _resolve(setup)()
        ex = tvm_compile(_resolve(ref)(*args, **cfg), target, **options)
        ex.export_library(path)
    except Exception as err:  # noqa: BLE001 - reported per candidate
        return None, f"{type(err).__name__}: {err}"
    return path, None


def _measure(candidates: Sequence[Mapping[str, Any]], exes: list[tuple[Any, str | None]],
             run: Callable[[Any], Callable[[], Any]], check: Callable[[Any], Any] | None,
             timer: Callable[[Callable[[], Any]], float], progress: _Progress,
             rounds: int = ROUNDS) -> tuple[list[dict[str, Any]], int | None]:
    """Check every candidate, then time the correct ones in ``rounds`` rounds, the candidates
    taking turns, and keep each one's median: a drift of the machine (clocks, temperature,
    another process) then falls on all of them alike instead of on the ones measured last."""
    results: list[dict[str, Any]] = []
    calls: list[tuple[int, Callable[[], Any]]] = []
    for i, (cfg, (ex, error)) in enumerate(zip(candidates, exes)):
        entry: dict[str, Any] = {"config": _jsonable(dict(cfg)), "ms": None, "error": error}
        results.append(entry)
        if ex is None:
            continue
        progress.update(f"checking {i + 1}/{len(candidates)}")
        try:
            call = run(ex)
            call()
            if check is not None and check(ex) is False:
                raise AutotuneError("wrong answer")
        except Exception as err:  # noqa: BLE001 - a failing candidate is reported, not fatal
            entry["error"] = f"{type(err).__name__}: {err}"
            continue
        calls.append((i, call))
    samples: dict[int, list[float]] = {i: [] for i, _ in calls}
    for r in range(max(1, rounds)):
        progress.update(f"timing, round {r + 1}/{rounds}")
        for i, call in calls:
            if i not in samples:
                continue  # failed in an earlier round
            try:
                samples[i].append(timer(call))
            except Exception as err:  # noqa: BLE001
                results[i]["error"] = f"{type(err).__name__}: {err}"
                del samples[i]
    best: int | None = None
    for i, ts in samples.items():
        results[i]["ms"] = round(statistics.median(ts) * 1e3, 6)
        if best is None or results[i]["ms"] < results[best]["ms"]:
            best = i
    return results, best


class _Progress:
    """One line on stderr, rewritten in place on a terminal, shown once a search has taken
    :data:`PROGRESS_AFTER_S`."""

    def __init__(self, kernel: str, args: Sequence[Any], n: int) -> None:
        self.head = f"tvm.autotune: {kernel} {list(args)}: {n} candidates"
        self.start = time.perf_counter()
        self.shown = False
        self.tty = sys.stderr.isatty()
        self.last = ""

    def update(self, what: str) -> None:
        self.last = what
        if time.perf_counter() - self.start < PROGRESS_AFTER_S:
            return
        line = f"{self.head}, {what}"
        if self.tty:
            sys.stderr.write("\r" + line + "\x1b[K")
        elif not self.shown:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if not self.shown:
            return
        took = time.perf_counter() - self.start
        end = f"{self.head}: done in {took:.1f} s"
        sys.stderr.write(("\r" + end + "\x1b[K\n") if self.tty else end + "\n")
        sys.stderr.flush()
