"""Test matrix: one session per distribution, plus all, discovery, docs, lint and typecheck.

Run everything with ``nox`` (the README's test command); one session with ``nox -s core``.
Each backend session installs core plus that one backend into a fresh venv, so a backend is
always tested alone with core. The core session runs on the oldest and the newest supported
Python; the all session installs every distribution from the wheels that
``scripts/build_wheels.sh`` builds, as a user would.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil

import nox

ROOT = pathlib.Path(__file__).parent
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = False
# On CI a missing interpreter is an error (a skipped Python would look like a pass).
nox.options.error_on_missing_interpreters = bool(os.environ.get("CI"))

PYTHON = os.environ.get("TVM_NOX_PYTHON", "3.11")
# The oldest and the newest Python that tvm-core supports (requires-python >= 3.10).
CORE_PYTHONS = ["3.10", "3.13"]
# Hardware backends: folder name -> extra pytest options.
BACKENDS = [p.name for p in sorted(ROOT.glob("tvm-backend-*")) if (p / "pyproject.toml").exists()]
# The seed's smaller backends live under plugins/ (the template there has its own session).
BACKENDS += [f"plugins/{p.name}" for p in sorted(ROOT.glob("plugins/tvm-backend-*"))
             if (p / "pyproject.toml").exists() and p.name != "tvm-backend-example"]


def _dist(folder: str) -> str:
    """The distribution in ``folder`` (``plugins/tvm-backend-opencl`` -> ``tvm-backend-opencl``)."""
    return folder.rsplit("/", 1)[-1]


def _short(folder: str) -> str:
    return _dist(folder).removeprefix("tvm-backend-")


SESSIONS = ["core", *[_short(b) for b in BACKENDS], "all", "example", "discovery", "docs", "bench",
            "torch", "emulate", "lint", "typecheck"]
nox.options.sessions = SESSIONS


def _install_ours(session: nox.Session, *requirements: str) -> None:
    """Install ``requirements`` (some of them this repository's folders or wheels) with every
    cached build of our distributions refreshed when uv installs: uv keeps builds of local
    folders and wheels by path and version, and a CI machine that ran an older commit at the same
    path must not get that commit's code back (astral-sh/uv#3518)."""
    refresh: list[str] = []
    if session.venv_backend == "uv":
        for dist in ["tvm-core", *(_dist(b) for b in BACKENDS), "tvm-backend-example"]:
            refresh += ["--refresh-package", dist]
    session.install(*refresh, *requirements)


def _check_installed(session: nox.Session, *dists: str) -> None:
    """Fail unless the installed files of ``dists`` are this checkout's (an installer's cache can
    hand back an older build of the same version: see scripts/check_installed.py)."""
    session.run("python", str(ROOT / "scripts" / "check_installed.py"), *dists, silent=True)


# pytest-xdist workers of the large sessions (core, each backend, all): the CI machine has 2
# cores; TVM_TEST_WORKERS=0 runs them in one process.
WORKERS = os.environ.get("TVM_TEST_WORKERS", str(min(4, os.cpu_count() or 1)))


def _pytest(session: nox.Session, *paths: str, parallel: bool = False) -> None:
    workers = ["-n", WORKERS] if parallel and WORKERS != "0" else []
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, *paths,
                *session.posargs)


@nox.session(python=CORE_PYTHONS)
def core(session: nox.Session) -> None:
    """Core alone, on the oldest and the newest supported Python: must pass with no backend."""
    _install_ours(session, "./core[test]")
    _check_installed(session, "tvm-core")
    session.env["TVM_BACKENDS_STRICT"] = "1"
    _pytest(session, "core/tests", parallel=True)


# Extras a backend's own session installs beyond [test] (CUDA: NVSHMEM so its link tests run).
BACKEND_EXTRAS = {"tvm-backend-cuda": "test,nvshmem"}


