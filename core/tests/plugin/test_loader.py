"""Loading backends: idempotence, requirements, failures, rollback, compatibility, threads."""

from __future__ import annotations

import re
import threading
import warnings

import pytest

import tvm.backend
from tvm import _registry
from tvm.error import BackendError, BackendNotInstalledError, BackendWarning, RegistrationConflict
from tvm.plugin import get_plugin_manager
from tvm.target import KIND_REGISTRY, TAG_REGISTRY, Target
from tvm.tirx.compilation_pipeline import PIPELINE_MAP
from tvm.tirx.operator.tile_primitive import get_variants  # core's tile ops, before a snapshot

FULL = """
COUNTS = {"kinds": 0}

@hookimpl
def tvm_backend_info():
    return BackendInfo(name="{name}", api_range=">=2,<3")

@hookimpl
def tvm_target_kinds():
    from tvm.target import TargetKind
    COUNTS["kinds"] += 1
    return [TargetKind("{name}_kind", attrs={"width": (int, 4)})]

@hookimpl
def tvm_target_tags():
    return {"{name}/board": {"kind": "{name}_kind", "width": 8}}

@hookimpl
def tvm_register_ops():
    from tvm.ir.op import Op
    Op.register("tirx.{name}_ns.nop", category="device_intrin", namespace="{name}_ns")

@hookimpl
def tvm_tir_pipelines():
    return {"{name}_pipe": lambda **kw: ("{name}", kw)}
"""


def full(name: str) -> str:
    return FULL.replace("{name}", name).replace("{Name}", name.capitalize())


def test_load_registers_everything_and_is_idempotent(backends):
    backends.add("alpha", full("alpha"))
    package = tvm.backend.load("alpha")
    assert package.__name__ == "tvm_backend_alpha"
    assert tvm.backend.load("alpha") is package
    assert tvm.backend.is_loaded("alpha")
    plugin = backends.loader.backends["alpha"].plugin
    assert plugin.COUNTS["kinds"] == 1  # hooks ran once
    assert KIND_REGISTRY.owner_of("alpha_kind") == "alpha"
    assert Target("alpha/board").attrs["width"] == 8
    assert PIPELINE_MAP.owner_of("alpha_pipe") == "alpha"
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "alpha"]
    assert record.state == "loaded"
    assert record.target_kinds == ("alpha_kind",)
    assert record.n_tags == 1
    assert record.pipelines == ("alpha_pipe",) and record.n_ops == 1
    assert record.distribution == "tvm-backend-alpha" and record.version == "1.0"


NAMESPACE = """
@hookimpl
def tvm_script_namespaces():
    class {Name}Namespace:
        pass
    return {"{name}_ns": {Name}Namespace()}
"""


def test_script_namespaces_registered_and_rolled_back(backends):
    namespace = pytest.importorskip("tvm.script.namespace", reason="tvm.script is not importable")
    backends.add(
        "alpha", full("alpha") + NAMESPACE.replace("{name}", "alpha").replace("{Name}", "Alpha")
    )
    backends.add(
        "bad",
        NAMESPACE.replace("{name}", "bad").replace("{Name}", "Bad")
        + "\n@hookimpl\ndef tvm_tir_pipelines():\n    raise RuntimeError('x')\n",
    )
    tvm.backend.load("alpha")
    assert namespace.NAMESPACES.owner_of("alpha_ns") == "alpha"
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "alpha"]
    assert record.namespaces == ("alpha_ns",)
    with pytest.raises(BackendError):
        tvm.backend.load("bad")
    assert "bad_ns" not in namespace.NAMESPACES


def test_not_installed_raises_import_error_naming_the_distribution(backends):
    backends.add("alpha", full("alpha"))
    with pytest.raises(ImportError) as info:
        tvm.backend.load("nosuch")
    assert isinstance(info.value, BackendNotInstalledError)
    assert re.search(r"pip install --find-links \S+ tvm-backend-nosuch'", str(info.value))
    assert "(installed: alpha)" in str(info.value)
    with pytest.raises(BackendNotInstalledError, match=r"pip install --find-links \S+ tvm-backend-cuda"):
        tvm.backend.load("cuda")


