"""``register_backend()`` of every backend, before and after ``import tvm``, in fresh processes.

The seed's contract is ``from tvm_backend_x.plugin import register_backend; register_backend()``
as a script's first lines. The plugin module imports tvm, whose autoload then meets the same
plugin module half imported; the loader must wait for that import to finish instead of failing
the backend. Two ways to have a backend:

- installed (its ``tvm.backends`` entry point): every installed distribution of ours is tried;
- a source checkout on ``PYTHONPATH`` (no entry point, no site-packages): every backend folder
  of this repository is tried, where the tests run from a checkout.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from tvm.backend import _discovery

ROOT = pathlib.Path(__file__).resolve().parents[3]
# backend name -> (its plugin module, the backends it requires), for all 11 of this repository
PLUGINS = {
    "c": ("tvm.host.plugin", ()),
    "cuda": ("tvm_backend_cuda.plugin", ()),
    "trn": ("tvm_backend_trn.plugin", ()),
    "metal": ("tvm_backend_metal.plugin", ()),
    "opencl": ("tvm_backend_opencl.plugin", ()),
    "rocm": ("tvm_backend_rocm.plugin", ()),
    "hexagon": ("tvm_backend_hexagon.plugin", ()),
    "adreno": ("tvm_backend_adreno.plugin", ("opencl", "vulkan")),
    "vulkan": ("tvm_backend_vulkan.plugin", ()),
    "webgpu": ("tvm_backend_webgpu.plugin", ()),
    "example": ("tvm_backend_example.plugin", ()),
}
ORDERS = ["before-import-tvm", "after-import-tvm", "package-before-import-tvm"]


def _script(name: str, order: str) -> str:
    module = PLUGINS[name][0]
    package = module.rpartition(".")[0]
    if order == "before-import-tvm":
        head = f"from {module} import register_backend\nresult = register_backend()\nimport tvm\n"
    elif order == "after-import-tvm":
        head = f"import tvm\nfrom {module} import register_backend\nresult = register_backend()\n"
    else:  # the package's own register_backend (the seed's tvm.backend.<name> packages have it)
        head = (f"import {package} as pkg\nregister_backend = getattr(pkg, 'register_backend', "
                f"None) or __import__('{module}', fromlist=['x']).register_backend\n"
                "result = register_backend()\nimport tvm\n")
    return head + textwrap.dedent(f"""
        import tvm.backend
        assert tvm.backend.is_loaded({name!r}), tvm.backend.list_backends()
        again = register_backend()
        assert again is result or again is None or result is None, (again, result)
        state = {{b.name: b for b in tvm.backend.list_backends()}}[{name!r}]
        assert state.state == "loaded", state
        kinds = [k for k in tvm.target.list_target_kinds()]
        print("OK", {name!r}, len(kinds))
    """)


def _run(code: str, env: dict[str, str], args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args, "-W", "error::Warning", "-c", code], env=env,
                          capture_output=True, text=True, timeout=120)


def _installed() -> set[str]:
    return {ep.name for ep in _discovery.scan_entry_points()}


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TVM_")}
    env["TVM_BACKENDS_STRICT"] = "1"
    env["TVM_CACHE"] = "0"
    return env


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_register_backend_of_an_installed_backend(name: str, order: str) -> None:
    if name not in _installed():
        pytest.skip(f"backend {name!r} is not installed here")
    env = _base_env()
    env.pop("PYTHONPATH", None)  # the installed distributions only
    proc = _run(_script(name, order), env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(f"OK {name} ")
    assert "Warning" not in proc.stderr


def _source_dirs() -> dict[str, pathlib.Path]:
    out = {"c": ROOT / "core" / "src"}
    for name, (module, _) in PLUGINS.items():
        package = module.partition(".")[0]
        for folder in (ROOT, ROOT / "plugins"):
            src = folder / package.replace("_", "-") / "src"
            if (src / package).is_dir():
                out[name] = src
    return out


@pytest.fixture(scope="module")
def bare_site(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A folder with only pluggy (tvm's one import-time dependency): a sys.path without
    site-packages, so no distribution's entry points are visible."""
    import pluggy

    site = tmp_path_factory.mktemp("bare-site")
    (site / "pluggy").symlink_to(pathlib.Path(pluggy.__file__).parent)
    return site


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_register_backend_from_a_source_checkout(name: str, order: str,
                                                 bare_site: pathlib.Path) -> None:
    dirs = _source_dirs()
    if "c" not in dirs or not (dirs["c"] / "tvm").is_dir() or name not in dirs:
        pytest.skip("not run from a source checkout of this repository")
    paths = [dirs["c"], dirs[name], *(dirs[d] for d in PLUGINS[name][1]), bare_site]
    env = _base_env()
    env["PYTHONPATH"] = os.pathsep.join(map(str, paths))
    # -S: no site-packages, so only the checkout's folders are importable (no entry points)
    code = "import sys; assert not any('site-packages' in p for p in sys.path)\n"
    proc = _run(code + _script(name, order), env, ("-S",))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(f"OK {name} ")
