"""Safe plugin registration (issue 26, item 4): registrations from a plugin's own threads and
from its module's import are attributed to it (rolled back with it) or refused after its load;
registries can be read while another thread registers; replacing another backend's builder,
kind or tag warns (an error under TVM_BACKENDS_STRICT=1); load timings and the slow-backend
warning."""

from __future__ import annotations

import sys
import textwrap
import threading
import time

import pytest

import tvm.backend
from tvm.__main__ import main
from tvm.backend import _loader
from tvm.backend.contract import BUILDERS
from tvm.error import BackendWarning, RegistrationConflict
from tvm.target import KIND_REGISTRY, TAG_REGISTRY, list_tags

THREADED = """
import threading
from tvm.target import register_tag

def _worker(name):
    register_tag(name, {"kind": "c"})

@hookimpl
def tvm_target_tags():
    t = threading.Thread(target=_worker, args=("threaded/one",))
    t.start()
    t.join()
    return {}
"""

FAILING_HOOK = """
@hookimpl
def tvm_register_ops():
    raise RuntimeError("broken on purpose")
"""


def test_a_thread_of_the_plugin_registers_as_the_plugin(backends) -> None:
    backends.add("threaded", THREADED)
    tvm.backend.load("threaded")
    # Before: recorded as tvm-core's
    assert TAG_REGISTRY.owner_of("threaded/one") == "threaded"
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "threaded"]
    assert record.n_tags == 1


def test_a_thread_registration_is_rolled_back_with_a_failed_load(backends) -> None:
    backends.add("threaded", THREADED + FAILING_HOOK)
    with pytest.raises(tvm.error.BackendError, match="broken on purpose"):
        tvm.backend.load("threaded")
    # Before: it escaped the rollback and stayed, owned by core
    assert "threaded/one" not in TAG_REGISTRY


def test_a_registration_at_plugin_import_is_rolled_back_with_a_failed_load(backends) -> None:
    backends.add("importer", textwrap.dedent("""
        from tvm.target import register_tag
        register_tag("importer/at-import", {"kind": "c"})
        """) + FAILING_HOOK)
    with pytest.raises(tvm.error.BackendError, match="broken on purpose"):
        tvm.backend.load("importer")
    assert "importer/at-import" not in TAG_REGISTRY


def test_a_registration_at_plugin_import_belongs_to_the_plugin(backends) -> None:
    backends.add("importer", """
        from tvm.target import register_tag
        register_tag("importer/at-import", {"kind": "c"})

        @hookimpl
        def tvm_target_tags():
            return {}
        """)
    tvm.backend.load("importer")
    assert TAG_REGISTRY.owner_of("importer/at-import") == "importer"


LATE = """
import threading
from tvm.target import register_tag

GO = threading.Event()
ERRORS = []

def _late():
    GO.wait(10)
    try:
        register_tag("late/one", {"kind": "c"})
    except Exception as err:
        ERRORS.append(err)

THREAD = threading.Thread(target=_late, name="late-registrar")

@hookimpl
def tvm_target_tags():
    THREAD.start()
    return {}
"""


def test_a_thread_registering_after_the_load_is_refused_naming_the_plugin(backends) -> None:
    backends.add("late", LATE)
    tvm.backend.load("late")
    plugin = backends.loader.backends["late"].plugin
    plugin.GO.set()
    plugin.THREAD.join(10)
    (err,) = plugin.ERRORS
    assert isinstance(err, RegistrationConflict)
    assert str(err) == (
        "target tag 'late/one': backend 'late' (tvm-backend-late) registered it from thread "
        "'late-registrar' after its load had finished; a backend registers in its tvm_* hooks "
        "or while its plugin module is imported, so that a failed load can be undone whole")
    assert "late/one" not in TAG_REGISTRY


def test_user_code_registering_after_loads_is_not_attributed(backends) -> None:
    backends.add("threaded", THREADED)
    tvm.backend.load("threaded")
    tvm.target.register_tag("mine/board", {"kind": "c"})
    assert TAG_REGISTRY.owner_of("mine/board") == "core"


def test_registries_can_be_read_while_another_thread_registers() -> None:
    # Before: list_tags() and list_backends() raised "dictionary changed size during iteration"
    stop = threading.Event()
    names = [f"race/tag-{i}" for i in range(3000)]

    def register() -> None:
        for name in names:
            if stop.is_set():
                return
            tvm.target.register_tag(name, {"kind": "c", "opt_level": 3})
            time.sleep(0)  # let the reader run between registrations

    writer = threading.Thread(target=register)
    errors: list[BaseException] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    writer.start()
    try:
        while writer.is_alive():
            try:
                list_tags()
                tvm.backend.list_backends()
                TAG_REGISTRY.keys_owned_by("core")
            except RuntimeError as err:
                errors.append(err)
                break
    finally:
        stop.set()
        writer.join()
        sys.setswitchinterval(interval)
        for name in names:
            TAG_REGISTRY.unregister(name)
    assert errors == []


