#!/usr/bin/env bash
# One GPU session's run from a source checkout: every `gpu` test of tvm-backend-cuda, then the
# CUDA benchmarks, each log and an updated copy of docs/perf.md written to OUTDIR. This is how the
# H200 rows of docs/gpu-results.md and docs/perf.md are made.
#
#   bash scripts/gpu_session.sh OUTDIR [STEP...]
#
# Needs a CUDA GPU with its driver, and in the Python on PATH: torch (CUDA build), triton,
# cuda-core / cuda-bindings (NVRTC), numpy, pluggy, pytest, pytest-xdist. Nothing is installed:
# core and the CUDA backend are used from this checkout (PYTHONPATH). TVM_COMMIT names the commit
# in the tables when the checkout has no .git. Every step has a time limit (seconds, overridable:
# TESTS_S, LAUNCH_S, PERF_S, LIB_S, ATTN_S) so that a session's device time is never overrun; a step
# that runs out leaves its log. STEPs, run in the order given (default: tests launch perf):
# tests (every `gpu` test), launch (bench/cuda_launch_overhead.py), perf (bench/cuda_perf.py
# --no-lib: the GEMM and memory-bound rows), lib (bench/cuda_perf.py --lib-only: the kernel
# library's rows, with autotuning), attention (bench/attention_perf.py: FlashAttention forward
# against torch's attention backends), seed (scripts/seed_suite.py: the seed's TIRx suite on the
# GPU, then all of it on the emulated sm_90a on this machine's CPU; needs SEED_SUITE, a clone of
# Apache TVM or a folder holding tests/python/tirx, and the backends' entry points: wheels in
# .whl/ (pip wheel --no-deps ./core ./tvm-backend-cuda ./tvm-backend-trn -w .whl) are installed
# for it into a temporary folder when no installed tvm-core is found).
set -uo pipefail
out=${1:?usage: bash scripts/gpu_session.sh OUTDIR [tests] [launch] [perf] [lib] [attention]}
shift
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests launch perf)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/core/src:$PWD/tvm-backend-cuda/src${PYTHONPATH:+:$PYTHONPATH}"
export TVM_COMMIT="${TVM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
cp docs/perf.md "$out/perf.md"

{
    date -u '+%Y-%m-%d %H:%M UTC'
    echo "commit $TVM_COMMIT"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)'
} > "$out/machine.txt" 2>&1

step() {  # step NAME SECONDS CMD...: run CMD with a time limit, its output to OUTDIR/NAME.log
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    local rc=$?
    echo "$name: rc=$rc in $((SECONDS - t0)) s (limit $limit s)" | tee -a "$out/steps.txt"
}

seed_env() {  # the backends' entry points for the seed suite (import tvm finds backends by them)
    python -c 'import importlib.metadata as m; m.version("tvm-core")' 2>/dev/null && return
    local site
    site="$(mktemp -d)/site-packages"
    pip install -q --no-index --no-deps --target "$site" .whl/*.whl > "$out/seed-install.log" 2>&1
    export PYTHONPATH="$PYTHONPATH:$site"
}

# The benchmarks' kernels are compiled (NVRTC, into the cubin cache) while the first step runs,
# so the timed runs start from a warm cache; the tests use a private cache each.
python bench/cuda_perf.py --smoke > "$out/precompile.log" 2>&1 &
pre=$!
for s in "${steps[@]}"; do
    case $s in
    tests) step tests "${TESTS_S:-150}" python -m pytest -q -p no:cacheprovider \
               tvm-backend-cuda/tests -m gpu -n 8 -rfEs ;;
    launch) wait $pre; step launch "${LAUNCH_S:-90}" python bench/cuda_launch_overhead.py \
                --batches 150 --out "$out/perf.md" ;;
    perf) wait $pre; step perf "${PERF_S:-240}" python bench/cuda_perf.py --no-lib \
              --out "$out/perf.md" ;;
    lib) wait $pre; step lib "${LIB_S:-420}" python bench/cuda_perf.py --lib-only \
             --out "$out/perf.md" ;;
    attention) step attention "${ATTN_S:-150}" python bench/attention_perf.py \
                   --out "$out/perf.md" ;;
    seed) seed_env
          step seed-gpu "${SEED_S:-300}" python scripts/seed_suite.py "${SEED_SUITE:?}" --gpu \
              -n "${SEED_N:-12}" --out "$out/seed-gpu.md"
          step seed-emu "${SEED_S:-300}" python scripts/seed_suite.py "$SEED_SUITE" \
              -n "${SEED_N:-12}" --out "$out/seed-emu.md" ;;
    *) echo "unknown step $s (tests, launch, perf, lib, attention, seed)" >&2; exit 2 ;;
    esac
done
wait
[ -f "$out/tests.log" ] && tail -n 3 "$out/tests.log"
exit 0