def test_requirements_load_first(backends):
    order = "ORDER = []\n"
    backends.add(
        "base",
        full("base") + "\n@hookimpl\ndef tvm_register_dispatch():\n"
        "    import tvm_backend_base as b; b.ORDER.append('base')\n",
        files={"__init__.py": order},
    )
    backends.add(
        "top",
        """
        @hookimpl
        def tvm_backend_info():
            return BackendInfo(name="top", requires=["base"])

        @hookimpl
        def tvm_register_dispatch():
            import tvm_backend_base as b
            b.ORDER.append("top")
        """,
    )
    tvm.backend.load("top")
    import tvm_backend_base

    assert tvm_backend_base.ORDER == []  # dispatch variants register on first use
    _registry.run_deferred()
    assert tvm_backend_base.ORDER == ["base", "top"]
    assert tvm.backend.is_loaded("base")


def test_failed_requirement_fails_the_dependent(backends):
    backends.add("base", "raise RuntimeError('base is broken')\n")
    backends.add(
        "top",
        """
        @hookimpl
        def tvm_backend_info():
            return BackendInfo(name="top", requires=["base"])
        """,
    )
    with pytest.raises(BackendError, match="requires backend 'base'"):
        tvm.backend.load("top")
    assert backends.loader.backends["base"].state == "failed"


def test_requirement_cycle_is_reported(backends):
    for a, b in (("one", "two"), ("two", "one")):
        backends.add(
            a,
            f"""
            @hookimpl
            def tvm_backend_info():
                return BackendInfo(name="{a}", requires=["{b}"])
            """,
        )
    with pytest.raises(BackendError, match="cycle: one -> two -> one"):
        tvm.backend.load("one")


def test_import_failure_is_recorded_and_raised_again(backends):
    backends.add("broken", "raise RuntimeError('broken at import')\n")
    for _ in range(2):
        with pytest.raises(BackendError, match="broken at import") as info:
            tvm.backend.load("broken")
        assert "tvm-backend-broken 1.0" in str(info.value)
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "broken"]
    assert record.state == "failed"
    assert "RuntimeError: broken at import" in record.reason


def _assert_rolled_back(backends, name: str) -> None:
    assert f"{name}_kind" not in KIND_REGISTRY
    assert f"{name}/board" not in TAG_REGISTRY
    assert f"{name}_pipe" not in PIPELINE_MAP
    from tvm.ir.op import OP_REGISTRY

    assert f"tirx.{name}_ns.nop" not in OP_REGISTRY
    assert not hasattr(tvm.backend, name)
    plugin = backends.loader.backends[name].plugin
    assert not get_plugin_manager().is_registered(plugin)
    with pytest.raises(ModuleNotFoundError):
        __import__(f"tvm.backend.{name}")


def test_hook_failure_rolls_back_everything(backends):
    backends.add(
        "bad",
        full("bad")
        + """
@hookimpl
def tvm_register_ops():
    raise ValueError("ops exploded")
""",
    )
    with pytest.raises(BackendError, match="ValueError: ops exploded"):
        tvm.backend.load("bad")
    _assert_rolled_back(backends, "bad")


_DISPATCH_FAILS = """
@hookimpl
def tvm_register_dispatch():
    from tvm.tirx.operator.tile_primitive import register_dispatch

    @register_dispatch("copy", "late_kind", variant="first")
    def first(op_call, sctx):
        return None

    raise ValueError("dispatch exploded")
"""


def test_dispatch_variants_register_on_first_use_and_a_failure_undoes_the_backend(backends):
    # Loading does not run tvm_register_dispatch (its modules are a backend's heaviest part):
    # the first dispatch does, and a failure then undoes the backend as a failed load would.
    backends.add("late", full("late") + _DISPATCH_FAILS)
    tvm.backend.load("late")
    assert tvm.backend.is_loaded("late") and "late_kind" in KIND_REGISTRY
    with pytest.warns(RuntimeWarning, match="registering its dispatch variants raised "
                                            "ValueError: dispatch exploded"):
        variants = get_variants("copy", "late_kind")
    assert [c.variant for c in variants] == ["fallback"]  # its partial registration is undone
    assert not tvm.backend.is_loaded("late")
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "late"]
    assert record.state == "failed" and "dispatch exploded" in record.reason
    _assert_rolled_back(backends, "late")


