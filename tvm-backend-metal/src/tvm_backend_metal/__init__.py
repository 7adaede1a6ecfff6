"""tvm-backend-metal: Metal Shading Language for Apple GPUs.

Submodules (imported on use, none of them imports anything heavy at import time):

* :mod:`tvm_backend_metal.msl_check`: ``check_msl(source)``, a C++-shim syntax check of MSL
  kernels that runs on Linux;
* :mod:`tvm_backend_metal.emulator`: ``run_msl(source, kernel, grid, threadgroup, buffers)``,
  MSL compute kernels executed on the CPU (threadgroups, barriers and SIMD groups emulated);
* :mod:`tvm_backend_metal.runtime`: the GPU runtime on macOS through pyobjc-framework-Metal
  (``pip install 'tvm-backend-metal[runtime]'``).
"""

from __future__ import annotations

__version__ = "0.1.0"
