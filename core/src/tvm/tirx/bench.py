"""Timing GPU kernels: the one method of the project's benchmarks (``bench/``) and the seed's
``tvm.tirx.bench`` API on top of it.

The method: every run reads inputs the L2 cannot hold (the inputs are rotated over groups
whose total exceeds 3x the L2, or one group when a run's own footprint does); implementations
of one job are timed in turns, the order rotated every round, so that none gains from when it
runs (a GPU that idled runs faster until its clock drops under a long kernel's power draw); a
time is the median per-run time, each run bracketed by CUDA events on torch's current stream
(where our executables launch), the GPU kept busy while the CPU queues the runs so that the
events bracket the kernels and not their launches.

``bench(..., timer="proton")`` measures the same runs with triton's proton profiler (the
kernels' own times, from CUPTI) when triton and its viewer are importable.

torch and triton are imported by the functions that need them, never by ``import tvm``, which
does not import this module.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..runtime.tool import run_tool

__all__ = [
    "L2_EVICTION_FACTOR", "ROUNDS", "bench", "compare_ms", "event_times", "group_count",
    "l2_cache_bytes", "median_ms", "parse_proton_tree", "prepare_input_groups", "tensor_bytes",
]

#: rounds of :func:`compare_ms` (each implementation timed once a round, the order rotated)
ROUNDS = 6
#: the input groups of one benchmark hold more than this many times the L2's size
L2_EVICTION_FACTOR = 3
#: the L2 size assumed where no CUDA device says its own (the largest of current GPUs, B200's)
_FALLBACK_L2_BYTES = 128 << 20
#: GPU clock cycles the GPU idles per queued run before the timed runs start: about 80 us at
#: 2 GHz, longer than the CPU takes to queue one run, so the runs start back to back
_QUEUE_CYCLES_PER_RUN = 160_000
#: kernels the proton tree does not count towards an implementation (torch's fill and copy
#: kernels: an L2 flush, an output zeroed between runs)
_UNCOUNTED_KERNELS = ("vectorized_elementwise_kernel", "elementwise_kernel_with_index")
_TIMERS = ("event", "proton")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BRANCH = re.compile(r"(├─|└─)\s*(\S+)\s+(.*\S)")


# -- sizes ---------------------------------------------------------------------------------------

def l2_cache_bytes() -> int:
    """The L2 size of torch's current CUDA device, in bytes (128 MiB where none says)."""
    try:
        import torch  # noqa: PLC0415 - torch stays out of import tvm

        props = torch.cuda.get_device_properties(torch.cuda.current_device())
    except Exception:  # no torch, no CUDA device: assume the largest current L2
        return _FALLBACK_L2_BYTES
    return int(getattr(props, "L2_cache_size", 0) or 0) or _FALLBACK_L2_BYTES


def group_count(input_bytes: int, l2_bytes: int | None = None) -> int:
    """How many input groups of ``input_bytes`` each a benchmark rotates over so that no run
    finds its inputs in the L2: ``floor(3 * L2 / input_bytes) + 1`` (their total then exceeds
    3x the L2), or 1 when one group alone holds 3x the L2 (or ``input_bytes`` is 0)."""
    if input_bytes <= 0:
        return 1
    threshold = L2_EVICTION_FACTOR * (l2_cache_bytes() if l2_bytes is None else l2_bytes)
    if input_bytes >= threshold:
        return 1
    return threshold // input_bytes + 1


def tensor_bytes(*values: Any) -> int:
    """The bytes of the distinct arrays in ``values`` (torch tensors, numpy arrays, tvm arrays,
    inside lists, tuples and mappings, any depth); an array met twice counts once. A benchmark's
    input factory says with it what one run reads and writes."""
    return _bytes_of(values, set())


def _bytes_of(value: Any, seen: set[tuple[Any, ...]]) -> int:
    if isinstance(value, (list, tuple)):
        return sum(_bytes_of(v, seen) for v in value)
    if isinstance(value, Mapping):
        return sum(_bytes_of(v, seen) for v in value.values())
    found = _array_bytes(value)
    if found is None:
        return 0
    key, nbytes = found
    if key in seen:
        return 0
    seen.add(key)
    return nbytes


