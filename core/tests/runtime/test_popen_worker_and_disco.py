"""``tvm.support.popen_pool.PopenWorker`` runs a function in a child process;
``tvm.runtime.disco`` names the seed's sessions and says they are not provided."""

from __future__ import annotations

import os

import pytest

from tvm.support.popen_pool import PopenWorker


def test_a_closure_runs_in_another_process_and_returns_its_value() -> None:
    offset = 40

    def work(x: int) -> tuple[int, int]:
        return os.getpid(), x + offset

    w = PopenWorker()
    w.send(work, (2,))
    pid, value = w.recv()
    assert value == 42 and pid != os.getpid()


def test_an_exception_in_the_worker_is_raised_by_recv() -> None:
    def fail() -> None:
        raise ValueError("bad tile shape 3x5")

    w = PopenWorker()
    w.send(fail)
    with pytest.raises(ValueError, match="bad tile shape 3x5"):
        w.recv()


def test_a_hanging_worker_times_out_and_is_killed() -> None:
    import time

    w = PopenWorker()
    w.send(time.sleep, (30,), timeout=0.5)
    with pytest.raises(TimeoutError, match="did not return within 0.5 s"):
        w.recv()


def test_recv_without_send_and_send_twice_are_errors() -> None:
    w = PopenWorker()
    with pytest.raises(RuntimeError, match="nothing was sent"):
        w.recv()
    w.send(int, ("7",))
    with pytest.raises(RuntimeError, match="call recv\\(\\) first"):
        w.send(int, ("8",))
    assert w.recv() == 7


def test_disco_sessions_import_but_say_they_are_not_provided() -> None:
    from tvm.runtime import disco

    with pytest.raises(NotImplementedError, match="ProcessSession: disco sessions .* are not "
                                                  "provided"):
        disco.ProcessSession(num_workers=4)
