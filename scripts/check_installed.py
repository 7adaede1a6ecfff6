"""Check that the installed distributions of this repository hold the checkout's code.

    python scripts/check_installed.py tvm-core tvm-backend-cuda ...

For each distribution named, every installed file of its packages (``.py`` files, the host's C
kernel library, data files) is compared byte for byte with the file of the same path under the
distribution's ``src/`` folder in this checkout. An installer
that reuses a cached wheel of the same version (uv does this for ``--find-links`` wheels, see
astral-sh/uv#3518) would otherwise run the tests against old code without a word. Exits 1 with
the differing files, 0 when every file matches.
"""

from __future__ import annotations

import importlib.metadata as md
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def source_folder(dist: str) -> pathlib.Path:
    """The checkout's ``src`` folder of distribution ``dist``."""
    if dist == "tvm-core":
        return ROOT / "core" / "src"
    for parent in (ROOT, ROOT / "plugins"):
        if (parent / dist / "pyproject.toml").exists():
            return parent / dist / "src"
    raise SystemExit(f"check_installed: no folder of this checkout builds {dist!r}")


def stale_files(dist: str) -> tuple[int, list[str]]:
    """(number of files compared, the installed files that differ from the checkout)."""
    src = source_folder(dist)
    compared, stale = 0, []
    for entry in md.distribution(dist).files or ():
        top = entry.parts[0]
        if top == ".." or top.endswith(".dist-info") or entry.suffix == ".pyc":
            continue  # console scripts, metadata, bytecode: not files of src/
        mine = src / pathlib.Path(*entry.parts)
        installed = pathlib.Path(str(entry.locate()))
        compared += 1
        if not mine.exists() or mine.read_bytes() != installed.read_bytes():
            stale.append(str(entry))
    return compared, stale


def main(dists: list[str]) -> int:
    failed = False
    for dist in dists:
        compared, stale = stale_files(dist)
        if stale or not compared:
            failed = True
            what = ", ".join(stale[:5]) + (" ..." if len(stale) > 5 else "") or "no files"
            print(f"{dist}: installed code differs from the checkout ({what}); "
                  "a cached wheel of the same version was installed", file=sys.stderr)
        else:
            print(f"{dist}: {compared} files match the checkout")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
