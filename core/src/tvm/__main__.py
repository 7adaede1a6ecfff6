"""``python -m tvm``: ``backends`` lists the installed backends; ``demo`` runs the main job."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _cmd_backends(args: argparse.Namespace) -> int:
    import tvm.backend

    tvm.backend._autoload()  # a no-op when import tvm already ran it
    records = tvm.backend.list_backends()
    if args.json:
        print(json.dumps([r.to_dict() for r in records], indent=2))
    else:
        print(tvm.backend.format_table(records))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    import importlib

    try:
        demo = importlib.import_module("tvm.demo")
    except ModuleNotFoundError as err:
        if err.name != "tvm.demo":
            raise
        print("python -m tvm demo: this build of tvm-core has no tvm.demo module", file=sys.stderr)
        return 2
    result = demo.main(args.demo_args)
    return int(result or 0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tvm", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    backends = commands.add_parser("backends", help="list installed backends and their state")
    backends.add_argument("--json", action="store_true", help="print the records as JSON")
    backends.set_defaults(run=_cmd_backends)
    demo = commands.add_parser("demo", help="compile and run the demo kernels on every backend")
    demo.add_argument("demo_args", nargs=argparse.REMAINDER, help="passed to tvm.demo.main")
    demo.set_defaults(run=_cmd_demo)
    args, extra = parser.parse_known_args(argv)
    if args.command == "demo":
        args.demo_args = [*args.demo_args, *extra]  # options such as --target go to the demo
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
