"""scripts/seed_suite.py: how it reads pytest's JUnit XML (collection errors, parametrised and
class tests) and adds the two emulated devices' results into one table."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]

_XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="" name="tests.python.tirx.codegen.test_broken"><error message="x"/></testcase>
<testcase classname="" name="tests.python.tirx.test_needs_triton"><skipped message="t"/></testcase>
<testcase classname="tests.python.tirx.test_a" name="test_ok[1-float16]"/>
<testcase classname="tests.python.tirx.test_a" name="test_bad"><failure message="y"/></testcase>
<testcase classname="tests.python.tirx.test_a.TestGroup" name="test_in_class"/>
<testcase classname="tests.python.tirx.operator.tile_primitive.trn.test_b_trn" name="test_t">
<failure message="z"/></testcase>
<testcase classname="tests.python.tirx.test_a" name="test_sm100"><skipped message="cc"/>
</testcase>
</testsuite></testsuites>
"""


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("seed_suite", ROOT / "scripts" / "seed_suite.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_junit_results_become_node_ids(tmp_path: Path) -> None:
    xml = tmp_path / "r.xml"
    xml.write_text(_XML)
    got = _script()._results(xml)
    assert got == {
        "tests/python/tirx/codegen/test_broken.py::": "error",
        "tests/python/tirx/test_needs_triton.py::": "skipped",
        "tests/python/tirx/test_a.py::test_ok[1-float16]": "passed",
        "tests/python/tirx/test_a.py::test_bad": "failed",
        "tests/python/tirx/test_a.py::TestGroup::test_in_class": "passed",
        "tests/python/tirx/operator/tile_primitive/trn/test_b_trn.py::test_t": "failed",
        "tests/python/tirx/test_a.py::test_sm100": "skipped",
    }


def test_the_table_counts_each_file_and_the_scope(tmp_path: Path) -> None:
    mod = _script()
    xml = tmp_path / "r.xml"
    xml.write_text(_XML)
    merged = mod._results(xml)
    merged["tests/python/tirx/test_a.py::test_sm100"] = "passed (sm_100a)"
    text = mod._table(merged, "at abc123")
    assert "| test_a.py | 3 | 1 | 1 | 0 | 0 |" in text
    assert "| codegen/test_broken.py | 0 | 0 | 0 | 0 | 1 |" in text
    assert "| test_needs_triton.py | 0 | 0 | 0 | 1 | 0 |" in text
    assert text.startswith("Seed suite `tests/python/tirx` at abc123, under the CUDA emulator "
                           "(sm_90a), failures retried on the emulated sm_100a")
    assert ("- all files: 3 passed (1 of them only on sm_100a), 2 failed, 1 errors, 1 skipped: "
            "50.0% of those run; 33.3% counting sm_100a-only passes as not passed") in text
    assert ("- in scope: 3 passed (1 of them only on sm_100a), 1 failed, 1 errors, 1 skipped: "
            "60.0% of those run; 40.0% counting") in text
    assert "not in scope: `operator/tile_primitive/trn/`" in text


def test_a_gpu_run_names_the_device(tmp_path: Path) -> None:
    mod = _script()
    text = mod._table({"tests/python/tirx/test_a.py::test_ok": "passed"}, "at abc", "NVIDIA H200")
    assert text.startswith("Seed suite `tests/python/tirx` at abc, on the GPU (NVIDIA H200), ")


def test_the_suite_is_read_from_a_folder_or_refused(tmp_path: Path) -> None:
    mod = _script()
    src = tmp_path / "src"
    (src / "tests/python/tirx").mkdir(parents=True)
    (src / "tests/python/tirx/test_x.py").write_text("def test_x():\n    pass\n")
    into = tmp_path / "into"
    into.mkdir()
    assert mod._copy_suite(src, "abc", into).endswith("(a copy)")
    assert (into / "tests/python/tirx/test_x.py").read_text().startswith("def test_x")
    empty = tmp_path / "empty"
    empty.mkdir()
    try:
        mod._copy_suite(empty, "abc", tmp_path / "into2")
    except SystemExit as err:
        assert "is neither a clone of Apache TVM holding abc" in str(err)
        assert "nor a folder holding tests/python/tirx" in str(err)
    else:
        raise AssertionError("an empty folder was taken for the suite")


def test_a_file_skipped_as_a_whole_is_retried_as_the_file() -> None:
    """A file skipped at import on the first device ("file.py::", not a node id pytest takes)
    gives way to its tests' results on the retry; before, the whole retry was voided."""
    mod = _script()
    first = {"tests/python/tirx/test_a.py::test_ok": "passed",
             "tests/python/tirx/test_a.py::test_sm100": "failed",
             "tests/python/tirx/test_bench.py::": "skipped"}
    assert mod._retry(first) == ["tests/python/tirx/test_a.py::test_sm100",
                                 "tests/python/tirx/test_bench.py"]
    second = {"tests/python/tirx/test_a.py::test_sm100": "passed",
              "tests/python/tirx/test_bench.py::test_one": "passed",
              "tests/python/tirx/test_bench.py::test_two": "failed"}
    assert mod._merge(first, second) == {
        "tests/python/tirx/test_a.py::test_ok": "passed",
        "tests/python/tirx/test_a.py::test_sm100": "passed (sm_100a)",
        "tests/python/tirx/test_bench.py::test_one": "passed (sm_100a)",
        "tests/python/tirx/test_bench.py::test_two": "failed",
    }
    # a file skipped again on the retry keeps its one entry
    assert mod._merge(first, {"tests/python/tirx/test_bench.py::": "skipped"})[
        "tests/python/tirx/test_bench.py::"] == "skipped"
