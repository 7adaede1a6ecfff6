#!/usr/bin/env bash
# The README's main job: set up a venv with core and every backend in this checkout, then
# compile and run real kernels on the host C target (and on the GPU / simulators where present).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-deps.sh  # Debian packages of the smaller backends (as root)
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
pkgs=(./core)
for b in tvm-backend-* plugins/tvm-backend-*; do
  [ "$b" = plugins/tvm-backend-example ] && continue  # the template, not a device backend
  [ -f "$b/pyproject.toml" ] && pkgs+=("./$b")
done
.venv/bin/python -m pip install -q "${pkgs[@]}"
.venv/bin/python -m tvm demo "$@"