# -- replacing another backend's entries --------------------------------------------------------

OVERRIDE_BUILDER = """
from tvm.backend.contract import Builder

class Evil(Builder):
    kind = "c"

@hookimpl
def tvm_builders():
    from tvm.backend.contract import register_builder
    register_builder("c", Evil(), override=True)
    return {}
"""


def test_replacing_the_host_builder_warns_naming_both_distributions(backends) -> None:
    original = BUILDERS.get("c")
    backends.add("evil", OVERRIDE_BUILDER)
    with pytest.warns(BackendWarning, match=r"^tvm: tvm-backend-evil replaces the builder 'c' of "
                                            r"tvm-core; every use of 'c' now gets "
                                            r"tvm-backend-evil's; TVM_BACKENDS_STRICT=1 makes this "
                                            r"an error$"):
        tvm.backend.load("evil")
    assert type(BUILDERS.get("c")).__name__ == "Evil"
    assert original is not None


def test_replacing_the_host_builder_is_refused_when_strict(backends, monkeypatch) -> None:
    original = BUILDERS.get("c")
    monkeypatch.setenv("TVM_BACKENDS_STRICT", "1")
    backends.add("evil", OVERRIDE_BUILDER)
    with pytest.raises(tvm.error.BackendError, match=r"tvm-backend-evil replaces the builder 'c' "
                                                     r"of tvm-core; .* \(refused: "
                                                     r"TVM_BACKENDS_STRICT=1\)"):
        tvm.backend.load("evil")
    assert BUILDERS.get("c") is original


def test_replacing_another_backends_tag_and_kind_warns(backends) -> None:
    backends.add("first", """
        @hookimpl
        def tvm_target_kinds():
            from tvm.target import TargetKind
            return [TargetKind("firstkind")]

        @hookimpl
        def tvm_target_tags():
            return {"first/board": {"kind": "firstkind"}}
        """)
    backends.add("second", """
        @hookimpl
        def tvm_target_kinds():
            from tvm.target import TargetKind, register_target_kind
            register_target_kind(TargetKind("firstkind", device_type="gpu"), override=True)
            return []

        @hookimpl
        def tvm_target_tags():
            from tvm.target import register_tag
            register_tag("first/board", {"kind": "firstkind", "x": 1}, override=True)
            return {}
        """)
    tvm.backend.load("first")
    with pytest.warns(BackendWarning) as caught:
        tvm.backend.load("second")
    texts = sorted(str(w.message) for w in caught)
    assert texts[0].startswith("tvm: tvm-backend-second replaces the target kind 'firstkind' of "
                               "tvm-backend-first")
    assert texts[1].startswith("tvm: tvm-backend-second replaces the target tag 'first/board' "
                               "of tvm-backend-first")
    assert KIND_REGISTRY.owner_of("firstkind") == "second"


# -- timings --------------------------------------------------------------------------------------


def test_timings_are_recorded_and_shown(backends, capsys) -> None:
    backends.add("sleepy", """
        import time
        time.sleep(0.05)

        @hookimpl
        def tvm_target_tags():
            time.sleep(0.03)
            return {}
        """)
    tvm.backend.load("sleepy")
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "sleepy"]
    assert record.import_ms >= 50 and record.register_ms >= 30
    assert main(["backends", "--timings"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-6:] == ["import", "ms", "register", "ms", "dispatch", "ms"]
    (row,) = [line for line in lines if line.startswith("sleepy ")]
    assert float(row.split()[-3]) >= 50 and float(row.split()[-2]) >= 30
    assert main(["backends"]) == 0
    assert "import ms" not in capsys.readouterr().out


def test_a_slow_backend_is_named_in_a_warning(backends, monkeypatch) -> None:
    monkeypatch.setattr(_loader, "SLOW_BACKEND_S", 0.05)  # one second in real use
    backends.add("sleepy", """
        import time
        time.sleep(0.08)

        @hookimpl
        def tvm_target_tags():
            return {}
        """)
    with pytest.warns(BackendWarning, match=r"^tvm: backend 'sleepy' \(tvm-backend-sleepy 1.0\) "
                                            r"took 0.\d s to load \(import 0.\d s, registration "
                                            r"0.0 s\), which `import tvm` waits for; `python -m "
                                            r"tvm backends --timings` shows every backend's, and "
                                            r"TVM_BACKENDS=-sleepy skips it$"):
        tvm.backend.load("sleepy")
