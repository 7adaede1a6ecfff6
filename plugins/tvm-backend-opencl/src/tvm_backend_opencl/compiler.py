"""OpenCL's compile stage: OpenCL C source -> the program text the driver builds at run time.

OpenCL compiles kernels in the driver, for the device in hand (``clBuildProgram``), so the
binary of an OpenCL executable is its source as UTF-8 (as Apache TVM ships OpenCL modules),
and the builder caches nothing. With ``check=True`` (the default) and a device present, the
source is built once here, so a kernel the driver rejects fails at ``tvm.compile`` with the
driver's log and a command that reproduces the build::

    python -m tvm_backend_opencl.compiler /tmp/tvm-opencl-xxxx/kernels.cl --options "..."
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tvm.error import TVMError

from . import runtime
from .runtime import repro_command

__all__ = ["check_build", "package_source", "repro_command"]


def package_source(source: str) -> bytes:
    """The binary of an OpenCL executable: its source as UTF-8."""
    return source.encode("utf-8")


def check_build(source: str, *, device_type: str = "all", platform: str = "",
                options: str = "", what: str = "the OpenCL C") -> str | None:
    """Build ``source`` on the target's device when there is one; returns the device's name,
    or None when no device is here to build on (the build then happens at the first run).
    A failed build raises :class:`~tvm.error.CompileError`."""
    if not runtime.is_available(device_type, platform):
        return None
    device = runtime.device_for(device_type, platform)
    device.program(source, options, what=what)
    return device.name


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tvm_backend_opencl.compiler FILE [--options ...]``: build an OpenCL C file on
    this machine's device and print the driver's log."""
    parser = argparse.ArgumentParser(prog="python -m tvm_backend_opencl.compiler",
                                     description=main.__doc__)
    parser.add_argument("file")
    parser.add_argument("--options", default="", help="clBuildProgram options")
    parser.add_argument("--device-type", default="all")
    parser.add_argument("--platform", default="")
    ns = parser.parse_args(argv)
    with open(ns.file, encoding="utf-8") as f:
        source = f.read()
    try:
        name = check_build(source, device_type=ns.device_type, platform=ns.platform,
                           options=ns.options, what=ns.file)
    except TVMError as err:
        print(err, file=sys.stderr)
        return 1
    if name is None:
        print(f"no OpenCL device: {runtime.unavailable_reason(ns.device_type, ns.platform)}",
              file=sys.stderr)
        return 2
    print(f"built {ns.file} for {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
