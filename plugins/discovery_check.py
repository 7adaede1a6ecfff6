"""End-to-end plugin discovery from built wheels in fresh virtual environments.

Builds wheels of tvm-core, the example backend and the fixtures under plugins/fixtures, installs
them into two fresh venvs (core + example; core + example + every fixture) and checks, each in a
subprocess: discovery, aliases, TVM_BACKENDS selection, a plugin that raises at import and one
that raises in a hook (import tvm still works, one warning naming the distribution,
list_backends shows the failure, TVM_BACKENDS_STRICT=1 raises), an incompatible plugin-API
range, two plugins that conflict, and the seed's register_backend() contract.

    python plugins/discovery_check.py [WORKDIR]

Prints one line per check and "N passed, N failed"; exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(
    p for p in (ROOT / "plugins" / "fixtures").iterdir() if (p / "pyproject.toml").exists()
)
PROJECTS = [ROOT / "core", ROOT / "plugins" / "tvm-backend-example", *FIXTURES]
FIXTURE_DISTS = (
    "tvm-backend-broken-import",
    "tvm-backend-broken-hook",
    "tvm-backend-old-api",
    "tvm-backend-conflict-a",
    "tvm-backend-conflict-b",
    "tvm-backend-legacy",
)

# Runs inside the venv: import tvm while recording warnings, then report as JSON.
PROBE = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tvm
    import tvm.backend
    tvm.backend._autoload()  # a no-op when import tvm already ran it
out = {"warnings": [str(w.message) for w in caught],
       "records": {r.name: r.to_dict() for r in tvm.backend.list_backends()}}
"""


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)


def _checked(cmd: list[str], what: str) -> None:
    proc = _run(cmd)
    if proc.returncode != 0:
        print(f"{what} failed:\n$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}", file=sys.stderr)
        raise SystemExit(2)


def build_wheels(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.whl"):
        old.unlink()
    # Reuse an installed hatchling when there is one: faster, and works offline.
    isolation = ["--no-build-isolation"] if _has("hatchling") else []
    for project in PROJECTS:
        _checked(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "-q",
                "--no-deps",
                *isolation,
                "-w",
                str(out),
                str(project),
            ],
            f"building {project.name}",
        )
    return sorted(out.glob("*.whl"))


def _has(module: str) -> bool:
    return _run([sys.executable, "-c", f"import {module}"]).returncode == 0


def make_venv(path: Path, wheels: list[Path], wheel_dir: Path, extra: tuple[str, ...] = ()) -> Path:
    if path.exists():
        shutil.rmtree(path)
    uv = shutil.which("uv")
    python = path / ("Scripts" if os.name == "nt" else "bin") / "python"
    if uv:
        _checked([uv, "venv", "-q", "--python", sys.executable, str(path)], "creating venv")
        install = [uv, "pip", "install", "-q", "--python", str(python)]
    else:
        _checked([sys.executable, "-m", "venv", str(path)], "creating venv")
        install = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _checked(
        [*install, "--find-links", str(wheel_dir), *map(str, wheels), *extra],
        f"installing into {path.name}",
    )
    return python


@dataclass
class Check:
    name: str
    code: str
    verify: Callable[[subprocess.CompletedProcess[str], dict[str, Any]], None]
    env: dict[str, str] | None = None
    probe: bool = True


class Runner:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def run(self, python: Path, check: Check) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TVM_", "PYTHON"))}
        env.update(check.env or {})
        code = (PROBE if check.probe else "import json\nout = {}\n") + textwrap.dedent(check.code)
        code += "\nprint('@@' + json.dumps(out, default=str))\n"
        start = time.perf_counter()
        proc = _run([str(python), "-c", code], env=env, cwd=str(python.parent), timeout=300)
        data: dict[str, Any] = {}
        for line in proc.stdout.splitlines():
            if line.startswith("@@"):
                data = json.loads(line[2:])
        try:
            check.verify(proc, data)
        except AssertionError as err:
            self.failed += 1
            print(
                f"FAIL {check.name}: {err}\n  stdout: {proc.stdout.strip()[-2000:]}\n"
                f"  stderr: {proc.stderr.strip()[-2000:]}"
            )
        else:
            self.passed += 1
            print(f"ok   {check.name} ({time.perf_counter() - start:.1f}s)")


