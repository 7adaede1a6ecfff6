"""Install hints: which distribution provides a missing backend, kind, tag, namespace or
pipeline, and what to do about it. A leaf module: ``tvm.target``, ``tvm.tirx`` and
``tvm.script`` use it without importing ``tvm.backend``.

The catalogue lists the project's own backends as data, for hints and "not installed" rows only;
no logic branches on these names, and a third-party backend works the same without an entry.
What is installed and loaded comes from the plugin loader, which registers itself here when it
is imported (``set_state_source``); without it every backend reads as not installed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ._suggest import did_you_mean

__all__ = ["CATALOGUE", "BackendView", "CatalogueEntry", "find_provider",
           "install_command", "install_hint", "install_hint_for_backend", "missing_message",
           "not_installed_message", "set_state_source"]

LOADED, AVAILABLE, DISABLED = "loaded", "available", "disabled"


class BackendView(NamedTuple):
    """What the loader knows of one installed backend, for messages."""

    name: str
    state: str
    reason: str
    describe: str  # "tvm-backend-cuda 0.1.0"


@dataclass(frozen=True)
class CatalogueEntry:
    name: str
    distribution: str
    namespaces: tuple[str, ...] = ()
    target_kinds: tuple[str, ...] = ()
    tag_prefixes: tuple[str, ...] = ()
    pipelines: tuple[str, ...] = ()
    description: str = ""
    #: module paths in core's namespace the backend declares (with what is below them)
    module_paths: tuple[str, ...] = ()


CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry(
        "cuda",
        "tvm-backend-cuda",
        ("cuda", "ptx", "nvshmem"),
        ("cuda",),
        ("nvidia/",),
        (),
        "NVIDIA GPUs: CUDA C++ compiled with NVRTC",
        ("tvm.tirx.lang",),  # the seed's home of the CUDA kernel helpers
    ),
    CatalogueEntry(
        "trn",
        "tvm-backend-trn",
        ("nki",),
        ("trn",),
        ("aws/trn",),
        ("trn",),
        "AWS Trainium: NKI kernels, with a simulator",
    ),
    CatalogueEntry(
        "metal",
        "tvm-backend-metal",
        ("metal",),
        ("metal",),
        ("apple/",),
        (),
        "Apple GPUs: Metal Shading Language",
    ),
    CatalogueEntry(
        "opencl",
        "tvm-backend-opencl",
        ("opencl",),
        ("opencl",),
        (),
        (),
        "OpenCL devices: OpenCL C run through pyopencl (CPUs through PoCL)",
    ),
    CatalogueEntry(
        "rocm",
        "tvm-backend-rocm",
        (),
        ("rocm",),
        ("amd/",),
        (),
        "AMD GPUs: HIP C++ compiled with hipcc",
    ),
    CatalogueEntry(
        "hexagon",
        "tvm-backend-hexagon",
        (),
        ("hexagon",),
        ("qcom/hexagon",),
        (),
        "Qualcomm Hexagon DSPs: C compiled for the DSP",
    ),
    CatalogueEntry(
        "adreno",
        "tvm-backend-adreno",
        (),
        (),
        ("qcom/adreno",),
        ("adreno",),
        "Qualcomm Adreno GPUs: tags and the adreno pipeline over OpenCL and Vulkan",
    ),
    CatalogueEntry(
        "vulkan",
        "tvm-backend-vulkan",
        (),
        ("vulkan",),
        (),
        (),
        "Vulkan compute: GLSL compiled to SPIR-V, run through the vulkan binding",
    ),
    CatalogueEntry(
        "webgpu",
        "tvm-backend-webgpu",
        (),
        ("webgpu",),
        (),
        (),
        "WebGPU: WGSL compute shaders, run through wgpu-py",
    ),
)


def find_provider(what: str, name: str) -> CatalogueEntry | None:
    """The catalogued backend providing ``what`` ``name`` (a target kind, tag, namespace, ...)."""
    for entry in CATALOGUE:
        if what == "target kind" and name in entry.target_kinds:
            return entry
        if what == "script namespace" and name in entry.namespaces:
            return entry
        if what == "target tag" and any(name.startswith(p) for p in entry.tag_prefixes):
            return entry
        if what == "tir pipeline" and name in entry.pipelines:
            return entry
        if what == "backend" and name == entry.name:
            return entry
        if what == "module path" and any(name == p or name.startswith(p + ".")
                                         for p in entry.module_paths):
            return entry
    return None


def install_command(requirement: str, *, upgrade: bool = False) -> str:
    """The command that installs ``requirement`` (``tvm-backend-cuda``,
    ``tvm-backend-metal[runtime]``), one of this project's distributions, as it works when
    printed. They are not on a package index, so pip is pointed at the wheels that
    ``scripts/build_wheels.sh`` builds into a checkout's ``dist/``. From a checkout (tvm
    imported from its ``core/src``) the paths are absolute, and the build step is left out when
    ``dist/`` holds the wheel already; else the paths are relative to a checkout's root."""
    pip = f"{_pip()} install {'-U ' if upgrade else ''}--find-links"
    quoted = f"'{requirement}'" if "[" in requirement else requirement
    root = _checkout()
    if root is None:
        return f"bash scripts/build_wheels.sh && {pip} dist {quoted}"
    dist = root / "dist"
    wheel = requirement.split("[", 1)[0].replace("-", "_")
    if any(dist.glob(f"{wheel}-*.whl")):
        return f"{pip} {dist} {quoted}"
    return f"bash {root / 'scripts' / 'build_wheels.sh'} && {pip} {dist} {quoted}"