def _local_requirements(folder: str) -> list[str]:
    """The folders of this repository's backends that ``folder``'s distribution depends on
    (adreno: opencl), found in its pyproject's dependencies: not on PyPI, so installed from here."""
    text = (ROOT / folder / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    names = re.findall(r'"(tvm-backend-[a-z0-9-]+)', deps.group(1) if deps else "")
    return [b for name in names for b in BACKENDS if _dist(b) == name]


def _backend_session(folder: str):
    short = _short(folder)

    @nox.session(name=short, python=PYTHON)
    def _session(session: nox.Session) -> None:
        extras = BACKEND_EXTRAS.get(folder, "test")
        needs = [f"./{b}" for b in _local_requirements(folder)]
        _install_ours(session, "./core[test]", *needs, f"./{folder}[{extras}]")
        _check_installed(session, "tvm-core", *map(_dist, _local_requirements(folder)), _dist(folder))
        session.env["TVM_BACKENDS_STRICT"] = "1"
        _pytest(session, f"{folder}/tests", parallel=True)

    _session.__doc__ = f"Core plus {folder} alone (and the backends it requires)."
    return _session


for _folder in BACKENDS:
    globals()[f"session_{_short(_folder).replace('-', '_')}"] = _backend_session(_folder)


def _install_wheels(session: nox.Session, *dists: str) -> None:
    """Build every distribution's wheel (scripts/build_wheels.sh) and install ``dists`` (with
    their ``test`` extra) from them, as a user would: a file a wheel forgets, or a dependency
    range that does not resolve, fails here, where a source install would hide it.

    Each wheel is named by its path (``tvm-core[test] @ file:///...``), not found by name in
    ``--find-links``: uv takes a wheel found by name from its cache when one of the same version
    is there (astral-sh/uv#3518), so a machine that ran this before would test old code.
    scripts/check_installed.py then proves the installed files are the checkout's."""
    wheels = ROOT / ".nox" / f"_wheels-{session.name}"
    shutil.rmtree(wheels, ignore_errors=True)
    session.install("pip", "hatchling>=1.18")
    session.run("bash", str(ROOT / "scripts" / "build_wheels.sh"), str(wheels),
                env={"PYTHON": "python"}, external=True)
    files = {w.name.split("-")[0].replace("_", "-"): w for w in wheels.glob("*.whl")}
    _install_ours(session, "--find-links", str(wheels),
                    *[f"{d}[test] @ {files[d].resolve().as_uri()}" for d in dists])
    # the tests must import the installed wheels, not the checkout, and those hold this code
    session.run("python", "-c", "import tvm, sys; sys.exit('site-packages' not in tvm.__file__)")
    _check_installed(session, *dists)


@nox.session(name="all", python=PYTHON)
def all_backends(session: nox.Session) -> None:
    """Core with every backend installed together, from the wheels."""
    _install_wheels(session, "tvm-core", *[_dist(b) for b in BACKENDS])
    session.env["TVM_BACKENDS_STRICT"] = "1"
    _pytest(session, "core/tests", *[f"{b}/tests" for b in BACKENDS], parallel=True)


@nox.session(python=PYTHON)
def example(session: nox.Session) -> None:
    """The template backend (plugins/tvm-backend-example) with core, from the wheels: its own
    tests, tvm's conformance kit among them."""
    _install_wheels(session, "tvm-core", "tvm-backend-example")
    session.env["TVM_BACKENDS_STRICT"] = "1"
    _pytest(session, "plugins/tvm-backend-example/tests")


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
def docs(session: nox.Session) -> None:
    """The user guide: mkdocs in strict mode (any warning fails), then its code examples run
    as tests (docs/test_guide_examples.py). Every backend is installed, so that the generated
    compile-options page lists them all."""
    _install_ours(session, "mkdocs==1.6.1", "./core[test]", *[f"./{b}" for b in BACKENDS])
    session.run("mkdocs", "build", "--strict", "--site-dir", str(ROOT / ".nox" / "_site"))
    _pytest(session, "docs")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Every benchmark of bench/ in its --smoke mode, started as its docstring says (no GPU:
    the GPU benchmarks compile every kernel they would time with NVRTC), so none can rot
    between GPU sessions (bench/test_bench_smoke.py)."""
    _install_ours(session, "./core[test]", "./tvm-backend-cuda[test]", "./tvm-backend-trn[test]")
    _check_installed(session, "tvm-core", "tvm-backend-cuda", "tvm-backend-trn")
    session.env["TVM_BACKENDS_STRICT"] = "1"
    _pytest(session, "bench/test_bench_smoke.py")


# The CPU build of torch this workplace's machines keep on disk: pip finds it through its
# configuration (find-links), and a local version (2.13.0+cpu) sorts above PyPI's 2.13.0.
TORCH = "torch==2.13.0"


@nox.session(python=PYTHON)
def torch(session: nox.Session) -> None:
    """tvm.torch and the kernel library's torch side with a CPU torch: custom ops on the host
    target under torch.compile(fullgraph=True), the CUDA kernels' argument checks (which
    answer before any launch), and the hot call's C tensor launcher on CPU tensors."""
    _install_ours(session, "pip", "./core[test]", "./tvm-backend-cuda[test]")
    _check_installed(session, "tvm-core", "tvm-backend-cuda")
    # pip, not uv: uv reads no pip configuration and would fetch a CUDA build from PyPI
    session.run("python", "-m", "pip", "install", "-q", TORCH)
    session.env["TVM_BACKENDS_STRICT"] = "1"
    _pytest(session, "core/tests/runtime/test_torch_custom_op.py",
            "tvm-backend-cuda/tests/test_kernels_gemm.py::test_gemm_callable_checks_its_arguments",
            "tvm-backend-cuda/tests/test_kernels_gemm.py::test_the_library_is_reachable_from_tvm",
            "tvm-backend-cuda/tests/test_kernels_gemm.py::test_torch_ops_trace_without_a_gpu",
            # the C tensor launcher reads torch tensors through torch's DLPack C exchange API
            "tvm-backend-cuda/tests/test_c_launcher.py",
            "tvm-backend-cuda/tests/test_call_path.py")


