"""The fuzz run (nox session ``fuzz``): generated kernels and mutants of the test kernels.

    python core/tests/fuzz/run_fuzz.py --count 10000 --seed 0
    python core/tests/fuzz/run_fuzz.py --count 2000 --seed random

Half of the inputs are kernels drawn by hypothesis (``fuzz_gen``), half mutants of the test
kernels' printed text (``fuzz_mutate``); every third input that parses is also compiled for the
host with run-time bounds checks and run. Exit status 1 if any input breaks the property
(``fuzz_harness``); each failing input is written to ``--out`` with what happened.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_gen import generate  # noqa: E402
from fuzz_harness import Case, Report, run_cases  # noqa: E402
from fuzz_mutate import mutants  # noqa: E402

COMPILE_EVERY = 3


def make_cases(count: int, seed: int) -> list[Case]:
    """``count`` inputs for ``seed``: the same list every time."""
    n_gen = count // 2
    texts = [(t, "gen") for t in generate(n_gen, seed)]
    texts += [(t, "mut") for t in mutants(count - len(texts), seed)]
    return [Case(k, text, compile=k % COMPILE_EVERY == 0, origin=origin)
            for k, (text, origin) in enumerate(texts)]


def write_failures(report: Report, out: Path, seed: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for case, outcome, detail in report.failures:
        path = out / f"seed{seed}-case{case.id}-{outcome}.py"
        header = (f"# fuzz seed {seed}, case {case.id} ({case.origin}, compile={case.compile}): "
                  f"{outcome}\n# " + detail.replace("\n", "\n# ") + "\n")
        path.write_text(header + case.text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", default="0", help="an int, or 'random'")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per input")
    parser.add_argument("--out", type=Path, default=Path(".fuzz-failures"))
    args = parser.parse_args(argv)
    seed = random.SystemRandom().randrange(2**31) if args.seed == "random" else int(args.seed)
    print(f"fuzz: {args.count} inputs, seed {seed}, {args.workers} worker(s), "
          f"{args.timeout:.0f} s per input", flush=True)
    cases = make_cases(args.count, seed)
    report = run_cases(cases, timeout=args.timeout, workers=args.workers, progress=True)
    print(f"fuzz (seed {seed}): {report.summary()}", flush=True)
    if report.failures:
        write_failures(report, args.out, seed)
        print(f"fuzz: {len(report.failures)} failing inputs written to {args.out}/; reproduce "
              f"with --seed {seed} --count {args.count}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