def install_hint(requirement: str, *, upgrade: bool = False) -> str:
    """``install it with '<install_command>'``, saying where to run it when tvm is not imported
    from a checkout."""
    text = f"install it with '{install_command(requirement, upgrade=upgrade)}'"
    if _checkout() is None:
        text += " in a checkout of tvm (its distributions are not on a package index)"
    return text


def _pip() -> str:
    """``pip`` when the ``pip`` on PATH is this interpreter's, else ``<python> -m pip``."""
    import shutil  # noqa: PLC0415 - needed only when a hint is printed; shutil is not on the import tvm path

    found = shutil.which("pip")
    if found and Path(found).resolve().parent == Path(sys.executable).resolve().parent:
        return "pip"
    return f"{sys.executable} -m pip"


def _checkout() -> Path | None:
    """The root of the source checkout tvm is imported from (``<root>/core/src/tvm``), or None
    for an installed wheel."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "scripts" / "build_wheels.sh").is_file() else None


_state: Callable[[str], BackendView | None] = lambda name: None  # noqa: E731
_installed: Callable[[], list[str]] = list


def set_state_source(state: Callable[[str], BackendView | None],
                     installed: Callable[[], list[str]]) -> None:
    """Called by the plugin loader: how to read a backend's state and the installed names."""
    global _state, _installed
    _state, _installed = state, installed


def _installed_names() -> str:
    return ", ".join(_installed()) or "none"


def not_installed_message(name: str) -> str:
    """``backend 'x' is not installed; install it with '...' (installed: ...)`` (see
    :func:`install_hint`), or
    ``...; did you mean 'cuda'?`` for a name close to an installed or catalogued backend."""
    entry = find_provider("backend", name)
    hint = "" if entry else did_you_mean(name, [*_installed(), *(e.name for e in CATALOGUE)])
    if hint:
        return f"backend {name!r} is not installed; {hint} (installed: {_installed_names()})"
    dist = entry.distribution if entry else f"tvm-backend-{name.replace('_', '-')}"
    return (
        f"backend {name!r} is not installed; {install_hint(dist)} "
        f"(installed: {_installed_names()})"
    )


def missing_message(what: str, name: str) -> str | None:
    """Why ``what`` ``name`` is unavailable and which backend would provide it, or ``None``.

    ``what`` is "target kind", "target tag", "script namespace", "tir pipeline", "module path"
    or "backend"; the provider comes from the catalogue of the project's own backends.

    ``"no installed backend provides target kind 'cuda'; install it with 'pip install
    --find-links /src/tvm/dist tvm-backend-cuda' (installed: c)"``
    """
    if what == "backend":
        return install_hint_for_backend(name)
    entry = find_provider(what, name)
    if entry is None:
        return None
    backend = _state(entry.name)
    if backend is None:
        return (
            f"no installed backend provides {what} {name!r}; "
            f"{install_hint(entry.distribution)} (installed: {_installed_names()})"
        )
    if backend.state == LOADED:
        return None  # loaded but without it: an older backend; the caller's generic message fits
    if backend.state in (DISABLED, AVAILABLE):
        return (
            f"{what} {name!r} is provided by backend {entry.name!r} ({entry.distribution}), "
            f"which is installed but not loaded ({backend.reason or 'not loaded yet'}); "
            f"call tvm.backend.load({entry.name!r})"
        )
    return (
        f"{what} {name!r} is provided by backend {entry.name!r} ({backend.describe}), which "
        f"is {backend.state}: {backend.reason}"
    )


def install_hint_for_backend(alias: str) -> str | None:
    """Why backend ``alias`` is not available and how to get it, or ``None`` if it is loaded or
    unknown (used by ``tvm.tirx.<name>`` / ``tvm.backend.<name>`` attribute errors)."""
    backend = _state(alias)
    if backend is not None:
        if backend.state == LOADED:
            return None
        if backend.state in (AVAILABLE, DISABLED):
            why = f" ({backend.reason})" if backend.reason else ""
            return (
                f"backend {alias!r} ({backend.describe}) is installed but not loaded{why}; "
                f"tvm.backend.load({alias!r}) loads it"
            )
        return (
            f"backend {alias!r} ({backend.describe}) could not be loaded "
            f"({backend.state}): {backend.reason}"
        )
    if find_provider("backend", alias) is not None:
        return not_installed_message(alias)
    return None