@nox.session(python=PYTHON)
def emulate(session: nox.Session) -> None:
    """The gpu-marked tests of tvm-backend-cuda under the CUDA emulator (no GPU needed), with a
    CPU torch: each test taking the ``device`` fixture runs on the CPU (``TVM_TEST_EMULATE=1``,
    even on a GPU machine); the others skip, naming why. Plus the emulator's own tests."""
    _install_ours(session, "pip", "./core[test]", "./tvm-backend-cuda[test]")
    _check_installed(session, "tvm-core", "tvm-backend-cuda")
    session.run("python", "-m", "pip", "install", "-q", TORCH)  # pip: see the torch session
    session.env["TVM_BACKENDS_STRICT"] = "1"
    session.env["TVM_TEST_EMULATE"] = "1"
    _pytest(session, "-m", "gpu", "-rs", "tvm-backend-cuda/tests", parallel=True)
    _pytest(session, "tvm-backend-cuda/tests/test_cuda_emulator.py", parallel=True)


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """The fuzzers of core/tests/fuzz (issue 16), run explicitly with ``nox -s fuzz``.

    10,000 inputs with the fixed seed 0, then 2,000 with a random seed (printed first, so a
    failure can be replayed with ``--seed``): half kernels drawn by hypothesis, half mutants of
    the test kernels' printed text; every input must round-trip or fail with a located tvm
    error, compiled ones (host, run-time bounds checks) must run or fail with a tvm error,
    nothing may hang or crash. Failing inputs are written to .fuzz-failures/. Extra arguments
    go to both runs (e.g. ``-- --workers 4``).
    """
    _install_ours(session, "./core[test]")
    script = str(ROOT / "core" / "tests" / "fuzz" / "run_fuzz.py")
    session.run("python", script, "--count", "10000", "--seed", "0", *session.posargs)
    session.run("python", script, "--count", "2000", "--seed", "random", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check (the code is not ruff-formatted: its own layout)."""
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy over core and the backends."""
    _install_ours(session, "mypy", "./core", *[f"./{b}" for b in BACKENDS])
    session.run("mypy", "core/src/tvm", *[f"{b}/src" for b in BACKENDS])