def test_a_deferred_failure_is_an_error_in_strict_mode(backends, monkeypatch):
    backends.add("late", full("late") + _DISPATCH_FAILS)
    tvm.backend.load("late")
    monkeypatch.setenv("TVM_BACKENDS_STRICT", "1")
    with pytest.raises(BackendError, match="backend 'late' .*dispatch exploded"):
        _registry.run_deferred()
    assert not tvm.backend.is_loaded("late")


def test_dispatch_variants_of_a_working_backend_are_there_on_first_use(backends):
    backends.add("fine", full("fine") + """
@hookimpl
def tvm_register_dispatch():
    from tvm.tirx.operator.tile_primitive import register_dispatch

    @register_dispatch("copy", "fine_kind", variant="mine", priority=5)
    def mine(op_call, sctx):
        return None
""")
    tvm.backend.load("fine")
    assert [c.variant for c in get_variants("copy", "fine_kind")] == ["mine", "fallback"]
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "fine"]
    assert record.n_dispatch == 1


def test_autoload_warns_once_naming_the_distribution_and_continues(backends):
    backends.add("alpha", full("alpha"))
    backends.add("broken", "raise RuntimeError('broken at import')\n", dist="tvm-backend-broken")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tvm.backend._autoload()
        tvm.backend._autoload()  # runs once
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert "tvm-backend-broken 1.0" in messages[0] and "broken at import" in messages[0]
    assert "TVM_BACKENDS_STRICT=1" in messages[0]
    assert tvm.backend.is_loaded("alpha")


def test_backend_warning_points_at_the_users_line(backends):
    # The warning names the line that imported tvm (or triggered the load), not the loader.
    backends.add("broken", "raise RuntimeError('broken at import')\n", dist="tvm-backend-broken")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tvm._autoload()  # what `import tvm` runs, one frame deeper than tvm.backend._autoload
    assert [w.filename for w in caught] == [__file__]


def test_strict_mode_raises(backends, monkeypatch):
    backends.add("broken", "raise RuntimeError('broken at import')\n")
    monkeypatch.setenv("TVM_BACKENDS_STRICT", "1")
    with pytest.raises(BackendError, match="TVM_BACKENDS_STRICT=1.*\n.*tvm-backend-broken"):
        tvm.backend._autoload()


def test_incompatible_api_range(backends):
    backends.add(
        "old",
        """
        CALLED = []

        @hookimpl
        def tvm_backend_info():
            return BackendInfo(name="old", version="0.3", api_range=">=1,<2")

        @hookimpl
        def tvm_target_kinds():
            CALLED.append(1)
            return []
        """,
    )
    with pytest.raises(BackendError) as info:
        tvm.backend.load("old")
    message = str(info.value)
    assert "was not loaded (incompatible)" in message
    assert "tvm-backend-old 0.3 supports plugin API '>=1,<2'" in message
    assert "provides plugin API 2" in message
    backend = backends.loader.backends["old"]
    assert backend.state == "incompatible" and backend.plugin.CALLED == []
    assert not get_plugin_manager().is_registered(backend.plugin)


def test_info_name_must_match_entry_point(backends):
    backends.add(
        "alpha",
        """
        @hookimpl
        def tvm_backend_info():
            return BackendInfo(name="beta")
        """,
    )
    with pytest.raises(BackendError, match="entry point is named 'alpha' but .* names it 'beta'"):
        tvm.backend.load("alpha")


def test_unknown_hook_is_rejected(backends):
    backends.add(
        "typo",
        """
        @hookimpl
        def tvm_target_kind():
            return []
        """,
    )
    with pytest.raises(BackendError, match="tvm_target_kind, which no hook spec"):
        tvm.backend.load("typo")


def test_unmarked_hook_functions_count(backends):
    backends.add(
        "plain",
        """
        def tvm_target_kinds():
            from tvm.target import TargetKind
            return [TargetKind("plain_kind")]
        """,
        header=False,
    )
    tvm.backend.load("plain")
    assert KIND_REGISTRY.owner_of("plain_kind") == "plain"


