"""The CUDA emulator's streams, events and graphs (``tvm_backend_cuda.emulated_streams``): the
model itself, on host work and one small kernel (no GPU needed)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tvm.error import BoundsCheckError
from tvm_backend_cuda import emulated_streams as es
from tvm_backend_cuda.emulator import load_source

VADD = r"""
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) c[i] = a[i] + b[i];  // one past the end when the grid covers n + 1
}
"""
VADD_SIG = {"vadd": [("a", "ptr"), ("b", "ptr"), ("c", "ptr"), ("n", "int32")]}


@pytest.fixture(scope="module")
def vadd():
    return load_source(VADD, VADD_SIG)


def test_side_stream_runs_in_order_after_the_host_returns(vadd) -> None:
    a, b = np.arange(256, dtype=np.float32), np.ones(256, np.float32)
    c, d = np.zeros(256, np.float32), np.zeros(256, np.float32)
    gate = threading.Event()
    s = es.Stream()
    with es.stream(s):
        es.host(gate.wait)  # the stream is busy until the gate opens
        c[:] = np.nan
        vadd.launch("vadd", 1, 256, [a, b, c, 255])  # returns at once: queued behind the gate
        es.host(lambda: d.__setitem__(slice(None), c))
    assert not s.query() and np.isnan(c).all()  # nothing ran yet
    gate.set()
    s.synchronize()
    np.testing.assert_array_equal(d, a + b)


def test_default_stream_runs_work_as_issued(vadd) -> None:
    a, b, c = np.ones(64, np.float32), np.ones(64, np.float32), np.zeros(64, np.float32)
    assert es.current_stream() is es.DEFAULT
    vadd.launch("vadd", 1, 64, [a, b, c, 63])
    np.testing.assert_array_equal(c, 2)
    with pytest.raises(BoundsCheckError):  # its errors are raised by the call
        vadd.launch("vadd", 1, 65, [a, b, c, 64])


def test_a_side_stream_error_is_raised_by_synchronize_and_skips_the_rest(vadd) -> None:
    a, b, c = np.ones(64, np.float32), np.ones(64, np.float32), np.zeros(64, np.float32)
    ran = []
    s = es.Stream()
    vadd.launch("vadd", 1, 65, [a, b, c, 64], stream=s)  # c[64]: out of bounds
    s.launch_host_func(lambda: ran.append(1))
    done = s.record_event()
    with pytest.raises(BoundsCheckError, match="vadd"):
        s.synchronize()
    assert ran == [] and done.query()  # the work behind it skipped, its event completed
    s.synchronize()  # reported once


def test_events_order_streams_and_time_the_work_between() -> None:
    s1, s2 = es.Stream(), es.Stream()
    order: list[str] = []
    gate = threading.Event()
    start, end = es.Event(enable_timing=True), es.Event(enable_timing=True)
    start.record(s1)
    s1.launch_host_func(gate.wait)
    s1.launch_host_func(lambda: time.sleep(0.05))
    s1.launch_host_func(lambda: order.append("s1"))
    end.record(s1)
    s2.wait_stream(s1)
    s2.launch_host_func(lambda: order.append("s2"))
    assert not end.query()
    gate.set()
    s2.synchronize()
    assert order == ["s1", "s2"] and end.query()
    assert start.elapsed_time(end) >= 50.0
    with pytest.raises(RuntimeError, match="enable_timing"):
        es.Event().elapsed_time(end)


def test_graph_records_on_the_capturing_stream_and_replays(vadd) -> None:
    a, b, c = np.ones(64, np.float32), np.ones(64, np.float32), np.zeros(64, np.float32)
    g = es.CUDAGraph()
    with es.graph(g):
        vadd.launch("vadd", 1, 64, [a, b, c, 63])  # captured: does not run
    assert (c == 0).all()
    for value in (2.0, 5.0):
        a[:] = value  # read when the replay runs
        g.replay()
        es.synchronize()
        np.testing.assert_array_equal(c, value + 1)
    with pytest.raises(RuntimeError, match="not been captured"):
        es.CUDAGraph().replay()


def test_a_stream_that_is_not_the_emulators_is_refused(vadd) -> None:
    a = np.zeros(64, np.float32)
    with pytest.raises(TypeError, match="cannot use int as a stream of the CUDA emulator"):
        vadd.launch("vadd", 1, 63, [a, a, a, 63], stream=7)


def test_an_idle_worker_ends_and_a_new_one_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(es, "_IDLE_SECONDS", 0.05)
    s, out = es.Stream(), []
    s.launch_host_func(lambda: out.append(1))
    s.synchronize()
    deadline = time.monotonic() + 5
    while s._worker is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert s._worker is None
    s.launch_host_func(lambda: out.append(2))
    s.synchronize()
    assert out == [1, 2]
