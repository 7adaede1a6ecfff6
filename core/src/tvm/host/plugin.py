"""Hook implementations of the built-in host backend ``c`` (entry point ``c = tvm.host.plugin``).

Hooks only, made from the data in ``SPEC`` like every backend's; the work is in the backend's
other modules (the same layout as every backend): ``tags`` (the target kind), ``codegen`` (IR to
C), ``compiler`` (C to a shared object), ``executable`` (the build contract and the
Executable), ``runtime`` (ctypes).
"""

from __future__ import annotations

from ..plugin import BackendSpec
from . import tags

__all__ = ["SPEC", "register_backend"]

NAME = "c"

SPEC = BackendSpec(
    name=NAME,
    api_range=">=2,<3",
    distribution="tvm-core",
    description="host CPU: C compiled by the system C compiler (CC), loaded with ctypes",
    # The package is tvm.host already, inside core; a tvm.backend.c alias would add nothing.
    aliases={},
    kinds=tags.KINDS,
    tags=tags.TAGS,
    builders={NAME: "tvm.host.executable:HostBuilder", tags.LLVM: "tvm.host.executable:LlvmBuilder"},
    # the variants import the tile-primitive machinery (~25 ms, 40 modules): named, so they load
    # when the hook runs, not when tvm.host is imported
    register_dispatch="tvm.host.dispatch:register_all",
    default_pipeline={NAME: "default", tags.LLVM: "default"},
    # the demo's kernels are TVMScript and it brings tvm.demo: named, loaded when the demo runs
    demo_cases="tvm.host.demo:demo_cases",
)
# the tvm_* hook functions and register_backend() (through its entry point when tvm-core is
# installed, else in-process)
register_backend = SPEC.publish(globals())
