"""tvm.backend.<name> / tvm.tirx.<name> aliases and lazy submodule imports."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

import tvm.backend
import tvm.tirx
from tvm.testing import skip_if_installed

SUBMODULES = {
    "sub.py": "VALUE = 42\nimport tvm_backend_alpha as _p\n_p.SUB_IMPORTS += 1\n",
    "deep/__init__.py": "",
    "deep/leaf.py": "LEAF = 'leaf'\n",
}


INFO = """
@hookimpl
def tvm_backend_info():
    return BackendInfo(name="alpha")
"""


def add_alpha(backends, aliases: str = ""):
    backends.add(
        "alpha",
        INFO + textwrap.dedent(aliases),
        files={"__init__.py": "SUB_IMPORTS = 0\n", **SUBMODULES},
    )


def test_before_load_alias_imports_fail(backends):
    add_alpha(backends)
    for name in (
        "tvm.tirx.alpha",
        "tvm.backend.alpha",
        "tvm.tirx.alpha.sub",
        "tvm.backend.alpha.deep.leaf",
    ):
        with pytest.raises(ModuleNotFoundError) as info:
            importlib.import_module(name)
        assert "tvm.backend.load('alpha')" in str(info.value)
    with pytest.raises(AttributeError, match="installed but not loaded; tvm.backend.load"):
        tvm.backend.alpha  # noqa: B018


def test_after_load_aliases_are_the_package(backends):
    add_alpha(backends)
    package = tvm.backend.load("alpha")
    import tvm_backend_alpha

    assert package is tvm_backend_alpha
    assert tvm.backend.alpha is tvm_backend_alpha
    assert tvm.tirx.alpha is tvm_backend_alpha
    assert sys.modules["tvm.tirx.alpha"] is tvm_backend_alpha


def test_submodules_import_lazily_and_once(backends):
    add_alpha(backends)
    tvm.backend.load("alpha")
    import tvm_backend_alpha

    assert "tvm_backend_alpha.sub" not in sys.modules  # nothing imported eagerly
    via_tirx = importlib.import_module("tvm.tirx.alpha.sub")
    via_backend = importlib.import_module("tvm.backend.alpha.sub")
    direct = importlib.import_module("tvm_backend_alpha.sub")

    assert via_tirx is via_backend is direct
    assert via_tirx.VALUE == 42
    assert tvm_backend_alpha.SUB_IMPORTS == 1
    leaf = importlib.import_module("tvm.tirx.alpha.deep.leaf")
    assert leaf is importlib.import_module("tvm_backend_alpha.deep.leaf")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tvm.tirx.alpha.missing")


def test_aliases_from_hook(backends):
    backends.package("alpha_impl", {"x.py": "X = 1\n"})
    add_alpha(
        backends,
        """
        @hookimpl
        def tvm_module_aliases():
            return {"alpha": "alpha_impl", "alpha2": "alpha_impl"}
        """,
    )
    try:
        package = tvm.backend.load("alpha")
        import alpha_impl

        assert package is alpha_impl
        assert tvm.tirx.alpha is alpha_impl and tvm.backend.alpha2 is alpha_impl
        assert importlib.import_module("tvm.tirx.alpha2.x").X == 1
        (record,) = [r for r in tvm.backend.list_backends() if r.name == "alpha"]
        assert record.aliases == ("alpha", "alpha2")
    finally:
        for name in [n for n in sys.modules if n.startswith("alpha_impl")]:
            del sys.modules[name]


def test_no_alias_when_hook_returns_empty(backends):
    add_alpha(
        backends,
        """
        @hookimpl
        def tvm_module_aliases():
            return {}
        """,
    )
    assert tvm.backend.load("alpha") is None
    assert "tvm.tirx.alpha" not in sys.modules


def test_alias_may_not_shadow_core(backends):
    backends.add("load", INFO.replace("alpha", "load"))  # tvm.backend.load is a function
    with pytest.raises(tvm.error.BackendError, match="would shadow tvm.backend.load"):
        tvm.backend.load("load")


def test_alias_withdrawn_when_registration_fails(backends):
    add_alpha(
        backends,
        """
        @hookimpl
        def tvm_register_ops():
            import tvm.tirx.alpha.sub  # aliases work while hooks run
            raise RuntimeError("no")
        """,
    )
    with pytest.raises(tvm.error.BackendError):
        tvm.backend.load("alpha")
    assert not hasattr(tvm.tirx, "alpha")
    assert not any(n == "tvm.tirx.alpha" or n.startswith("tvm.tirx.alpha.") for n in sys.modules)
    with pytest.raises(ModuleNotFoundError, match="could not be loaded \\(failed\\)"):
        importlib.import_module("tvm.tirx.alpha.sub")


@skip_if_installed("cuda", "trn")
def test_catalogue_hint_for_backends_not_installed(backends):
    with pytest.raises(ModuleNotFoundError, match=r"pip install --find-links \S+ tvm-backend-cuda"):
        importlib.import_module("tvm.tirx.cuda")
    with pytest.raises(AttributeError, match=r"pip install --find-links \S+ tvm-backend-trn"):
        tvm.backend.trn  # noqa: B018
    assert tvm.backend.install_hint_for_backend("nonexistent") is None


CORE_PATH = """
@hookimpl
def tvm_module_aliases():
    return {"alpha": "tvm_backend_alpha", "tvm.tirx.alpha_seed.sub": "tvm_backend_alpha.sub",
            "tvm.tirx.alpha_seed.deep.leaf": "tvm_backend_alpha.deep.leaf"}
