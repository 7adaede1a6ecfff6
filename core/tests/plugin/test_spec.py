"""tvm.plugin.BackendSpec: a backend's hooks made from what it declares."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

import tvm.backend
from tvm.error import BackendError
from tvm.plugin import BackendInfo, BackendSpec, get_plugin_manager, hook_names, resolve_ref
from tvm.target import KIND_REGISTRY, TAG_REGISTRY, Target
from tvm.tirx.compilation_pipeline import PIPELINE_MAP, get_tir_pipeline

SPEC_PLUGIN = """
import sys
from tvm.plugin import BackendSpec
from tvm.target import TargetKind
import tvm.backend

CALLS = []

def register_ops():
    CALLS.append("ops")

SPEC = BackendSpec(
    name="{name}",
    api_range=">=2,<3",
    version="3.1",
    description="a backend made from a spec",
    aliases={{"{name}": "tvm_backend_{name}"}},
    kinds=[TargetKind("{name}_kind", attrs={{"lanes": (int, 4)}})],
    tags={{"{name}/board": {{"kind": "{name}_kind", "lanes": 16}}}},
    register_ops=register_ops,
    pipelines={{"{name}_pipe": "tvm_backend_{name}.later:pipeline"}},
    default_pipeline={{"{name}_kind": "{name}_pipe"}},
    device_probes={{"{name}_dev": "tvm_backend_{name}.later:probe"}},
    demo_cases="tvm_backend_{name}.later:demo_cases",
)
globals().update(SPEC.hookimpls())
"""

LATER = """
LOADED = True

def pipeline(**kwargs):
    from tvm.transform import Pipeline

    return Pipeline("pipeline-" + "-".join(f"{k}{v}" for k, v in kwargs.items()))

def probe():
    return "no such device here"

def demo_cases():
    return []
"""


def test_hookimpls_only_for_what_is_declared():
    spec = BackendSpec(name="lean", api_range=">=2,<3", kinds=(), tags={"lean/x": {"kind": "c"}})
    hooks = spec.hookimpls()
    assert sorted(hooks) == ["tvm_backend_info", "tvm_target_tags"]
    assert set(hooks) <= set(hook_names())
    info = hooks["tvm_backend_info"]()
    assert isinstance(info, BackendInfo)
    assert (info.name, info.api_range) == ("lean", ">=2,<3")
    assert hooks["tvm_target_tags"]() == {"lean/x": {"kind": "c"}}
    # each is a fresh function with the hook's name, marked for pluggy
    for name, fn in hooks.items():
        assert fn.__name__ == name
        assert getattr(fn, "tvm_impl", None) is not None


def test_identity_is_checked_when_the_spec_is_made():
    with pytest.raises(ValueError, match="backend name 'Bad-Name' is invalid"):
        BackendSpec(name="Bad-Name", api_range="*")
    with pytest.raises(ValueError, match="plugin API range .>=two. is malformed"):
        BackendSpec(name="ok", api_range=">=two")


def _target(kind: str, *keys: str) -> SimpleNamespace:
    return SimpleNamespace(kind=SimpleNamespace(name=kind), keys=keys)


def test_default_pipeline_by_kind_answers_only_for_its_kinds():
    hook = BackendSpec(name="p", api_range="*", default_pipeline={"c": "mine"}).hookimpls()[
        "tvm_default_pipeline"]
    assert hook(_target("c")) == "mine"
    assert hook(_target("llvm")) is None
    rule = BackendSpec(name="q", api_range="*",
                       default_pipeline=lambda t: "x" if "gpu" in t.keys else None)
    hook = rule.hookimpls()["tvm_default_pipeline"]
    assert (hook(_target("c", "gpu")), hook(_target("c", "cpu"))) == ("x", None)


def test_script_namespaces_are_made_per_call():
    class Namespace:
        pass

    hook = BackendSpec(name="ns", api_range="*",
                       script_namespaces={"ns": Namespace}).hookimpls()["tvm_script_namespaces"]
    first, second = hook()["ns"], hook()["ns"]
    assert isinstance(first, Namespace) and first is not second


def test_references_are_imported_on_first_call_only(backends):
    backends.package("tvm_backend_lazyref", {"later.py": LATER})
    hooks = BackendSpec(name="lazyref", api_range="*",
                        demo_cases="tvm_backend_lazyref.later:demo_cases").hookimpls()
    assert "tvm_backend_lazyref.later" not in sys.modules
    assert hooks["tvm_demo_cases"]() == []
    assert sys.modules["tvm_backend_lazyref.later"].LOADED


def test_a_malformed_reference_fails_when_the_spec_is_made():
    with pytest.raises(ValueError, match=r"backend 'bad': demo_cases 'tvm_backend_bad\.demo' is "
                                         r"not a 'module:attr' reference"):
        BackendSpec(name="bad", api_range="*", demo_cases="tvm_backend_bad.demo")
    with pytest.raises(TypeError, match=r"backend 'bad': pipelines\['p'\] must be a function or "
                                        r"a 'module:attr' string, not int"):
        BackendSpec(name="bad", api_range="*", pipelines={"p": 3})


def test_a_reference_that_does_not_import_names_the_backend_and_field():
    hooks = BackendSpec(name="typo", api_range="*",
                        device_probes={"dev": "tvm_backend_typo_missing.runtime:probe"}
                        ).hookimpls()
    (probe,) = hooks["tvm_device_probes"]().values()
    with pytest.raises(BackendError, match=r"backend 'typo' names "
                       r"'tvm_backend_typo_missing.runtime:probe' for device_probes\['dev'\], "
                       r"which could not be imported: ModuleNotFoundError"):
        probe()


def test_resolve_ref():
    assert resolve_ref("tvm.plugin:BackendSpec") is BackendSpec
    assert resolve_ref(len) is len
    with pytest.raises(ValueError, match="not a 'module:attr' reference"):
        resolve_ref("tvm.plugin.BackendSpec")
    with pytest.raises(ModuleNotFoundError):
        resolve_ref("tvm_no_such_module:f")


def test_a_backend_made_from_a_spec_loads_like_any_other(backends):
    backends.add("specced", SPEC_PLUGIN.format(name="specced"), header=False,
                 files={"later.py": LATER})
    package = tvm.backend.load("specced")
    assert package.__name__ == "tvm_backend_specced"
    plugin = backends.loader.backends["specced"].plugin
    assert plugin.CALLS == ["ops"]
    assert KIND_REGISTRY.owner_of("specced_kind") == "specced"
    assert TAG_REGISTRY.owner_of("specced/board") == "specced"
    assert Target("specced/board").attrs["lanes"] == 16
    assert PIPELINE_MAP.owner_of("specced_pipe") == "specced"
    # the pipeline module was named, not imported, until the pipeline is built
    assert "tvm_backend_specced.later" not in sys.modules
    assert get_tir_pipeline("specced_pipe", opt=1).name == "pipeline-opt1"
    hook = get_plugin_manager().hook
    assert hook.tvm_default_pipeline(target=Target("specced/board")) == "specced_pipe"
    probes = [p for d in hook.tvm_device_probes() for k, p in d.items() if k == "specced_dev"]
    assert [p() for p in probes] == ["no such device here"]
    record = {r.name: r for r in tvm.backend.list_backends()}["specced"]
    assert (record.version, record.state, record.target_kinds) == ("3.1", "loaded",
                                                                   ("specced_kind",))
    assert record.pipelines == ("specced_pipe",) and record.aliases == ("specced",)
