"""Entry-point discovery: metadata only, same answer as importlib.metadata."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tvm.backend._discovery import scan_entry_points, scan_entry_points_importlib


def _dist(
    site: Path, folder: str, name: str, version: str, entry_points: str, meta: str = "METADATA"
) -> None:
    info = site / folder
    info.mkdir(parents=True)
    (info / meta).write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_scan_reads_entry_points_and_metadata(tmp_path):
    site = tmp_path / "site"
    _dist(
        site,
        "tvm_backend_x-1.2.dist-info",
        "tvm-backend-x",
        "1.2",
        "[console_scripts]\nx = y:z\n\n[tvm.backends]\nx = tvm_backend_x.plugin\n"
        "x2 = tvm_backend_x.other:obj\n\n[pytest11]\nq = r\n",
    )
    _dist(
        site,
        "Other_Dist.egg-info",
        "Other.Dist",
        "3.0",
        "[tvm.backends]\nother = other_mod\n",
        meta="PKG-INFO",
    )
    _dist(site, "unrelated-1.0.dist-info", "unrelated", "1.0", "[console_scripts]\na = b\n")
    found = {ep.name: ep for ep in scan_entry_points([str(site)])}
    assert set(found) == {"x", "x2", "other"}
    assert found["x"].value == "tvm_backend_x.plugin"
    assert found["x"].distribution == "tvm-backend-x" and found["x"].version == "1.2"
    assert found["x2"].module_name == "tvm_backend_x.other"
    assert found["other"].distribution == "other-dist" and found["other"].version == "3.0"


def test_first_distribution_on_path_wins(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(
        first,
        "tvm_backend_x-2.0.dist-info",
        "tvm-backend-x",
        "2.0",
        "[tvm.backends]\nx = new.plugin\n",
    )
    _dist(
        second,
        "tvm_backend_x-1.0.dist-info",
        "tvm-backend-x",
        "1.0",
        "[tvm.backends]\nx = old.plugin\n",
    )
    (found,) = scan_entry_points([str(first), str(second), str(tmp_path / "missing")])
    assert (found.value, found.version) == ("new.plugin", "2.0")


def test_scan_imports_nothing(tmp_path):
    site = tmp_path / "site"
    _dist(
        site,
        "tvm_backend_x-1.dist-info",
        "tvm-backend-x",
        "1",
        "[tvm.backends]\nx = module_that_must_not_be_imported\n",
    )
    (pkg := site / "module_that_must_not_be_imported.py").write_text("raise SystemExit(3)\n")
    assert pkg.exists()
    assert [ep.name for ep in scan_entry_points([str(site)])] == ["x"]
    assert "module_that_must_not_be_imported" not in sys.modules


def test_same_answer_as_importlib_metadata():
    fast = {(e.name, e.value, e.distribution, e.version) for e in scan_entry_points()}
    slow = {(e.name, e.value, e.distribution, e.version) for e in scan_entry_points_importlib()}
    assert fast == slow


def test_import_tvm_does_not_import_importlib_metadata_or_numpy():
    code = (
        "import sys, tvm, tvm.backend, tvm.target, tvm.plugin; "
        "print(sorted(m for m in ('numpy', 'importlib.metadata') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
