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
    text = mod._table(merged, "abc123")
    assert "| test_a.py | 3 | 1 | 1 | 0 | 0 |" in text
    assert "| codegen/test_broken.py | 0 | 0 | 0 | 0 | 1 |" in text
    assert "| test_needs_triton.py | 0 | 0 | 0 | 1 | 0 |" in text
    assert "- all files: 3 passed, 2 failed, 1 errors, 1 skipped: 50.0% of those run" in text
    assert "- in scope: 3 passed, 1 failed, 1 errors, 1 skipped: 60.0% of those run" in text
    assert "not in scope: `operator/tile_primitive/trn/`" in text
