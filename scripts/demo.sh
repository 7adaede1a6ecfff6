#!/usr/bin/env bash
# The README's main job: set up a venv with core and every backend in this checkout, then
# compile and run real kernels on the host C target (and on the GPU / simulators where present).
# Progress goes to stderr as each step starts; the table is the last thing printed. Extra
# arguments go to `python -m tvm demo` (--target c, --show-source, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "==> $*" >&2; }
step "system packages of the smaller backends (scripts/system-deps.sh; installs them as root)"
bash scripts/system-deps.sh >&2
step "creating the virtual environment .venv"
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
pkgs=(./core)
for b in tvm-backend-* plugins/tvm-backend-*; do
  [ "$b" = plugins/tvm-backend-example ] && continue  # the template, not a device backend
  [ -f "$b/pyproject.toml" ] && pkgs+=("./$b")
done
step "installing ${pkgs[*]} (pip; the CUDA backend brings NVRTC, about 75 MB the first time)"
start=$SECONDS
.venv/bin/python -m pip install -q "${pkgs[@]}"
step "installed in $((SECONDS - start)) s; running python -m tvm demo $*"
.venv/bin/python -m tvm demo "$@"
