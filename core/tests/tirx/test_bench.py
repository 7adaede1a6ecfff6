"""tvm.tirx.bench: group counts, byte accounting, proton's tree, argument errors, and the timing
flow on a stand-in for torch's CUDA events (no GPU needed); the real timers under ``gpu``."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from typing import Any

import numpy as np
import pytest

from tvm.tirx import bench as B

torch = pytest.importorskip("torch")

MiB = 1 << 20


# -- group counts and sizes ----------------------------------------------------------------------

@pytest.mark.parametrize(("input_bytes", "l2", "expected"), [
    (7, 1000, 429),            # 3000 // 7 + 1
    (MiB, 40 * MiB, 121),      # 120 groups hold exactly 3x; one more exceeds it
    (3 * 40 * MiB - 1, 40 * MiB, 2),
    (3 * 40 * MiB, 40 * MiB, 1),
    (10 * 40 * MiB, 40 * MiB, 1),
    (0, 40 * MiB, 1),
])
def test_group_count(input_bytes: int, l2: int, expected: int) -> None:
    assert B.group_count(input_bytes, l2) == expected
    assert B._compute_group_count(input_bytes, l2_bytes=l2) == expected


def test_group_count_total_exceeds_three_l2() -> None:
    for size in (1, 1000, 12345, 5 * MiB):
        n = B.group_count(size, 50 * MiB)
        assert n * size > 3 * 50 * MiB >= (n - 1) * size


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the value assumed without a GPU")
def test_l2_without_gpu_is_128_mib() -> None:
    assert B.l2_cache_bytes() == 128 * MiB
    assert B.group_count(MiB) == 385


def test_tensor_bytes_torch_numpy_nested() -> None:
    a = torch.empty(64, 32, dtype=torch.float16)          # 4096 bytes
    b = torch.empty(10, dtype=torch.float64)              # 80
    c = np.zeros((3, 5), dtype=np.int32)                  # 60
    assert B.tensor_bytes(a) == 4096
    assert B.tensor_bytes(a, b) == 4176
    assert B.tensor_bytes([a, (b, {"c": c})], "text", 7, None) == 4236


def test_tensor_bytes_counts_an_array_once() -> None:
    a = torch.empty(100, dtype=torch.float32)
    c = np.ones(8, dtype=np.float64)
    assert B.tensor_bytes(a, a, [a], {"x": a}) == 400
    assert B.tensor_bytes(c, (c,)) == 64
    assert B.tensor_bytes(a, a[:10]) == 400               # a view at the same address
    assert B.tensor_bytes(a, torch.empty(100, dtype=torch.float32)) == 800


def test_tensor_bytes_of_nothing() -> None:
    assert B.tensor_bytes() == 0
    assert B.tensor_bytes([], {}, 3.5, "x", b"bytes") == 0


# -- proton's tree -----------------------------------------------------------------------------

TREE = """\
1234.000 ROOT
├─ 900.000 ours
│  ├─ 850.000 gemm_kernel
│  └─ 40.000 void at::native::vectorized_elementwise_kernel<4, FillFunctor<int>>
├─ 2500.000 cublas gemm
│  ├─ 600.000 sm90_xmma_gemm
│  │  └─ 2100.000 nested_kernel
│  └─ 12.000 elementwise_kernel_with_index
└─ 5.000 empty
"""


def test_parse_tree_in_us() -> None:
    times, errors = B.parse_proton_tree(TREE, value_scale=1e-3)
    assert times == pytest.approx({"ours": 0.85, "cublas gemm": 2.1})
    assert errors == {}


def test_parse_tree_default_scale_and_colours() -> None:
    text = "\x1b[1;31m└─ 2.250 tir\x1b[0m\n   └─ \x1b[33m2.250\x1b[0m k\n"
    assert B.parse_proton_tree(text) == ({"tir": 2.25}, {})


def test_parse_tree_errors_and_unreadable_lines() -> None:
    text = ("BASELINE_ERROR: torch: out of memory: 2 GiB\n"
            "BASELINE_ERROR:\n"
            "├─ 1.0 a\n│  └─ n/a k\n│  └─ 0.5 k2\n"
            "├─ 7.0\n│  └─ 9.0 orphan\n")
    times, errors = B._parse_proton_tree(text)
    assert times == {"a": 0.5}
    assert errors == {"torch": "out of memory: 2 GiB"}


def test_parse_empty_tree() -> None:
    assert B.parse_proton_tree("") == ({}, {})
    assert B.parse_proton_tree("0.1 ROOT\n") == ({}, {})


# -- input groups and argument errors -------------------------------------------------------------

def test_prepare_input_groups_calls_factory_per_group() -> None:
    made: list[int] = []

    def factory() -> tuple[Any, int]:
        made.append(len(made))
        return ("case", len(made) - 1), 100

    groups, protocol = B.prepare_input_groups(factory, l2_bytes=1000)
    assert groups == [("case", i) for i in range(31)]
    assert protocol == {"num_groups": 31, "input_bytes": 100, "l2_bytes": 1000,
                        "l2_eviction_factor": 3, "flush_l2": False}


@pytest.mark.parametrize(("factory", "error", "words"), [
    ("not callable", TypeError, "input_factory must be a callable"),
    (lambda: [1, 2], TypeError, "must return a pair (case, input_bytes), got list"),
    (lambda: (1, 2, 3), TypeError, "must return a pair"),
    (lambda: (1, "many"), TypeError, "input_bytes must be an integer, got str"),
    (lambda: (1, -5), ValueError, "input_bytes must be >= 0, got -5"),
])
def test_prepare_input_groups_errors(factory: Any, error: type, words: str) -> None:
    with pytest.raises(error) as info:
        B.prepare_input_groups(factory, l2_bytes=1000)
    assert words in str(info.value)


def test_prepare_input_groups_bad_l2() -> None:
    with pytest.raises(ValueError, match="l2_bytes must be a positive number of bytes, not 0"):
        B.prepare_input_groups(lambda: (1, 8), l2_bytes=0)


def _factory() -> tuple[Any, int]:
    return (), 16


@pytest.mark.parametrize(("args", "kwargs", "error", "words"), [
    (({"a": print}, _factory), {"timer": "cupti"}, ValueError, "timer must be 'event' or 'proton'"),
    (({"a": print}, _factory), {"repeat": 0}, ValueError, "repeat must be a positive"),
    (({"a": print}, _factory), {"warmup": -1}, ValueError, "warmup must be a number"),
    (({"a": print}, _factory), {"cooldown_s": -0.5}, ValueError, "cooldown_s must be"),
    (({"a": print},), {}, TypeError, "needs input_factory"),
    (({}, _factory), {}, TypeError, "funcs is empty"),
    (({1: print}, _factory), {}, TypeError, "names must be strings, not int"),
    (({"a": 3}, _factory), {}, TypeError, "funcs['a'] must be callable, not int"),
    ((print, _factory), {}, TypeError, "funcs must be a mapping of name to callable"),
    ((["a"], _factory), {}, TypeError, "not list"),
    ((print,), {"flush_l2_size": -1}, ValueError, "flush_l2_size must be a number of int32"),
])
def test_bench_argument_errors(args: tuple[Any, ...], kwargs: dict[str, Any], error: type,
                               words: str) -> None:
    with pytest.raises(error) as info:
        B.bench(*args, **{"timer": "event", **kwargs})
    assert words in str(info.value)


def test_proton_missing_names_event_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "triton.profiler", None)
    with pytest.raises(ImportError) as info:
        B.bench({"a": print}, _factory)
    assert "bench(timer='proton') needs triton's proton profiler" in str(info.value)
    assert "pass timer='event'" in str(info.value)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without a GPU")
def test_no_gpu_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match=r"no CUDA GPU is visible to torch"):
        B.bench({"a": print}, _factory, timer="event")
    with pytest.raises(RuntimeError, match=r"no CUDA GPU is visible to torch"):
        B.bench(lambda: None, timer="event", flush_l2_size=0)


# -- the timing flow, on a stand-in for torch's CUDA events ---------------------------------------

class _Clock:
    """A GPU stand-in: kernels advance ``now``; events read it when recorded."""

    def __init__(self) -> None:
        self.now = 0.0
        self.log: list[tuple[str, Any]] = []

    def module(self) -> Any:
        clock = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.at = -1.0

            def record(self) -> None:
                self.at = clock.now

            def elapsed_time(self, end: Any) -> float:
                return end.at - self.at

        def sleep(cycles: int) -> None:
            clock.log.append(("sleep", cycles))

        def empty(n: int, dtype: Any, device: str) -> Any:
            return types.SimpleNamespace(zero_=lambda: clock.log.append(("flush", n, dtype)))

        cuda = types.SimpleNamespace(Event=Event, _sleep=sleep, synchronize=lambda: None,
                                     is_available=lambda: True)
        return types.SimpleNamespace(cuda=cuda, empty=empty, int32="int32")

    def kernel(self, name: str, ms: float) -> Any:
        def run(case: Any) -> None:
            self.log.append((name, case))
            self.now += ms
        return run


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    c = _Clock()
    monkeypatch.setattr(B, "_torch", c.module)
    monkeypatch.setattr(B.time, "sleep", lambda s: c.log.append(("cooldown", s)))
    return c


def test_bench_event_times_each_impl(clock: _Clock) -> None:
    made = iter(range(100))
    out = B.bench({"fast": clock.kernel("fast", 1.0), "slow": clock.kernel("slow", 3.0)},
                  lambda: (next(made), 1000), warmup=2, repeat=12, cooldown_s=0.25,
                  timer="event", l2_bytes=1000)
    assert out["impls"] == {"fast": 1.0, "slow": 3.0}
    assert out["errors"] == {}
    assert out["timer"] == "event"
    assert out["benchmark_protocol"] == {
        "num_groups": 4, "input_bytes": 1000, "l2_bytes": 1000, "l2_eviction_factor": 3,
        "flush_l2": False, "warmup": 2, "repeat": 12, "rounds": 6, "cooldown_s": 0.25,
        "order": ["fast", "slow"]}
    calls = [e for e in clock.log if e[0] in ("fast", "slow")]
    # warm-up on the last groups, then 6 rounds of 2 runs, order rotated, groups rotating on
    assert calls[:4] == [("fast", 2), ("fast", 3), ("slow", 2), ("slow", 3)]
    timed = calls[4:]
    assert [n for n, _ in timed[::2]] == ["fast", "slow", "slow", "fast"] * 3
    assert [g for _, g in timed] == [i % 4 for i in range(24)]
    assert [e for e in clock.log if e[0] == "cooldown"] == [("cooldown", 0.25)] * 5


def test_bench_reports_a_failing_impl(clock: _Clock) -> None:
    def broken(case: Any) -> None:
        raise MemoryError("out of memory")

    out = B.bench({"ours": clock.kernel("ours", 2.0), "baseline": broken},
                  lambda: (0, 10), warmup=1, repeat=3, cooldown_s=0.0, timer="event",
                  l2_bytes=1)
    assert out["impls"] == {"ours": 2.0}
    assert out["errors"] == {"baseline": "MemoryError: out of memory"}


def test_bench_one_callable_returns_event_ms(clock: _Clock,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "triton.profiler", None)   # not needed: events time it
    run = clock.kernel("k", 0.5)
    assert B.bench(lambda: run(None), warmup=3, repeat=4, flush_l2_size=0) == 0.5
    assert sum(1 for e in clock.log if e[0] == "k") == 7
    assert not any(e[0] == "cooldown" for e in clock.log)


def test_bench_one_callable_flushes_outside_the_events(clock: _Clock) -> None:
    run = clock.kernel("k", 2.0)
    assert B.bench(lambda: run(None), warmup=1, repeat=2, timer="event", flush_l2_size=99) == 2.0
    names = [e[0] for e in clock.log if e[0] != "sleep"]
    assert names == ["flush", "k"] * 3
    assert ("flush", 99, "int32") in clock.log


def test_debug_times_with_events_without_proton(clock: _Clock,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "triton.profiler", None)
    out = B.bench({"a": clock.kernel("a", 1.5)}, lambda: (0, 8), warmup=0, repeat=2,
                  cooldown_s=0.0, nsight=True, l2_bytes=64)
    assert out["timer"] == "event"
    assert out["impls"] == {"a": 1.5}


def test_median_and_compare(clock: _Clock) -> None:
    assert B.median_ms(clock.kernel("m", 0.75), 3, 5) == 0.75
    out = B.compare_ms({"x": clock.kernel("x", 1.0), "y": clock.kernel("y", 2.0)}, 2, 4,
                       rounds=2, warmup_s=0.0)
    assert out == {"x": 1.0, "y": 2.0}


def test_in_turns_rotates_order_and_sets() -> None:
    seen: list[tuple[str, int, int]] = []
    slept: list[float] = []
    B._in_turns(["a", "b", "c"], 4, 2, lambda n, s, c: seen.append((n, s, c)), 1.0, slept.append)
    assert seen == [("a", 0, 2), ("b", 2, 2), ("c", 4, 2), ("b", 6, 2), ("c", 8, 2), ("a", 10, 2)]
    assert slept == [1.0]


# -- imports -----------------------------------------------------------------------------------

def test_import_tvm_does_not_import_bench() -> None:
    code = ("import sys, tvm; print(sorted(m for m in ('tvm.tirx.bench', 'torch', 'triton') "
            "if m in sys.modules)); import tvm.tirx; print(tvm.tirx.bench.__name__)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "tvm.tirx.bench"]


# -- on the GPU ----------------------------------------------------------------------------------

def _mm_inputs() -> tuple[Any, int]:
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    return (a, b), B.tensor_bytes(a, b)


@pytest.mark.gpu
def test_gpu_event_timer() -> None:
    out = B.bench({"mm": lambda c: torch.mm(*c), "add": lambda c: c[0] + c[1]}, _mm_inputs,
                  warmup=3, repeat=12, cooldown_s=0.0, timer="event", l2_bytes=4 * MiB)
    assert set(out["impls"]) == {"mm", "add"}
    assert all(0 < t < 50 for t in out["impls"].values())
    assert out["benchmark_protocol"]["num_groups"] == 49


@pytest.mark.gpu
def test_gpu_one_callable() -> None:
    a, b = _mm_inputs()[0]
    assert 0 < B.bench(lambda: torch.mm(a, b), warmup=2, repeat=5, timer="event",
                       flush_l2_size=1 << 20) < 50


@pytest.mark.gpu
def test_gpu_proton_timer() -> None:
    try:
        B._proton()
    except ImportError as err:
        pytest.skip(str(err))
    out = B.bench({"mm": lambda c: torch.mm(*c)}, _mm_inputs, warmup=3, repeat=6,
                  cooldown_s=0.0, timer="proton", l2_bytes=4 * MiB)
    assert out["timer"] == "proton"
    assert 0 < out["impls"]["mm"] < 50, out
