"""Test matrix: one session per distribution, plus all, discovery, lint and typecheck.

Run everything with ``nox`` (the README's test command); one session with ``nox -s core``.
Each backend session installs core plus that one backend into a fresh venv, so a backend is
always tested alone with core.
"""

from __future__ import annotations

import os
import pathlib
import re

import nox

ROOT = pathlib.Path(__file__).parent
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = False

PYTHON = os.environ.get("TVM_NOX_PYTHON", "3.11")
# Hardware backends: folder name -> extra pytest options.
BACKENDS = [p.name for p in sorted(ROOT.glob("tvm-backend-*")) if (p / "pyproject.toml").exists()]
# The seed's smaller backends live under plugins/ (the template there is tested by discovery).
BACKENDS += [f"plugins/{p.name}" for p in sorted(ROOT.glob("plugins/tvm-backend-*"))
             if (p / "pyproject.toml").exists() and p.name != "tvm-backend-example"]


def _short(folder: str) -> str:
    return folder.rsplit("/", 1)[-1].removeprefix("tvm-backend-")


SESSIONS = ["core", *[_short(b) for b in BACKENDS], "all", "discovery", "lint", "typecheck"]
nox.options.sessions = SESSIONS


def _pytest(session: nox.Session, *paths: str) -> None:
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths, *session.posargs)


@nox.session(python=PYTHON)
def core(session: nox.Session) -> None:
    """Core alone: must pass with no backend installed."""
    session.install("./core[test]")
    session.env["TVM_BACKENDS_STRICT"] = "1"
    _pytest(session, "core/tests")


# Extras a backend's own session installs beyond [test] (CUDA: NVSHMEM so its link tests run).
BACKEND_EXTRAS = {"tvm-backend-cuda": "test,nvshmem"}


def _local_requirements(folder: str) -> list[str]:
    """The folders of this repository's backends that ``folder``'s distribution depends on
    (adreno: opencl), found in its pyproject's dependencies: not on PyPI, so installed from here."""
    text = (ROOT / folder / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    names = re.findall(r'"(tvm-backend-[a-z0-9-]+)', deps.group(1) if deps else "")
    return [b for name in names for b in BACKENDS if b.rsplit("/", 1)[-1] == name]


def _backend_session(folder: str):
    short = _short(folder)

    @nox.session(name=short, python=PYTHON)
    def _session(session: nox.Session) -> None:
        extras = BACKEND_EXTRAS.get(folder, "test")
        needs = [f"./{b}" for b in _local_requirements(folder)]
        session.install("./core[test]", *needs, f"./{folder}[{extras}]")
        session.env["TVM_BACKENDS_STRICT"] = "1"
        _pytest(session, f"{folder}/tests")

    _session.__doc__ = f"Core plus {folder} alone (and the backends it requires)."
    return _session


for _folder in BACKENDS:
    globals()[f"session_{_short(_folder).replace('-', '_')}"] = _backend_session(_folder)


@nox.session(name="all", python=PYTHON)
def all_backends(session: nox.Session) -> None:
    """Core with every backend installed together."""
    session.install("./core[test]", *[f"./{b}[test]" for b in BACKENDS])
    session.env["TVM_BACKENDS_STRICT"] = "1"
    _pytest(session, "core/tests", *[f"{b}/tests" for b in BACKENDS])


@nox.session(python=PYTHON)
def discovery(session: nox.Session) -> None:
    """Plugin discovery end to end, from built wheels in fresh venvs (plugins/discovery_check.py).

    Builds wheels of core, plugins/tvm-backend-example and plugins/fixtures/*, installs them into
    two fresh venvs (with uv when it is on PATH) and checks discovery, selection, broken,
    incompatible and conflicting plugins in subprocesses.
    """
    # pip builds the wheels; hatchling lets it build without an isolated env per project.
    session.install("pip", "hatchling>=1.18")
    workdir = ROOT / ".nox" / "_discovery"
    session.run("python", str(ROOT / "plugins" / "discovery_check.py"), str(workdir))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy over core and the backends."""
    session.install("mypy", "./core", *[f"./{b}" for b in BACKENDS])
    session.run("mypy", "core/src/tvm", *[f"{b}/src" for b in BACKENDS])
