#!/usr/bin/env bash
# The README's test command: set up nox and run the whole test matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-deps.sh  # Debian packages of the smaller backends (as root)
python3 -m venv .venv-nox
.venv-nox/bin/python -m pip install -q --upgrade pip
.venv-nox/bin/python -m pip install -q "nox>=2024.4" "uv>=0.4"
export PATH="$PWD/.venv-nox/bin:$PATH"
# The core session runs on the oldest and the newest supported Python: let nox find pyenv's.
for d in "$HOME"/.pyenv/versions/*/bin; do
  [ -d "$d" ] && PATH="$PATH:$d"
done
nox "$@"
