"""What ``import tvm`` must not load (ARCHITECTURE: SDKs and heavy modules load when a kernel is
compiled or run). Checked in a fresh interpreter, with whatever backends this environment has;
the time itself is measured by bench/import_time.py, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# numpy and the SDKs; tvm's compile path (driver, passes, the host dispatch variants); the demo
# (TVMScript kernels, argparse); logging (tvm._logging stands in until TVM_LOG_LEVEL asks)
NOT_AT_IMPORT = ("numpy", "ml_dtypes", "torch", "cupy", "cuda.core", "pyopencl", "wgpu",
                 "vulkan", "tvm.driver", "tvm.transform", "tvm.host.dispatch", "tvm.demo",
                 "argparse", "logging", "subprocess")

PROBE = """
import json, sys
import tvm, tvm.backend
tvm.backend.ensure_builtin_backends()
print(json.dumps([name for name in %r if name in sys.modules]))
"""


def test_import_tvm_loads_nothing_heavy():
    env = {k: v for k, v in os.environ.items() if k != "TVM_LOG_LEVEL"}
    proc = subprocess.run([sys.executable, "-c", PROBE % (NOT_AT_IMPORT,)], capture_output=True,
                          text=True, env=env, timeout=120, check=True)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