def _ok(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, f"exit status {proc.returncode}"


def _warnings_about(data: dict[str, Any], dist: str) -> list[str]:
    return [w for w in data["warnings"] if dist in w]


# -- checks in the venv with core + example -----------------------------------------------------


def _v_discovery(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    example = data["records"]["example"]
    assert example["state"] == "loaded", example
    assert example["distribution"] == "tvm-backend-example" and example["version"] == "0.1.0"
    assert example["target_kinds"] == ["example"] and example["n_tags"] == 2
    assert example["pipelines"] == ["example"] and example["aliases"] == ["example"]
    assert not _warnings_about(data, "tvm-backend-example"), data["warnings"]
    assert data["alias"] == ["tvm_backend_example", True, True]
    assert data["target"] == "example -mcpu=demo-board -vector_width=8"
    assert data["default_pipeline"] == "example"
    assert data["cuda"]["state"] == "not installed"


def _v_host(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    host = data["records"].get("c")
    assert host is not None, "core's built-in backend 'c' was not discovered"
    assert host["state"] == "loaded", host
    assert host["distribution"] == "tvm-core" and host["builtin"] is True


def _v_namespace(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    assert data["namespaces"] == ["example"], data
    assert data["call"] == ["tirx.example.fma", "example.fma"], data


def _v_cli(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    table, records = data["table"], {r["name"]: r for r in data["json"]}
    assert table.splitlines()[0].split()[:4] == ["backend", "distribution", "version", "state"]
    assert any(
        line.split()[:4] == ["example", "tvm-backend-example", "0.1.0", "loaded"]
        for line in table.splitlines()
    ), table
    assert records["example"]["state"] == "loaded"


def _v_example_tests(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    assert data["rc"] == 0, data["output"][-3000:]


def _v_none(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    assert data["records"]["example"]["state"] == "disabled"
    assert data["before"] == "ModuleNotFoundError", data
    assert data["after"] == ["loaded", "tvm_backend_example.tags"], data
    if "c" in data["records"]:
        assert data["records"]["c"]["state"] != "disabled", "built-in backends always load"


def _state_is(name: str, state: str) -> Callable[[Any, dict[str, Any]], None]:
    def verify(proc: Any, data: dict[str, Any]) -> None:
        _ok(proc)
        assert data["records"][name]["state"] == state, data["records"][name]

    return verify


def _names_install(text: str) -> bool:
    """The install hint: a pip command that installs tvm-backend-cuda (from an index, or from
    this checkout's wheels when the distributions are not on one)."""
    return bool(re.search(r"pip install (--find-links \S+ )?tvm-backend-cuda", text))


def _v_missing_selected(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    assert data["records"]["example"]["state"] == "loaded"
    hits = [w for w in data["warnings"] if "'cuda'" in w and _names_install(w)]
    assert len(hits) == 1, data["warnings"]


def _v_missing_strict(proc: Any, data: dict[str, Any]) -> None:
    assert proc.returncode != 0, "import tvm should fail with TVM_BACKENDS_STRICT=1"
    assert "BackendError" in proc.stderr and _names_install(proc.stderr)


def _v_not_installed(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    assert data["load"][0] == "BackendNotInstalledError" and data["load"][1] is True
    assert _names_install(data["load"][2]), data["load"][2]
    assert data["tag"].startswith(
        "no installed backend provides target tag 'nvidia/nvidia-h100'; install it with '"
    ), data["tag"]
    assert _names_install(data["tag"]), data["tag"]


# -- checks in the venv with every fixture ------------------------------------------------------


def _v_broken(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    records = data["records"]
    for name, dist, text in (
        ("broken_import", "tvm-backend-broken-import", "broken on purpose"),
        ("broken_hook", "tvm-backend-broken-hook", "fails in a hook on purpose"),
    ):
        assert records[name]["state"] == "failed", records[name]
        assert text in records[name]["reason"], records[name]
        found = _warnings_about(data, dist)
        assert len(found) == 1, f"expected one warning naming {dist}: {data['warnings']}"
        assert text in found[0]
    assert data["brokenhook_kind"] == "TargetError", (
        "the failed hook's target kind was not rolled back"
    )
    assert records["example"]["state"] == "loaded"


def _v_broken_strict(proc: Any, data: dict[str, Any]) -> None:
    assert proc.returncode != 0, "import tvm should fail with TVM_BACKENDS_STRICT=1"
    assert "BackendError" in proc.stderr
    assert "tvm-backend-broken-import" in proc.stderr and "tvm-backend-broken-hook" in proc.stderr


def _v_incompatible(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    record = data["records"]["old_api"]
    assert record["state"] == "incompatible", record
    assert "'>=1,<2'" in record["reason"] and "plugin API 2" in record["reason"], record
    assert data["oldapi_kind"] == "TargetError"
    assert len(_warnings_about(data, "tvm-backend-old-api")) == 1


def _v_conflict(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    a, b = data["records"]["conflict_a"], data["records"]["conflict_b"]
    assert a["state"] == "loaded" and a["target_kinds"] == ["conflict"], a
    assert b["state"] == "failed", b
    for text in ("target kind 'conflict'", "tvm-backend-conflict-a", "tvm-backend-conflict-b"):
        assert text in b["reason"], b
    assert data["conflict_doc"] == "from conflict_a"


def _v_legacy(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    assert data["records"]["legacy"]["state"] == "loaded"
    assert data["legacy"] == ["legacykind", "tvm_backend_legacy"]


def _v_deselected(proc: Any, data: dict[str, Any]) -> None:
    _ok(proc)
    noisy = [w for w in data["warnings"] if any(d in w for d in FIXTURE_DISTS)]
    assert noisy == [], noisy
    for name in ("broken_import", "broken_hook", "old_api", "conflict_b"):
        assert data["records"][name]["state"] == "disabled"


CLEAN = [
    Check(
        "discovery and aliases",
        """
        import tvm.tirx, tvm.tirx.example.tags as tags
        from tvm.target import Target
        from tvm.tirx.compilation_pipeline import get_default_tir_pipeline
        out["alias"] = [tvm.backend.example.__name__, tvm.tirx.example is tvm.backend.example,
                        tags is sys.modules["tvm_backend_example.tags"]]
        out["target"] = str(Target("example/demo-board"))
        out["default_pipeline"] = get_default_tir_pipeline(Target("example"))
        out["cuda"] = out["records"]["cuda"]
        """,
        _v_discovery,
    ),
    Check("built-in host backend c loads through the hooks", "", _v_host),
    Check(
        "script namespace with an intrinsic",
        """
        from tvm.script.namespace import NAMESPACES
        from tvm.ir import Var
        call = NAMESPACES["example"].fma(Var("a", "float32"), Var("b", "float32"), 1.0)
        out["namespaces"] = [n for n in NAMESPACES.keys() if NAMESPACES.owner_of(n) == "example"]
        out["call"] = [call.op.name, call.op.printer_name]
        """,
        _v_namespace,
    ),
    Check(
        "python -m tvm backends [--json]",
        """
        import subprocess
        run = lambda *a: subprocess.run([sys.executable, "-m", "tvm", "backends", *a],
                                        capture_output=True, text=True, check=True).stdout
        out["table"] = run()
        out["json"] = json.loads(run("--json"))
        """,
        _v_cli,
    ),
    Check(
        "the example backend's own tests, installed",
        f"""
        import subprocess, sys
        # -p no:tvm: these tests need no fixture of tvm.testing, so its state cannot mask theirs.
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-p", "no:tvm",
                               {str(ROOT / "plugins" / "tvm-backend-example" / "tests")!r}],
                              capture_output=True, text=True)
        out = {{"rc": proc.returncode, "output": proc.stdout + proc.stderr}}
        """,
        _v_example_tests,
        probe=False,
    ),
    Check(
        "TVM_BACKENDS=0 loads nothing; load() by hand",
        """
        try:
            import tvm.tirx.example.tags
            out["before"] = "imported"
        except ModuleNotFoundError:
            out["before"] = "ModuleNotFoundError"
        tvm.backend.load("example")
        import tvm.tirx.example.tags as tags
        states = {r.name: r.state for r in tvm.backend.list_backends()}
        out["after"] = [states["example"], tags.__name__]
        """,
        _v_none,
        env={"TVM_BACKENDS": "0"},
    ),
    Check("TVM_BACKENDS=none", "", _state_is("example", "disabled"), env={"TVM_BACKENDS": "none"}),
    Check(
        "TVM_BACKENDS=-example",
        "",
        _state_is("example", "disabled"),
        env={"TVM_BACKENDS": "-example"},
    ),
    Check(
        "TVM_BACKENDS=example", "", _state_is("example", "loaded"), env={"TVM_BACKENDS": "example"}
    ),
    Check(
        "TVM_BACKENDS names a backend that is not installed",
        "",
        _v_missing_selected,
        env={"TVM_BACKENDS": "example,cuda"},
    ),
    Check(
        "... and with TVM_BACKENDS_STRICT=1",
        "",
        _v_missing_strict,
        env={"TVM_BACKENDS": "example,cuda", "TVM_BACKENDS_STRICT": "1"},
    ),
    Check(
        "missing backend names its distribution",
        """
        from tvm.target import Target
        try:
            tvm.backend.load("cuda")
        except ImportError as err:
            out["load"] = [type(err).__name__, isinstance(err, ImportError), str(err)]
        try:
            Target("nvidia/nvidia-h100")
        except Exception as err:
            out["tag"] = str(err)
        """,
        _v_not_installed,
    ),
]

WITH_FIXTURES = [
    Check(
        "broken plugins are skipped with one warning each",
        """
        from tvm.target import Target
        try:
            Target("brokenhook")
            out["brokenhook_kind"] = "exists"
        except Exception as err:
            out["brokenhook_kind"] = type(err).__name__
        """,
        _v_broken,
    ),
    Check(
        "TVM_BACKENDS_STRICT=1 turns failures into errors",
        "",
        _v_broken_strict,
        env={"TVM_BACKENDS_STRICT": "1"},
    ),
    Check(
        "incompatible plugin-API range",
        """
        from tvm.target import Target
        try:
            Target("oldapi")
            out["oldapi_kind"] = "exists"
        except Exception as err:
            out["oldapi_kind"] = type(err).__name__
        """,
        _v_incompatible,
    ),
    Check(
        "two plugins claiming one target kind",
        """
        from tvm.target import Target
        out["conflict_doc"] = Target("conflict").kind.doc
        """,
        _v_conflict,
    ),
    Check(
        "seed contract: register_backend() only",
        """
        from tvm.target import Target
        out["legacy"] = [Target("legacykind").kind.name, tvm.backend.legacy.__name__]
        """,
        _v_legacy,
    ),
    Check(
        "deselected broken plugins stay quiet",
        "",
        _v_deselected,
        env={"TVM_BACKENDS": "-broken_import,-broken_hook,-old_api,-conflict_b"},
    ),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", nargs="?", default=str(ROOT / ".nox" / "_discovery"))
    args = parser.parse_args(argv)
    work = Path(args.workdir).resolve()
    start = time.perf_counter()
    wheel_dir = work / "wheels"
    wheels = build_wheels(wheel_dir)
    print(f"built {len(wheels)} wheels in {time.perf_counter() - start:.1f}s")

    def pick(*dists: str) -> list[Path]:
        return [w for w in wheels if w.name.split("-")[0].replace("_", "-") in dists]

    runner = Runner()
    clean = make_venv(
        work / "venv-clean", pick("tvm-core", "tvm-backend-example"), wheel_dir, extra=("pytest",)
    )
    for check in CLEAN:
        runner.run(clean, check)
    full = make_venv(
        work / "venv-fixtures", pick("tvm-core", "tvm-backend-example", *FIXTURE_DISTS), wheel_dir
    )
    for check in WITH_FIXTURES:
        runner.run(full, check)
    print(f"{runner.passed} passed, {runner.failed} failed ({time.perf_counter() - start:.1f}s)")
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main())
