"""``python -m tvm`` (also the ``tvm`` command): the command line of tvm.

    tvm --version
    tvm backends [--json] [--timings]     installed backends, their state (and load times)
    tvm demo [--target c] [--show-source] compile and run the demo kernels, print a table
    tvm doctor [--json]                   what a bug report needs
    tvm cache info | clear | prune --max-size 500M
    tvm new-backend NAME [--dest DIR]     a renamed copy of the template backend
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from . import _doctor, _new_backend, backend, demo
from ._doctor import format_bytes
from ._suggest import did_you_mean
from ._version import __version__
from .runtime import cache

__all__ = ["main", "parse_size"]


class _Parser(argparse.ArgumentParser):
    """argparse with a did-you-mean for an unknown command."""

    def error(self, message: str) -> NoReturn:
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            hint = did_you_mean(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
            message += f"; {hint}" if hint else ""
        super().error(message)


def _cmd_backends(args: argparse.Namespace) -> int:
    backend._autoload()  # a no-op when import tvm already ran it
    records = backend.list_backends()
    if args.json:
        print(json.dumps([r.to_dict() for r in records], indent=2))
    else:
        print(backend.format_table(records, timings=args.timings))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    return demo.run(args)


def _cmd_doctor(args: argparse.Namespace) -> int:
    report = _doctor.collect()
    print(json.dumps(report, indent=2, default=str) if args.json else _doctor.format_report(report))
    return 0


def _cmd_new_backend(args: argparse.Namespace) -> int:
    try:
        folder = _new_backend.new_backend(args.name, args.dest, args.template)
    except (ValueError, FileExistsError, FileNotFoundError) as err:
        print(f"tvm new-backend: {err}", file=sys.stderr)
        return 2
    dashed = args.name.replace("_", "-")
    print(f"created {folder}: backend {args.name!r}, distribution tvm-backend-{dashed}, "
          f"package tvm_backend_{args.name}. Next:\n"
          f"  pip install -e {folder}[test]   # needs tvm-core installed in this environment\n"
          f"  pytest {folder}/tests            # its tests, tvm's conformance kit and the layout "
          "check included\n"
          f"then edit {folder}/src/tvm_backend_{args.name}/ file by file ({folder}/README.md "
          "walks through them)")
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:
    root = cache.cache_dir()
    if args.action == "clear":
        print(f"removed {format_bytes(cache.clear_cache())} from {root}")
        return 0
    if args.action == "prune":
        removed = cache.prune_cache(args.max_size)
        freed = sum(e.size for e in removed)
        print(f"removed {len(removed)} entries ({format_bytes(freed)}) from {root}; "
              f"{format_bytes(cache.cache_size())} left")
        return 0
    entries = list(cache.iter_entries())
    print(f"cache       {root}{'' if cache.cache_enabled() else ' (disabled by TVM_CACHE=0)'}")
    print(f"size        {format_bytes(cache.cache_size())} in {len(entries)} entries")
    per: dict[str, list[int]] = {}
    for e in entries:
        per.setdefault(e.namespace, []).append(e.size)
    for name, sizes in sorted(per.items()):
        print(f"  {name:<10}{len(sizes)} entries, {format_bytes(sum(sizes))}")
    return 0


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes of ``500M``, ``2G``, ``100k``, ``1.5GB`` or a plain number (powers of 1024)."""
    m = _SIZE.match(text)
    if m is None:
        raise argparse.ArgumentTypeError(f"invalid size {text!r}: expected e.g. 500M, 2G or 100000")
    scale = 1024 ** "bkmgt".index((m.group(2) or "b").lower())
    return int(float(m.group(1)) * scale)


def _parser() -> _Parser:
    parser = _Parser(prog="tvm", description="tvm: compile tensor kernels for the hardware you "
                     "have. Each command has --help.")
    parser.add_argument("--version", action="version", version=_version_text())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=_Parser)
    backends = commands.add_parser("backends", help="list installed backends and their state")
    backends.add_argument("--json", action="store_true", help="print the records as JSON")
    backends.add_argument("--timings", action="store_true",
                          help="add each backend's import and registration time (ms)")
    backends.set_defaults(run=_cmd_backends)
    demo_p = commands.add_parser("demo", help="compile and run the demo kernels, print a table")
    demo.add_arguments(demo_p)
    demo_p.set_defaults(run=_cmd_demo)
    doctor = commands.add_parser("doctor", help="report Python, compilers, backends, devices "
                                 "and cache (for bug reports)")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(run=_cmd_doctor)
    cache_p = commands.add_parser("cache", help="the compile cache: info, clear, prune")
    cache_p.add_argument("action", choices=["info", "clear", "prune"], nargs="?", default="info")
    cache_p.add_argument("--max-size", type=parse_size, default=None, metavar="SIZE",
                       help="prune: delete the oldest entries until the cache is at most SIZE "
                            "(500M, 2G, ...)")
    cache_p.set_defaults(run=_cmd_cache)
    new_p = commands.add_parser("new-backend", help="make a renamed copy of the template backend "
                                "(plugins/tvm-backend-example) to start a backend from")
    new_p.add_argument("name", help="the backend's name: a lower-case identifier (its target "
                                    "kind, script namespace and entry-point name)")
    new_p.add_argument("--dest", default=None, metavar="DIR",
                       help="where to create it (default: ./tvm-backend-NAME)")
    new_p.add_argument("--template", default=None, metavar="DIR",
                       help="the template's folder (default: the one in the tvm checkout this "
                            "tvm is imported from)")
    new_p.set_defaults(run=_cmd_new_backend)
    return parser


def _version_text() -> str:
    return f"tvm-core {__version__} (Python {platform.python_version()})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args: Any = parser.parse_args(list(argv) if argv is not None else None)
    if args.command == "cache" and args.action == "prune" and args.max_size is None:
        parser.error("cache prune needs --max-size, e.g. tvm cache prune --max-size 500M")
    try:
        return int(args.run(args))
    except BrokenPipeError:  # `tvm backends | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