def _array_bytes(value: Any) -> tuple[tuple[Any, ...], int] | None:
    """(identity, bytes) of an array, or None for anything else."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        key = ("torch", value.device.type, value.device.index, value.data_ptr())
        return key, value.numel() * value.element_size()
    nbytes = getattr(value, "nbytes", None)
    if isinstance(value, (str, bytes)) or not isinstance(nbytes, int):
        return None
    interface = getattr(value, "__array_interface__", None)
    pointer = interface["data"][0] if isinstance(interface, dict) else id(value)
    return (type(value).__name__, pointer), nbytes


# -- timing with CUDA events -----------------------------------------------------------------------

def event_times(fn: Callable[[int], Any], nsets: int, reps: int, start: int = 0,
                before: Callable[[], Any] | None = None) -> list[float]:
    """The CUDA-event times (ms) of ``reps`` runs of ``fn(i)``, ``i`` counting from ``start``
    modulo ``nsets``. ``before()`` (an L2 flush, say) runs ahead of each run, outside its events.
    The runs are queued behind a GPU sleep, so that the CPU's launches do not space them out."""
    torch = _torch()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda._sleep(_QUEUE_CYCLES_PER_RUN * reps)
    for r in range(reps):
        if before is not None:
            before()
        starts[r].record()
        fn((start + r) % nsets)
        ends[r].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def median_ms(fn: Callable[[int], Any], nsets: int, reps: int, warmup_passes: int = 2) -> float:
    """Median CUDA-event time (ms) of ``fn(i)`` over ``reps`` runs, ``i`` rotating over ``nsets``
    input sets, after ``warmup_passes`` untimed passes over the sets."""
    _warm({"fn": fn}, nsets, warmup_passes * nsets, 0.0)
    return statistics.median(event_times(fn, nsets, reps))


def compare_ms(fns: Mapping[str, Callable[[int], Any]], nsets: int, reps: int,
               rounds: int = ROUNDS, warmup_s: float = 1.5, *, warmup_calls: int | None = None,
               cooldown_s: float = 0.0, before: Callable[[], Any] | None = None
               ) -> dict[str, float]:
    """Median CUDA-event times (ms) of implementations of one job (``fns[name](i)`` runs it on
    input set ``i`` of ``nsets``), timed in turns.

    Warm-up: every implementation runs ``warmup_calls`` times (default: one pass over the sets)
    in turn, again until ``warmup_s`` seconds have passed, so that the clock settles. Then
    ``rounds`` rounds, each timing about ``reps / rounds`` runs of every implementation, the
    order rotated every round and the input sets rotating on from one batch to the next (no
    batch reads what the one before it read). ``cooldown_s``: the GPU idles this long before
    every round but the first. An implementation's time is the median of all its runs."""
    _warm(fns, nsets, nsets if warmup_calls is None else warmup_calls, warmup_s)
    times: dict[str, list[float]] = {name: [] for name in fns}

    def measure(name: str, start: int, count: int) -> None:
        times[name] += event_times(fns[name], nsets, count, start, before)

    _in_turns(list(fns), reps, rounds, measure, cooldown_s)
    return {name: statistics.median(v) for name, v in times.items()}


def _warm(fns: Mapping[str, Callable[[int], Any]], nsets: int, calls: int, seconds: float,
          before: Callable[[], Any] | None = None) -> None:
    """Each of ``fns`` runs ``calls`` times in turn (``before()`` ahead of each call), passes
    repeated until ``seconds`` passed. The calls take the last sets (set ``-calls`` on): the
    timed runs start at set 0, which the warm-up then touched longest ago (or not at all)."""
    if calls <= 0:
        return
    torch = _torch()
    t0 = time.perf_counter()
    while True:
        for fn in fns.values():
            for i in range(calls):
                if before is not None:
                    before()
                fn((i - calls) % nsets)
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= seconds:
            return


def _in_turns(names: list[str], reps: int, rounds: int,
              measure: Callable[[str, int, int], None], cooldown_s: float = 0.0,
              sleep: Callable[[float], Any] | None = None) -> None:
    """Call ``measure(name, start, count)`` for every name in ``rounds`` rounds, the order
    rotated every round, ``count`` runs a batch (``reps`` a name in all, give or take a round's
    rounding up) and ``start`` the first input set of the batch: the sets rotate on across
    batches."""
    per_round = max(1, math.ceil(reps / rounds))
    cursor = 0
    for r in range(rounds):
        if r and cooldown_s > 0:
            (sleep or time.sleep)(cooldown_s)
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            measure(name, cursor, per_round)
            cursor += per_round


# -- the seed's API --------------------------------------------------------------------------------

