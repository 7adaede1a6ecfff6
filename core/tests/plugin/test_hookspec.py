"""The hook specs: naming, documentation, firstresult, API ranges, BackendInfo."""

from __future__ import annotations

import inspect

import pytest

import tvm.plugin
from tvm.plugin import PLUGIN_API_VERSION, BackendInfo, api_range_allows, hook_names
from tvm.plugin import hookspec as specs

EXPECTED = {
    "tvm_backend_info",
    "tvm_module_aliases",
    "tvm_target_kinds",
    "tvm_target_tags",
    "tvm_script_namespaces",
    "tvm_layout_names",
    "tvm_register_ops",
    "tvm_register_dispatch",
    "tvm_tir_pipelines",
    "tvm_builders",
    "tvm_default_pipeline",
    "tvm_device_probes",
    "tvm_device_memory",
    "tvm_demo_cases",
}
FIRSTRESULT = {
    "tvm_backend_info",
    "tvm_default_pipeline",
}


def test_every_expected_hook_is_specified_and_documented():
    assert set(hook_names()) == EXPECTED
    for name in hook_names():
        fn = getattr(specs, name)
        opts = fn.tvm_spec
        doc = inspect.getdoc(fn) or ""
        assert len(doc) > 80, name
        assert opts["firstresult"] == (name in FIRSTRESULT), name
        if name in FIRSTRESULT:
            assert "``firstresult``" in doc and "Not ``firstresult``" not in doc, name
        else:
            assert "``firstresult``" not in doc or "Not ``firstresult``" in doc, name


def test_signatures():
    sig = {n: list(inspect.signature(getattr(specs, n)).parameters) for n in EXPECTED}
    assert sig["tvm_default_pipeline"] == ["target"]
    assert sig["tvm_builders"] == []
    assert sig["tvm_device_probes"] == []
    assert sig["tvm_target_kinds"] == []


def test_public_names():
    assert callable(tvm.plugin.hookimpl)
    assert tvm.plugin.hookspec is specs  # the module, not the marker
    assert PLUGIN_API_VERSION == 2
    assert set(tvm.plugin.__all__) <= set(dir(tvm.plugin))


@pytest.mark.parametrize(
    ("spec", "ok"),
    [
        ("*", True),
        ("", True),
        (">=1,<2", True),
        (">=1", True),
        ("==1", True),
        ("<1", False),
        (">=2,<3", False),
        ("!=1", False),
        ("> 0, <= 1", True),
    ],
)
def test_api_range(spec, ok):
    assert api_range_allows(spec, 1) is ok


def test_malformed_range_and_names():
    with pytest.raises(ValueError, match="malformed"):
        BackendInfo(name="x", api_range="~=1.0")
    with pytest.raises(ValueError, match="backend name 'Bad-Name' is invalid"):
        BackendInfo(name="Bad-Name")
    info = BackendInfo(name="x", requires=["a"], overrides=["target kind:c"])
    assert info.requires == ("a",) and info.overrides == ("target kind:c",)