"""


def test_a_backend_declares_paths_in_core_namespace(backends):
    """A ``tvm.``-prefixed key of the alias table is a full module path in core's namespace (the
    cuda backend's ``tvm.tirx.lang.<module>``): that path imports the module itself; the
    packages above it that core lacks are empty alias packages."""
    add_alpha(backends, CORE_PATH)
    with pytest.raises(ModuleNotFoundError):  # not loaded, not catalogued: no such module
        importlib.import_module("tvm.tirx.alpha_seed.sub")
    tvm.backend.load("alpha")
    import tvm_backend_alpha.sub

    assert importlib.import_module("tvm.tirx.alpha_seed.sub") is tvm_backend_alpha.sub
    package = importlib.import_module("tvm.tirx.alpha_seed")
    assert package.__path__ == [] and "sub" in package.__doc__
    leaf = importlib.import_module("tvm.tirx.alpha_seed.deep.leaf")
    assert leaf is importlib.import_module("tvm_backend_alpha.deep.leaf")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tvm.tirx.alpha_seed.other")
    assert not hasattr(tvm.backend, "alpha_seed")  # a path, not an alias under both parents


def test_paths_in_core_namespace_are_withdrawn_with_the_backend(backends):
    add_alpha(backends, CORE_PATH + """
        @hookimpl
        def tvm_register_ops():
            import tvm.tirx.alpha_seed.sub  # paths work while hooks run
            raise RuntimeError("no")
        """)
    with pytest.raises(tvm.error.BackendError):
        tvm.backend.load("alpha")
    assert not any(n.startswith("tvm.tirx.alpha_seed") for n in sys.modules)
    assert not hasattr(tvm.tirx, "alpha_seed")


def test_a_path_in_core_namespace_may_not_shadow_core(backends):
    add_alpha(backends, """
        @hookimpl
        def tvm_module_aliases():
            return {"alpha": "tvm_backend_alpha", "tvm.tirx.layout": "tvm_backend_alpha.sub"}
        """)
    with pytest.raises(tvm.error.BackendError, match="would shadow the module tvm.tirx.layout"):
        tvm.backend.load("alpha")


@skip_if_installed("cuda")
def test_catalogue_hint_for_a_core_path_without_its_backend(backends):
    with pytest.raises(ModuleNotFoundError, match=r"no installed backend provides module path "
                                                  r"'tvm.tirx.lang'; install it with '.*"
                                                  r"pip install --find-links \S+ tvm-backend-cuda"):
        importlib.import_module("tvm.tirx.lang.pipeline")