def test_wrong_return_type_fails_cleanly(backends):
    backends.add(
        "wrong",
        """
        @hookimpl
        def tvm_target_tags():
            return ["not", "a", "dict"]
        """,
    )
    with pytest.raises(BackendError, match="tvm_target_tags returned list; it must return a dict"):
        tvm.backend.load("wrong")


def test_legacy_register_backend_contract(backends):
    backends.add(
        "legacy",
        """
        def register_backend():
            from tvm.target import TargetKind, register_target_kind
            register_target_kind(TargetKind("legacy_kind"))
        """,
        header=False,
    )
    package = tvm.backend.load("legacy")
    assert package.__name__ == "tvm_backend_legacy"
    assert KIND_REGISTRY.owner_of("legacy_kind") == "legacy"


def test_legacy_failure_rolls_back(backends):
    backends.add(
        "legacy",
        """
        def register_backend():
            from tvm.target import TargetKind, register_target_kind
            register_target_kind(TargetKind("legacy_kind"))
            raise RuntimeError("half done")
        """,
        header=False,
    )
    with pytest.raises(BackendError, match="half done"):
        tvm.backend.load("legacy")
    assert "legacy_kind" not in KIND_REGISTRY


def test_module_without_hooks_or_register_backend(backends):
    backends.add("empty", "X = 1\n", header=False)
    with pytest.raises(BackendError, match="defines no tvm_\\* hooks and no register_backend"):
        tvm.backend.load("empty")


def test_conflict_names_both_distributions(backends):
    kind = """
        @hookimpl
        def tvm_target_kinds():
            from tvm.target import TargetKind
            return [TargetKind("shared")]
        """
    backends.add("first", kind)
    backends.add("second", kind)
    tvm.backend.load("first")
    with pytest.raises(BackendError) as info:
        tvm.backend.load("second")
    message = str(info.value)
    assert isinstance(info.value.__cause__, RegistrationConflict)
    assert "target kind 'shared' is registered twice" in message
    assert "by tvm-backend-first and by tvm-backend-second" in message
    assert KIND_REGISTRY.owner_of("shared") == "first"


def test_declared_override_replaces_and_shows(backends):
    kind = """
        @hookimpl
        def tvm_target_kinds():
            from tvm.target import TargetKind
            return [TargetKind("shared", device_type="{dev}")]
        """
    backends.add("first", kind.format(dev="cpu"))
    backends.add(
        "second",
        """
        @hookimpl
        def tvm_backend_info():
            return BackendInfo(name="second", overrides=["target kind:shared"])
        """
        + kind.format(dev="gpu"),
    )
    tvm.backend.load("first")
    with pytest.warns(BackendWarning, match="^tvm: tvm-backend-second replaces the target kind "
                                            "'shared' of tvm-backend-first; every use of "
                                            "'shared' now gets tvm-backend-second's; "
                                            "TVM_BACKENDS_STRICT=1 makes this an error$"):
        tvm.backend.load("second")
    assert KIND_REGISTRY["shared"].device_type == "gpu"
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "second"]
    assert record.overrides == ("target kind 'shared' (from tvm-backend-first)",)
    assert (
        "second: overrides target kind 'shared' (from tvm-backend-first)"
        in tvm.backend.format_table(tvm.backend.list_backends())
    )


def test_sixteen_threads_register_once(backends):
    backends.add("alpha", full("alpha"))
    barrier = threading.Barrier(16)
    results, errors = [], []

    def worker() -> None:
        barrier.wait()
        try:
            results.append(tvm.backend.load("alpha"))
        except BaseException as err:  # collected and asserted below
            errors.append(err)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(results) == 16 and len({id(r) for r in results}) == 1
    assert backends.loader.backends["alpha"].plugin.COUNTS["kinds"] == 1
    assert len(get_plugin_manager().get_plugins()) == 1


