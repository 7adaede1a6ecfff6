#!/usr/bin/env bash
# Build the wheel of every distribution in this repository into dist/ (or the folder given):
# tvm-core, each tvm-backend-* and plugins/tvm-backend-* (the template among them). Then,
# without a package index for ours:
#
#   pip install --find-links dist tvm-backend-cuda      # pulls tvm-core from dist/ too
#
# PYTHON picks the interpreter (default python3); hatchling is used from it when installed,
# else pip builds each wheel in an isolated environment (which downloads hatchling once).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
python="${PYTHON:-python3}"
mkdir -p "$out"
projects=(./core)
for p in ./tvm-backend-* ./plugins/tvm-backend-*; do
  [ -f "$p/pyproject.toml" ] && projects+=("$p")
done
isolation=()
if "$python" -c "import hatchling" 2>/dev/null; then
  isolation=(--no-build-isolation)
fi
echo "building ${#projects[@]} wheels into $out: ${projects[*]}"
"$python" -m pip wheel --quiet --no-deps "${isolation[@]}" --wheel-dir "$out" "${projects[@]}"
ls -1 "$out"/*.whl
