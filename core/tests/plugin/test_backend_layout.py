"""Every installed backend has the same file layout (tvm.testing.layout), the host one too."""

from __future__ import annotations

import sys
import textwrap

import pytest

import tvm
import tvm.host
from tvm.testing.layout import REQUIRED, check_backend_layout, layout_problems


def _loaded_packages() -> list[tuple[str, object]]:
    tvm.backend.load_all()
    out = [("c", tvm.host)]
    for record in tvm.backend.list_backends():
        if record.state == "loaded" and record.name != "c":
            out.append((record.name, sys.modules[tvm.backend._loader.discovered()[record.name]
                                                  .package.__name__]))
    return out


@pytest.mark.parametrize(("name", "package"), _loaded_packages(), ids=lambda x: str(x)[:20])
def test_every_installed_backend_has_the_layout(name: str, package: object) -> None:
    check_backend_layout(package)  # type: ignore[arg-type]


def test_layout_problems_name_what_is_wrong(tmp_path) -> None:
    pkg = tmp_path / "tvm_backend_bad"
    pkg.mkdir()
    for name in REQUIRED:
        if name not in ("compiler.py", "runtime.py"):
            (pkg / name).write_text("")
    (pkg / "dispatch").mkdir()
    (pkg / "plugin.py").write_text(textwrap.dedent("""
        def tvm_backend_info(): ...
        def register_backend(): ...
        def _helper(): ...
        def build_module(mod): ...
        class Builder: ...
    """))
    assert layout_problems(pkg) == [
        "tvm_backend_bad/compiler.py is missing",
        "tvm_backend_bad/runtime.py is missing",
        "tvm_backend_bad/dispatch/ must be a package (no __init__.py)",
        "plugin.py defines build_module(), which is not a hook: move it to the module it "
        "belongs to",
        "plugin.py defines class Builder: move it beside the code it serves",
    ]
    with pytest.raises(AssertionError, match="compiler.py is missing"):
        check_backend_layout(pkg)


def test_a_delegated_stage_may_be_absent(tmp_path) -> None:
    pkg = tmp_path / "tvm_backend_thin"
    pkg.mkdir()
    for name in ("plugin.py", "tags.py", "script.py", "op.py", "executable.py", "runtime.py"):
        (pkg / name).write_text("")
    assert layout_problems(pkg) == ["tvm_backend_thin/codegen.py is missing",
                                    "tvm_backend_thin/compiler.py is missing"]
    assert layout_problems(pkg, delegated=("codegen.py", "compiler.py")) == []
    assert layout_problems(pkg, delegated=("codegen.py",)) == [
        "tvm_backend_thin/compiler.py is missing"]


def test_adreno_delegates_its_stages_and_has_no_placeholder_files() -> None:
    adreno = pytest.importorskip("tvm_backend_adreno")
    from pathlib import Path

    tvm.backend.load("adreno")
    import tvm_backend_adreno.plugin as plugin

    assert set(plugin.SPEC.delegates) == {"op.py", "script.py", "codegen.py", "compiler.py",
                                          "executable.py", "runtime.py"}
    folder = Path(adreno.__file__).parent
    assert not [name for name in plugin.SPEC.delegates if (folder / name).exists()]
    check_backend_layout(adreno)  # the spec's delegates are read from the loaded package
    with pytest.raises(AssertionError, match="tvm_backend_adreno/codegen.py is missing"):
        check_backend_layout(adreno, delegated=())


def test_a_spec_delegates_only_stage_files_to_backends_it_requires() -> None:
    from tvm.plugin import BackendSpec

    with pytest.raises(ValueError, match=r"delegates\['codegen.py'\] names 'opencl', which is "
                                         r"not in requires \(\)"):
        BackendSpec(name="thin", api_range=">=2,<3", delegates={"codegen.py": "opencl"})
    with pytest.raises(ValueError, match=r"delegates\['tags.py'\]: only a stage file"):
        BackendSpec(name="thin", api_range=">=2,<3", requires=("opencl",),
                    delegates={"tags.py": "opencl"})
