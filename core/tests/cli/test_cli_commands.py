"""``python -m tvm``: --version, demo, doctor, cache, did-you-mean, TVM_LOG_LEVEL."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

import tvm
from tvm.__main__ import main, parse_size
from tvm.runtime.cache import CompileCache, cache_key

SRC = str(Path(tvm.__file__).resolve().parents[1])


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TVM_LOG_LEVEL", raising=False)


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **env}
    return subprocess.run([sys.executable, "-m", "tvm", *args], capture_output=True, text=True,
                          env=full, timeout=300)


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"tvm-core {tvm.__version__} (Python {platform.python_version()})\n"


def test_unknown_command_suggests_the_right_one(capsys):
    with pytest.raises(SystemExit) as info:
        main(["doctr"])
    assert info.value.code == 2
    assert capsys.readouterr().err.rstrip().endswith("did you mean 'doctor'?")


def test_demo_accepts_target_and_shows_progress_but_no_source():
    # `python -m tvm demo --target c` used to fail with "expected one argument".
    proc = _run("demo", "--target", "c", "--kernel", "vector add")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == [
        "collecting demo kernels from the loaded backends ...",
        "[1/1] vector add on c (c): compiling and running ...",
        proc.stderr.splitlines()[2],
    ]
    assert proc.stderr.splitlines()[2].startswith("[1/1] vector add on c (c): ok in ")
    assert proc.stdout.splitlines()[0].split() == [
        "kernel", "target", "backend", "time", "(ms)", "max", "error", "ok", "note"]
    assert proc.stdout.rstrip().endswith("1 of 1 kernels correct")
    assert "TVM_EXPORT" not in proc.stdout


def test_demo_show_source_prints_the_generated_code_before_the_table():
    proc = _run("demo", "--target", "c", "--kernel", "vector add", "--show-source", "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    out = proc.stdout
    assert out.startswith("==== vector add on c (c) ====\n")
    assert "TVM_EXPORT int32_t vector_add(" in out
    assert out.index("TVM_EXPORT") < out.index("kernel  ")


def test_demo_with_no_matching_target_says_so(capsys):
    assert main(["demo", "--target", "nonexistent", "--quiet"]) == 1
    assert capsys.readouterr().out == ("no demo cases: no loaded backend can run a kernel on this "
                                       "machine for target nonexistent\n")


def test_doctor_reports_what_a_bug_report_needs(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"python       {platform.python_version()} ({sys.executable})"
    assert lines[2].startswith(f"tvm-core     {tvm.__version__} (")
    assert any(line.startswith("host cc      ") and "OpenMP" in line for line in lines)
    assert f"cache        {os.environ['TVM_CACHE_DIR']}: 0 entries, 0 B" in lines
    assert any(line.startswith("  c        tvm-core") and line.endswith(": loaded") for line in lines)
    assert f"           devices: this CPU ({platform.machine()}, {os.cpu_count()} cores)" in lines
    assert f"TVM_CACHE_DIR={os.environ['TVM_CACHE_DIR']}" in out


def test_doctor_json(capsys):
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tvm-core"]["version"] == tvm.__version__
    assert report["cache"]["entries"] == 0
    assert {b["name"]: b["state"] for b in report["backends"]}["c"] == "loaded"


def _fill_cache(n: int, size: int) -> None:
    cache = CompileCache("c")
    for i in range(n):
        path = cache.put(cache_key("entry", i), b"x" * size)
        os.utime(path.with_suffix(".json"), (1000 + i, 1000 + i))  # entry i is older than i+1
        os.utime(path, (1000 + i, 1000 + i))


def test_cache_info_prune_clear(capsys):
    _fill_cache(4, 10_000)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"cache       {os.environ['TVM_CACHE_DIR']}"
    assert out[1].endswith("in 4 entries") and out[2].startswith("  c         4 entries, ")
    assert main(["cache", "prune", "--max-size", "25k"]) == 0
    assert capsys.readouterr().out.startswith("removed 2 entries (")
    from tvm.runtime.cache import iter_entries

    left = sorted(e.key for e in iter_entries())
    assert left == sorted(cache_key("entry", i) for i in (2, 3))  # the two newest stay
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out.startswith("removed ")
    assert list(iter_entries()) == []


def test_cache_prune_needs_a_size(capsys):
    with pytest.raises(SystemExit):
        main(["cache", "prune"])
    assert "cache prune needs --max-size" in capsys.readouterr().err


@pytest.mark.parametrize("text, expected", [("500M", 500 << 20), ("2G", 2 << 30), ("100k", 102400),
                                            ("1.5GB", int(1.5 * (1 << 30))), ("123", 123)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_parse_size_rejects_nonsense():
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="invalid size 'lots'"):
        parse_size("lots")


def test_log_level_debug_logs_passes_and_the_compiler_command():
    code = ("import tvm\nfrom tvm.demo import KERNELS\n"
            "tvm.compile(KERNELS[0].build(), target='c')\n")
    env = {**os.environ, "PYTHONPATH": SRC, "TVM_LOG_LEVEL": "DEBUG"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert any(line.startswith("tvm DEBUG [tvm.transform] pass TilePrimitiveDispatch: ")
               for line in lines), proc.stderr
    assert any(line.startswith("tvm INFO [tvm.host.compiler] ") and " -shared " in line
               for line in lines), proc.stderr


def test_import_tvm_does_not_import_logging_without_the_variable():
    code = "import sys, tvm; print('logging' in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k != "TVM_LOG_LEVEL"}
    env["PYTHONPATH"] = SRC
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_every_distribution_ships_py_typed():
    root = Path(__file__).resolve().parents[3]  # the checkout
    packages = [p for pyproject in root.glob("**/pyproject.toml")
                if pyproject.parent != root
                and not any(part.startswith(".") for part in pyproject.relative_to(root).parts)
                for p in (pyproject.parent / "src").glob("*") if (p / "__init__.py").exists()]
    assert len(packages) >= 5  # core, three backends, the template (fixtures too)
    assert [str(p) for p in packages if not (p / "py.typed").exists()] == []


def test_installed_tvm_core_has_py_typed():
    from importlib import metadata

    try:
        files = metadata.files("tvm-core") or []
    except metadata.PackageNotFoundError:
        pytest.skip("tvm-core is not installed here (a source checkout on PYTHONPATH)")
    names = {str(f) for f in files}
    if any(n.startswith("__editable__") or n.startswith("_editable_impl") for n in names):
        pytest.skip("tvm-core is an editable install (pip install -e): its RECORD lists the "
                    "import hook, not the package's files (CI's `all` session checks the wheel)")
    assert "tvm/py.typed" in names


def test_doctor_reports_each_device_probe():
    from types import SimpleNamespace

    from tvm._doctor import _probes

    def broken():
        raise OSError("driver exploded")

    plugin = SimpleNamespace(tvm_device_probes=lambda: {
        "gpu": lambda: None, "npu": lambda: "no NPU attached", "tpu": broken})
    assert _probes(plugin) == {"gpu": "available", "npu": "no NPU attached",
                               "tpu": "the probe failed: OSError: driver exploded"}
    assert _probes(SimpleNamespace()) == {}