def prepare_input_groups(input_factory: Callable[[], Any], l2_bytes: int | None = None
                         ) -> tuple[list[Any], dict[str, Any]]:
    """The input groups of a benchmark, and how they were chosen: ``input_factory()`` returns
    ``(case, input_bytes)``, one run's inputs and the bytes it touches; it is called once per
    group (:func:`group_count` of them)."""
    if not callable(input_factory):
        raise TypeError(f"bench: input_factory must be a callable returning (case, input_bytes), "
                        f"not {type(input_factory).__name__}")
    if l2_bytes is None:
        l2_bytes = l2_cache_bytes()
    elif not isinstance(l2_bytes, int) or isinstance(l2_bytes, bool) or l2_bytes <= 0:
        raise ValueError(f"bench: l2_bytes must be a positive number of bytes, not {l2_bytes!r}")
    first, input_bytes = _call_factory(input_factory)
    count = group_count(input_bytes, l2_bytes)
    groups = [first] + [_call_factory(input_factory)[0] for _ in range(count - 1)]
    return groups, {"num_groups": count, "input_bytes": input_bytes, "l2_bytes": l2_bytes,
                    "l2_eviction_factor": L2_EVICTION_FACTOR, "flush_l2": False}


def _call_factory(input_factory: Callable[[], Any]) -> tuple[Any, int]:
    value = input_factory()
    if not isinstance(value, tuple) or len(value) != 2:
        raise TypeError(f"bench: input_factory must return a pair (case, input_bytes), got "
                        f"{_describe(value)}; tensor_bytes(...) computes input_bytes")
    case, nbytes = value
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        try:
            nbytes = int(nbytes)
        except (TypeError, ValueError):
            raise TypeError(f"bench: input_factory's input_bytes must be an integer, got "
                            f"{_describe(nbytes)}") from None
    if nbytes < 0:
        raise ValueError(f"bench: input_factory's input_bytes must be >= 0, got {nbytes}")
    return case, nbytes


