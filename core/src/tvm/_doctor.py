"""``python -m tvm doctor``: what a bug report needs, in one screen.

Python and platform, tvm-core's version and location, the C compilers found (and whether the
host compiler has OpenMP and ``_Float16``), the environment variables tvm reads, the compile
cache (location, size, entries per backend), and every installed backend with its state and
the devices it can run on here (its demo rows and its ``tvm_device_probes``).
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from typing import Any

from . import backend
from ._version import __version__
from .backend import contract, ensure_builtin_backends
from .error import CompileError
from .host.compiler import get_toolchain
from .plugin import get_plugin_manager
from .runtime import cache
from .runtime.tool import PROBE_TIMEOUT_S, run_tool
from .target import Target

__all__ = ["ENV_VARS", "collect", "format_report"]

#: the environment variables tvm reads, each with what it does
ENV_VARS = {
    "TVM_BACKENDS": "which backends load (unset: all; 'cuda,trn': only these; '-metal': all but)",
    "TVM_BACKENDS_STRICT": "1: a backend that fails to load is an error, not a warning",
    "TVM_CACHE": "0: compile without the cache",
    "TVM_CACHE_DIR": "where the compile cache lives",
    "XDG_CACHE_HOME": "the cache is $XDG_CACHE_HOME/tvm when TVM_CACHE_DIR is unset",
    "TVM_DUMP_DIR": "write the module after every pass (and each build stage) here",
    "TVM_LOG_LEVEL": "DEBUG, INFO or WARNING: tvm's log records on stderr (DEBUG also keeps "
                     "full tracebacks of located errors)",
    "CC": "the host target's C compiler (default: cc)",
    "TVM_BOUNDS_CHECK": "1: check every buffer access (and integer division) of the kernels "
                        "at run time (the bounds_check compile option)",
    "TVM_AUTOTUNE": "0: tvm.autotune returns each kernel's default configuration (no "
                    "measuring, no tuning records read)",
    "TVM_CUDA_EMULATE": "1: every 'cuda' build runs on the CPU emulator (the emulate compile "
                        "option), taking CPU arrays",
    "TVM_CUDA_EMULATE_RACECHECK": "0: the CUDA emulator skips its shared-memory race check",
    "TVM_CUDA_EMULATE_ARCH": "the CUDA emulator's device arch (default: sm_90a); target 'cuda' "
                             "builds for it under the emulator",
    "CXX": "the C++ compiler of the CUDA emulator (default: g++)",
    "TVM_CUDA_C_LAUNCHER": "0: CUDA kernels launch with cuda.core, not the C launcher of the "
                           "hot call (built with CC on first launch)",
}

_COMPILERS = ("cc", "gcc", "clang", "g++", "clang++")


def collect() -> dict[str, Any]:
    """The report as data (``python -m tvm doctor --json`` prints it)."""
    return {
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "platform": {"system": platform.platform(), "machine": platform.machine(),
                     "cpus": os.cpu_count()},
        "tvm-core": {"version": __version__,
                     "location": os.path.dirname(os.path.abspath(__file__))},
        "compilers": {name: _compiler(name) for name in _COMPILERS},
        "host compiler": _host_compiler(),
        "environment": {k: os.environ.get(k) for k in ENV_VARS},
        "cache": _cache(),
        "backends": _backends(),
    }


def _compiler(name: str) -> dict[str, str] | None:
    path = shutil.which(name)
    if path is None:
        return None
    try:
        proc = run_tool([path, "--version"], "asking for its version", PROBE_TIMEOUT_S,
                        check=False)
        version = (proc.stdout or proc.stderr).strip().splitlines()[0]
    except (CompileError, IndexError):
        version = "?"
    return {"path": path, "version": version}


def _host_compiler() -> dict[str, Any]:
    try:
        tc = get_toolchain()
        return {"command": tc.display, "version": tc.version, "openmp": tc.has_openmp,
                "float16": tc.has_float16}
    except Exception as err:  # no compiler: the report says so instead of failing
        return {"error": f"{type(err).__name__}: {err}"}


def _cache() -> dict[str, Any]:
    entries = list(cache.iter_entries())
    per_backend: dict[str, int] = {}
    for e in entries:
        per_backend[e.namespace] = per_backend.get(e.namespace, 0) + 1
    return {"directory": str(cache.cache_dir()), "enabled": cache.cache_enabled(),
            "bytes": cache.cache_size(), "entries": len(entries),
            "entries per backend": dict(sorted(per_backend.items()))}


def _backends() -> list[dict[str, Any]]:
    backend._autoload()
    ensure_builtin_backends()
    rows = [r.to_dict() for r in backend.list_backends()]
    runnable: dict[str, list[str]] = {}
    try:
        for result in get_plugin_manager().hook.tvm_demo_cases():
            for case in result or []:
                label = case.backend or ""
                runnable.setdefault(label.split(" ")[0], []).append(label)
    except Exception:  # a backend's demo hook failing must not hide the rest of the report
        pass
    states = backend._loader.discovered()
    for row in rows:
        if row.get("state") == "loaded":
            plugin = getattr(states.get(row["name"]), "plugin", None)
            row["devices"] = _devices(row["name"], runnable.get(row["name"], []))
            row["device probes"] = _probes(plugin)
            row["targets here"] = _resolved_targets(row["name"])
    return rows


def _resolved_targets(name: str) -> dict[str, str]:
    """``{kind: what a build for target kind resolves to here}`` for the kinds of backend
    ``name`` whose builder settles attributes on this machine (CUDA: the GPU's arch)."""
    out = {}
    for kind in contract.BUILDERS.keys_owned_by(name):
        try:
            builder = contract.get_builder(kind)
            if type(builder).resolve_target is contract.Builder.resolve_target:
                continue
            plain = Target(kind)
            resolved = builder.resolve_target(plain)
        except Exception as err:  # a broken builder is a finding, not a crash of the report
            out[kind] = f"cannot be resolved: {type(err).__name__}: {err}"
            continue
        changed = {k: v for k, v in resolved.attrs.items() if plain.attrs.get(k) != v}
        out[kind] = ", ".join(f"{k}={v}" for k, v in sorted(changed.items())) or "as given"
    return out


def _devices(name: str, demo_rows: list[str]) -> str:
    """What the backend runs on here: the CPU for ``c``; for the others, what their demo rows
    say (a backend returns rows only where its device, simulator or emulator can run)."""
    if name == "c":
        return f"this CPU ({platform.machine()}, {os.cpu_count()} cores)"
    if demo_rows:
        how = ", ".join(sorted(set(demo_rows)))
        return f"kernels run here: {len(demo_rows)} demo kernels as {how}"
    return "none here: kernels compile, but cannot run on this machine"


def _probes(plugin: Any) -> dict[str, str]:
    """``{marker: "available" or why not}`` from the backend's ``tvm_device_probes`` hook."""
    hook = getattr(plugin, "tvm_device_probes", None)
    if hook is None:
        return {}
    out = {}
    try:
        for marker, probe in (hook() or {}).items():
            try:
                reason = probe()
            except Exception as err:  # a broken probe is a finding, not a crash of the report
                reason = f"the probe failed: {type(err).__name__}: {err}"
            out[str(marker)] = "available" if reason is None else str(reason)
    except Exception as err:
        out["?"] = f"tvm_device_probes failed: {type(err).__name__}: {err}"
    return out


def format_report(report: dict[str, Any]) -> str:
    """The report as text."""
    py, plat, core = report["python"], report["platform"], report["tvm-core"]
    lines = [
        f"python       {py['version']} ({py['executable']})",
        f"platform     {plat['system']} ({plat['machine']}, {plat['cpus']} CPUs)",
        f"tvm-core     {core['version']} ({core['location']})",
    ]
    missing = [n for n, c in report["compilers"].items() if not c]
    lines.append("compilers    " + (f"not found: {', '.join(missing)}" if missing else ""))
    for name, c in report["compilers"].items():
        if c:
            lines.append(f"  {name:<10} {c['path']}: {c['version']}")
    host = report["host compiler"]
    if "error" in host:
        lines.append(f"host cc      {host['error']}")
    else:
        lines.append(f"host cc      {host['command']}: OpenMP {_yes(host['openmp'])}, "
                     f"_Float16 {_yes(host['float16'])}")
    env = [f"{k}={v}" for k, v in report["environment"].items() if v is not None]
    lines.append("environment  " + (", ".join(env) or "no TVM_* variables set"))
    c = report["cache"]
    per = ", ".join(f"{k}: {v}" for k, v in c["entries per backend"].items())
    lines.append(f"cache        {c['directory']}: {c['entries']} entries, "
                 f"{format_bytes(c['bytes'])}{f' ({per})' if per else ''}"
                 f"{'' if c['enabled'] else '; disabled by TVM_CACHE=0'}")
    lines += ["", "backends"]
    for b in report["backends"]:
        version = f" {b['version']}" if b.get("version") else ""
        head = f"  {b['name']:<8} {b['distribution']}{version}: {b['state']}"
        if b.get("reason"):
            head += f" ({b['reason']})"
        lines.append(head)
        if b.get("devices"):
            lines.append(f"           devices: {b['devices']}")
        for marker, state in (b.get("device probes") or {}).items():
            lines.append(f"           probe {marker}: {state}")
        for kind, resolved in (b.get("targets here") or {}).items():
            lines.append(f"           target {kind!r} builds here with: {resolved}")
    return "\n".join(lines)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def format_bytes(n: int) -> str:
    """``1.5 MB``-style size (powers of 1024)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"