def test_register_plugin_in_process(backends):
    import types

    plugin = types.ModuleType("inproc_plugin")
    exec(
        compile(
            "from tvm.plugin import hookimpl\n"
            "@hookimpl\n"
            "def tvm_target_kinds():\n"
            "    from tvm.target import TargetKind\n"
            "    return [TargetKind('inproc_kind')]\n"
            "@hookimpl\n"
            "def tvm_module_aliases():\n"
            "    return {}\n",
            "<inproc>",
            "exec",
        ),
        plugin.__dict__,
    )
    tvm.backend.register_plugin(plugin, "inproc")
    assert tvm.backend.is_loaded("inproc")
    assert KIND_REGISTRY.owner_of("inproc_kind") == "inproc"


def test_load_or_register_with_an_entry_point_loads_it(backends):
    backends.add("viaep", backends.seed_plugin("viaep"), header=False)
    import tvm_backend_viaep.plugin as plugin

    assert plugin.register_backend().__name__ == "tvm_backend_viaep"
    assert [r.distribution for r in tvm.backend.list_backends() if r.name == "viaep"] == [
        "tvm-backend-viaep"]


def test_broadcast_hooks_reach_loaded_backends(backends):
    build = """
        @hookimpl
        def tvm_default_pipeline(target):
            return "{name}-pipe" if target.kind.name == "{name}_kind" else None

        @hookimpl
        def tvm_target_kinds():
            from tvm.target import TargetKind
            return [TargetKind("{name}_kind")]
        """
    backends.add("one", build.format(name="one"))
    backends.add("two", build.format(name="two"))
    tvm.backend.load_all()
    hook = get_plugin_manager().hook
    assert hook.tvm_default_pipeline(target=Target("two_kind")) == "two-pipe"
    assert hook.tvm_default_pipeline(target=Target("one_kind")) == "one-pipe"


def test_core_modules_imported_during_a_load_stay_core(backends, tmp_path, monkeypatch):
    # A core module (tvm.*) first imported inside a backend's hook registers its entries as
    # core's, and they survive the backend's rollback.
    import sys

    import tvm

    extra = tmp_path / "tvm_extra"
    extra.mkdir()
    (extra / "probe_core_module.py").write_text(
        "from tvm.target import TargetKind, register_target_kind\n"
        "register_target_kind(TargetKind('probe_core_kind'))\n"
    )
    monkeypatch.setattr(tvm, "__path__", [*tvm.__path__, str(extra)])
    backends.add(
        "bad",
        """
        @hookimpl
        def tvm_register_ops():
            import tvm.probe_core_module
            raise RuntimeError("after import")
        """,
    )
    try:
        with pytest.raises(BackendError, match="after import"):
            tvm.backend.load("bad")
        assert KIND_REGISTRY.owner_of("probe_core_kind") == "core"
    finally:
        sys.modules.pop("tvm.probe_core_module", None)


def test_optional_unknown_hook_is_allowed(backends):
    backends.add(
        "future",
        """
        @hookimpl(optionalhook=True)
        def tvm_some_future_hook():
            return 1

        @hookimpl
        def tvm_target_kinds():
            from tvm.target import TargetKind
            return [TargetKind("future_kind")]
        """,
    )
    tvm.backend.load("future")
    assert KIND_REGISTRY.owner_of("future_kind") == "future"


def test_demo_rows_for_a_target_ask_only_backends_of_that_kind(backends, monkeypatch):
    # `python -m tvm demo --target c` must not make other backends probe their devices.
    from tvm import demo

    monkeypatch.setattr(demo, "ensure_builtin_backends", lambda: None)  # this loader has no c

    for name in ("probed", "other"):
        backends.add(name, f"""
            ASKED = []

            @hookimpl
            def tvm_target_kinds():
                from tvm.target import TargetKind
                return [TargetKind("{name}_kind")]

            @hookimpl
            def tvm_demo_cases():
                ASKED.append(True)
                return []
            """)
        tvm.backend.load(name)
    import tvm_backend_other.plugin as other
    import tvm_backend_probed.plugin as probed

    demo.collect_cases(["probed"])
    assert (probed.ASKED, other.ASKED) == ([True], [])
    demo.collect_cases()
    assert (probed.ASKED, other.ASKED) == ([True, True], [True])