def bench(funcs: Mapping[str, Callable[[Any], Any]] | Callable[[], Any],
          input_factory: Callable[[], Any] | None = None, warmup: int = 500, repeat: int = 100,
          cooldown_s: float = 1.0, timer: str = "proton", proton_name: str = "kernel",
          l2_bytes: int | None = None, debug: bool = False, nsight: bool = False,
          flush_l2_size: int = int(8e8 // 4)) -> Any:
    """Time implementations of one job on the GPU.

    ``bench({"ours": f, "cublas": g}, make_input)``: ``make_input()`` returns ``(case,
    input_bytes)``; it is called once per input group (enough groups that their total exceeds 3x
    the L2, :func:`group_count`) and every implementation is called as ``f(case)``, the groups
    rotating. Each implementation runs ``warmup`` untimed calls, then ``repeat`` timed ones in
    rounds, the order rotated every round, the GPU idling ``cooldown_s`` before every round but
    the first. Returns ``{"impls": {name: ms}, "errors": {name: message}, "timer": ...,
    "benchmark_protocol": {...}}``; an implementation that raises during warm-up is reported in
    ``errors`` and not timed.

    ``bench(fn)`` (no factory) times ``fn()`` alone and returns its median CUDA-event time in
    ms, whatever ``timer`` says (as the seed's returns its event time); before each run, outside
    its events, ``flush_l2_size`` int32 of GPU memory are zeroed to empty the L2 (0: no flush).

    ``timer="event"``: the median of per-run CUDA-event times. ``timer="proton"``: each
    implementation's average kernel time from triton's proton profiler (the slowest kernel an
    implementation launches, torch's fill and elementwise kernels not counted); it needs triton
    with its viewer (``hatchet``). ``debug`` or ``nsight`` (a debugger or Nsight owns the GPU's
    profiling interface): proton is not started and the times come from CUDA events.
    """
    _check_counts(warmup, repeat, cooldown_s)
    if timer not in _TIMERS:
        raise ValueError(f"bench: timer must be 'event' or 'proton', not {timer!r}")
    if callable(funcs) and not isinstance(funcs, Mapping) and input_factory is None:
        return _bench_one(funcs, warmup, repeat, flush_l2_size)
    use_proton = timer == "proton" and not (debug or nsight)
    impls = _check_funcs(funcs, input_factory)
    if use_proton:
        _proton()
    _require_gpu()
    assert input_factory is not None
    groups, protocol = prepare_input_groups(input_factory, l2_bytes)
    fns = {name: _on_groups(fn, groups) for name, fn in impls.items()}
    rounds = min(ROUNDS, repeat) if len(fns) > 1 else 1
    fns, errors = _warm_each(fns, len(groups), warmup)
    if not fns:
        times: dict[str, float] = {}
    elif use_proton:
        times, more = _proton_ms(fns, len(groups), repeat, rounds, cooldown_s, proton_name)
        errors.update(more)
    else:
        times = compare_ms(fns, len(groups), repeat, rounds, 0.0, warmup_calls=0,
                           cooldown_s=cooldown_s)
    return {"impls": times, "errors": errors, "timer": "proton" if use_proton else "event",
            "benchmark_protocol": {**protocol, "warmup": warmup, "repeat": repeat,
                                   "rounds": rounds, "cooldown_s": cooldown_s,
                                   "order": list(impls)}}


def _bench_one(fn: Callable[[], Any], warmup: int, repeat: int, flush_l2_size: int) -> float:
    """``bench(fn)``: the median CUDA-event time (ms) of ``fn()``, the L2 flushed before every
    run (outside its events)."""
    if isinstance(flush_l2_size, bool) or not isinstance(flush_l2_size, int) or flush_l2_size < 0:
        raise ValueError(f"bench: flush_l2_size must be a number of int32 elements >= 0 "
                         f"(0: no flush), not {flush_l2_size!r}")
    torch = _require_gpu()
    flush = None
    if flush_l2_size:
        flush = torch.empty(flush_l2_size, dtype=torch.int32, device="cuda").zero_
    fns = {"fn": lambda i: fn()}
    _warm(fns, 1, warmup, 0.0, flush)
    return compare_ms(fns, 1, repeat, 1, 0.0, warmup_calls=0, before=flush)["fn"]


def _on_groups(fn: Callable[[Any], Any], groups: list[Any]) -> Callable[[int], Any]:
    return lambda i: fn(groups[i])


def _warm_each(fns: dict[str, Callable[[int], Any]], nsets: int, warmup: int
               ) -> tuple[dict[str, Callable[[int], Any]], dict[str, str]]:
    """Warm each implementation up in turn; those that raise go to the errors, not the timing."""
    kept: dict[str, Callable[[int], Any]] = {}
    errors: dict[str, str] = {}
    for name, fn in fns.items():
        try:
            _warm({name: fn}, nsets, warmup, 0.0)
        except Exception as err:  # a failing baseline is reported; the others are still timed
            errors[name] = f"{type(err).__name__}: {err}"
        else:
            kept[name] = fn
    return kept, errors


def _check_counts(warmup: Any, repeat: Any, cooldown_s: Any) -> None:
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat <= 0:
        raise ValueError(f"bench: repeat must be a positive number of timed calls, not {repeat!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"bench: warmup must be a number of untimed calls >= 0, not {warmup!r}")
    if not isinstance(cooldown_s, (int, float)) or cooldown_s < 0:
        raise ValueError(f"bench: cooldown_s must be a number of seconds >= 0, not {cooldown_s!r}")


def _check_funcs(funcs: Any, input_factory: Any) -> dict[str, Callable[[Any], Any]]:
    if not isinstance(funcs, Mapping):
        raise TypeError(f"bench: funcs must be a mapping of name to callable (or one callable "
                        f"taking no arguments, without input_factory), not {_describe(funcs)}")
    if input_factory is None:
        raise TypeError("bench: a mapping of implementations needs input_factory, a callable "
                        "returning (case, input_bytes)")
    if not funcs:
        raise TypeError("bench: funcs is empty; give at least one name -> callable")
    for name, fn in funcs.items():
        if not isinstance(name, str):
            raise TypeError(f"bench: funcs' names must be strings, not {_describe(name)}")
        if not callable(fn):
            raise TypeError(f"bench: funcs[{name!r}] must be callable, not {_describe(fn)}")
    return dict(funcs)


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def _torch() -> Any:
    try:
        import torch  # noqa: PLC0415 - torch stays out of import tvm
    except ImportError as err:
        raise ImportError(f"tvm.tirx.bench times kernels with torch's CUDA events and needs torch "
                          f"(pip install torch): {err}") from None
    return torch


def _require_gpu() -> Any:
    torch = _torch()
    if not torch.cuda.is_available():
        raise RuntimeError("bench: no CUDA GPU is visible to torch (torch.cuda.is_available() is "
                           "False); the benchmark timers run on an NVIDIA GPU")
    return torch


# -- timing with proton ----------------------------------------------------------------------------

def _proton() -> Any:
    """triton's proton profiler, or an ImportError saying what is missing and what to use."""
    try:
        import triton.profiler as proton  # noqa: PLC0415 - optional, and heavy
        import triton.profiler.viewer  # noqa: F401, PLC0415 - the tree is read with it (hatchet)
    except ImportError as err:
        raise ImportError(f"bench(timer='proton') needs triton's proton profiler and its viewer, "
                          f"which do not import here ({err}); install them (pip install triton "
                          f"llnl-hatchet) or pass timer='event' to time with CUDA events"
                          ) from None
    return proton


def _proton_ms(fns: Mapping[str, Callable[[int], Any]], nsets: int, repeat: int, rounds: int,
               cooldown_s: float, session_name: str) -> tuple[dict[str, float], dict[str, str]]:
    """Time ``fns`` (warmed up already) in turns under one proton session, each batch inside a
    scope of its implementation's name; read the times back from proton's tree."""
    proton = _proton()
    torch = _torch()
    folder = tempfile.mkdtemp(prefix="tvm-bench-proton-")
    path = os.path.join(folder, re.sub(r"[^\w.-]", "_", session_name) or "kernel")
    session = proton.start(path)
    proton.deactivate(session)

    def measure(name: str, start: int, count: int) -> None:
        proton.activate(session)
        with proton.scope(name):
            for k in range(count):
                fns[name]((start + k) % nsets)
            torch.cuda.synchronize()
        proton.deactivate(session)

    try:
        try:
            _in_turns(list(fns), repeat, rounds, measure, cooldown_s)
        finally:
            proton.finalize(session)
        tree = _proton_tree(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(tree, file=sys.stderr, end="" if tree.endswith("\n") else "\n")
    times, errors = parse_proton_tree(tree, value_scale=1e-3)
    for name in fns:
        if name not in times and name not in errors:
            errors[name] = (f"proton recorded no kernel time under scope {name!r} (did it launch "
                            "a kernel on the GPU?)")
    return {name: t for name, t in times.items() if name in fns}, errors


def _proton_tree(folder: str) -> str:
    """The text tree of the profile proton wrote in ``folder`` (average kernel times in us)."""
    files = sorted(f for f in os.listdir(folder) if f.endswith(".hatchet"))
    if not files:
        raise RuntimeError(f"bench: proton wrote no .hatchet profile in {folder} "
                           f"(found: {sorted(os.listdir(folder))})")
    command = [sys.executable, "-m", "triton.profiler.viewer", "-m", "avg_time/us",
               os.path.join(folder, files[0])]
    proc = run_tool(command, "reading proton's profile", tool="proton's viewer")
    return proc.stdout


def parse_proton_tree(text: str, value_scale: float = 1.0
                      ) -> tuple[dict[str, float], dict[str, str]]:
    """Read proton's text tree: ``({implementation: ms}, {implementation: error})``.

    A first-level node (a line starting with a branch) is an implementation (a scope); its time
    is its slowest kernel below it, torch's fill and elementwise kernels not counted; times are
    multiplied by ``value_scale`` (1e-3 for a tree in us). ``BASELINE_ERROR: name: message``
    lines give the errors. Colour codes are ignored; the root line and unreadable lines are."""
    times: dict[str, float] = {}
    errors: dict[str, str] = {}
    impl: str | None = None
    for line in _ANSI.sub("", text).splitlines():
        if line.startswith("BASELINE_ERROR:"):
            _, name, message = (line.split(":", 2) + ["", ""])[:3]
            if name.strip():
                errors[name.strip()] = message.strip()
            continue
        node = _BRANCH.search(line)
        if line[:1] in ("├", "└"):
            impl = node.group(3) if node is not None and node.start() == 0 else None
            continue
        if node is None:
            continue
        if impl is None or any(k in node.group(3) for k in _UNCOUNTED_KERNELS):
            continue
        value = _float(node.group(2))
        if value is not None:
            times[impl] = max(times.get(impl, 0.0), value * value_scale)
    return times, errors


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


#: the seed's names of :func:`group_count`, :func:`l2_cache_bytes` and :func:`parse_proton_tree`
_compute_group_count = group_count
_get_l2_cache_bytes = l2_cache_bytes
_parse_proton_tree = parse_proton_tree
