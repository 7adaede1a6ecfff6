"""Run fuzz cases in worker subprocesses, each case under a timeout, and check the property.

The property (issue 16): every input either round-trips exactly (print, parse, structurally
equal, the same text again) or raises a tvm error with file, line and column; an input marked
for compilation that parses is compiled for the host with run-time bounds checks and, when its
arguments can be made and its work is small, run: it either runs or fails with a tvm error.
Nothing else may escape, and nothing may hang or crash.

A worker (``python fuzz_harness.py --worker``) reads one case per line (JSON) and answers one
line per case on its own descriptor (what kernels print cannot garble it). The parent gives each
case ``timeout`` seconds; a worker that overruns is killed (a *hang*), one that dies is a *crash*;
either way a fresh worker continues with the next case.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Case", "Report", "run_cases"]

HERE = Path(__file__).resolve().parent
#: outcomes that satisfy the property ("depth_error": tvm's deliberate IRDepthError, a
#: RecursionError by design, which says how to flatten the IR; not an internal error)
GOOD = {"roundtrip", "located_error", "compile_error", "compiled", "ran", "run_error",
        "depth_error"}
#: outcomes that break it
BAD = {"internal_error", "unlocated_error", "roundtrip_mismatch", "hang", "crash"}
_MAX_WORK = 2_000_000  # loop iterations a case may run (more is skipped: it is not a hang)


@dataclass
class Case:
    id: int
    text: str
    compile: bool = False
    origin: str = ""


@dataclass
class Report:
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[Case, str, str]] = field(default_factory=list)  # case, outcome, detail
    seconds: float = 0.0

    @property
    def violations(self) -> int:
        return sum(self.counts[k] for k in BAD)

    def summary(self) -> str:
        total = sum(self.counts.values())
        good = ", ".join(f"{k} {self.counts[k]}" for k in sorted(GOOD) if self.counts[k])
        bad = ", ".join(f"{k} {self.counts[k]}" for k in sorted(BAD))
        return (f"{total} inputs in {self.seconds:.0f} s: {good}; violations: {bad}")


# -- the worker ---------------------------------------------------------------------------------
def _worker() -> None:
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # printf from kernels goes to stderr, never into the answers
    _limit_memory()
    for line in sys.stdin:
        case = json.loads(line)
        try:
            outcome, detail = check(case["text"], case["compile"])
        except BaseException:  # noqa: BLE001 - the harness itself must keep answering
            outcome, detail = "internal_error", traceback.format_exc()
        out.write(json.dumps({"id": case["id"], "outcome": outcome, "detail": detail[-4000:]})
                  + "\n")
        out.flush()


def _limit_memory() -> None:
    try:
        import resource

        cap = 8 << 30
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, ValueError, OSError):
        pass


def check(text: str, compile_it: bool) -> tuple[str, str]:
    """The outcome of one input, and a detail (a traceback for violations)."""
    import tvm
    from tvm.error import DiagnosticError, IRDepthError, TVMError
    from tvm.ir import structural_equal
    from tvm.script import from_source

    if os.environ.get("TVM_FUZZ_SELFTEST") and text in ("__hang__", "__crash__"):
        if text == "__hang__":  # the harness's own tests: a case that never answers
            time.sleep(3600)
        os.abort()  # ... and one that kills its worker
    try:
        func = from_source(text, filename="fuzz.py")
    except DiagnosticError as err:
        if err.filename == "fuzz.py" and err.lineno >= 1 and (err.offset or 0) >= 1:
            return "located_error", ""
        return "unlocated_error", f"{type(err).__name__}: {err}"
    except IRDepthError:
        return "depth_error", ""
    except TVMError as err:
        return "unlocated_error", f"{type(err).__name__}: {err}"
    except Exception:
        return "internal_error", traceback.format_exc()
    try:
        printed = func.script()
        again = from_source(printed, filename="printed.py")
        reprinted = again.script()
        # free variables (declared outside any definition site) are matched up, not compared
        # by identity: the printed text declares new ones
        same = structural_equal(func, again, map_free_vars=True)
    except IRDepthError:
        return "depth_error", ""
    except Exception:
        return "roundtrip_mismatch", "printing or parsing the printed text raised:\n" + \
            traceback.format_exc()
    if not same:
        return "roundtrip_mismatch", f"not structurally equal after a round trip:\n{printed}"
    if printed != reprinted:
        return "roundtrip_mismatch", f"printed text changed:\n{printed}\n-----\n{reprinted}"
    if not compile_it or not isinstance(func, tvm.ir.PrimFunc):
        return "roundtrip", ""
    return _compile_and_run(func)


def _compile_and_run(func: Any) -> tuple[str, str]:
    import tvm
    from tvm.error import IRDepthError, TVMError

    try:
        ex = tvm.compile(func, target="c", pass_config={"tir.bounds_check": True}, cache=False)
    except IRDepthError:
        return "depth_error", ""
    except TVMError:
        return "compile_error", ""
    except Exception:
        return "internal_error", traceback.format_exc()
    args = _arguments(func)
    if args is None:
        return "compiled", ""
    try:
        ex(*args)
    except TVMError:
        return "run_error", ""
    except Exception:
        return "internal_error", traceback.format_exc()
    return "ran", ""


def _arguments(func: Any) -> list[Any] | None:
    """Arrays and scalars for ``func`` (symbolic extents are 3), or None when it should not run:
    a handle parameter, or more than _MAX_WORK loop iterations."""
    import numpy as np

    from tvm.codegen.signature import evaluate

    values: dict[Any, Any] = {}
    for p in func.params:
        buf = func.buffer_map.get(p)
        for dim in (buf.shape if buf is not None else []):
            for v in _vars(dim):
                values.setdefault(v, 3)
        if buf is None and p.dtype.is_integer:
            values.setdefault(p, 3)
    if _work(func.body, values) > _MAX_WORK:
        return None
    elements = 0
    rng = np.random.default_rng(0)
    args: list[Any] = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is not None:
            try:
                shape = [int(evaluate(d, values)) for d in buf.shape]
                dtype = np.dtype(_np_dtype(str(buf.dtype)))
            except Exception:  # noqa: BLE001 - a shape the host cannot evaluate: do not run
                return None
            elements += math.prod(shape) if all(d >= 0 for d in shape) else 0
            if any(d < 0 for d in shape) or buf.strides or elements > _MAX_WORK:
                return None  # arrays this big are not what is tested here
            data = rng.integers(-4, 5, size=shape) if dtype.kind in "iub" else \
                rng.standard_normal(shape)
            # np.array keeps a 0-d buffer's array 0-d (ascontiguousarray makes it 1-d)
            args.append(np.array(data, dtype=dtype).reshape(shape))
        elif p.dtype.is_handle:
            return None
        elif p.dtype.is_float:
            args.append(1.5)
        elif p.dtype.is_bool:
            args.append(True)
        else:
            args.append(values.get(p, 3))
    return args


def _np_dtype(name: str) -> Any:
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes

        return getattr(ml_dtypes, name)
    return name


def _vars(e: Any) -> list[Any]:
    from tvm.ir import expr as E
    from tvm.ir.visitor import post_order_visit

    found: list[Any] = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, E.Var) else None)
    return found


def _work(stmt: Any, values: dict[Any, Any]) -> int:
    """A bound on the loop iterations ``stmt`` runs (symbolic extents at their test values)."""
    from tvm.ir import expr as E
    from tvm.ir import stmt as S

    def extent(e: Any) -> int:
        if isinstance(e, E.IntImm):
            return max(e.value, 0)
        if isinstance(e, E.Var) and e in values:
            return int(values[e])
        return 1 << 40  # unknown: assume the worst

    def walk(s: Any) -> int:
        if isinstance(s, S.For):
            return extent(s.extent) * max(walk(s.body), 1)
        if isinstance(s, S.ScopeIdDef):
            n = 1
            for e in s.extents:
                n *= extent(e)
            return n
        if isinstance(s, S.SeqStmt):
            total, scale = 0, 1
            for c in s.seq:
                w = walk(c)
                if isinstance(c, S.ScopeIdDef):
                    scale *= w
                else:
                    total += w
            return max(total, 1) * scale
        body = [v for _, v in s.fields() if isinstance(v, S.Stmt)] if isinstance(s, S.Stmt) else []
        return sum(walk(b) for b in body) or 1

    return walk(stmt)


# -- the parent ---------------------------------------------------------------------------------
class _Worker:
    def __init__(self) -> None:
        env = dict(os.environ)
        import tvm

        src = str(Path(tvm.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join([src, str(HERE), env.get("PYTHONPATH", "")])
        env.setdefault("TVM_BACKENDS", "none")
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "fuzz_harness.py"), "--worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)

    def ask(self, case: Case, timeout: float) -> tuple[str, str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps({"id": case.id, "text": case.text,
                                              "compile": case.compile}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return "crash", f"the worker had died (exit {self.proc.poll()})"
        if not self.sel.select(timeout):
            self.kill()
            return "hang", f"no answer within {timeout:.0f} s"
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            return "crash", f"the worker died with exit status {code}"
        answer = json.loads(line)
        return answer["outcome"], answer["detail"]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.sel.close()

    def alive(self) -> bool:
        return self.proc.poll() is None


def run_cases(cases: Sequence[Case], *, timeout: float = 30.0, workers: int = 1,
              progress: bool = False) -> Report:
    """Run every case (``workers`` subprocesses, each case under ``timeout`` seconds)."""
    import threading

    report = Report()
    start = time.monotonic()
    lock = threading.Lock()
    queue = list(cases)

    def drain() -> None:
        worker = _Worker()
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    case = queue.pop(0)
                outcome, detail = worker.ask(case, timeout)
                with lock:
                    report.counts[outcome] += 1
                    if outcome in BAD:
                        report.failures.append((case, outcome, detail))
                    done = sum(report.counts.values())
                    report.seconds = time.monotonic() - start
                    if progress and done % 500 == 0:
                        print(f"  {done}/{len(cases)}: {report.summary()}", flush=True)
                if not worker.alive() or outcome in ("hang", "crash"):
                    worker.kill()
                    worker = _Worker()
        finally:
            worker.kill()

    threads = [threading.Thread(target=drain) for _ in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report.seconds = time.monotonic() - start
    return report


if __name__ == "__main__" and "--worker" in sys.argv:
    _worker()
