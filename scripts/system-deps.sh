#!/usr/bin/env bash
# The Debian/Ubuntu packages the smaller backends use to compile and run kernels on a machine
# without a GPU; one list for all of them. Run as root it installs the missing ones with apt-get;
# otherwise (or without apt-get, or offline) it says what is missing and carries on: the tests
# that need a package skip with the reason.
#
#   pocl-opencl-icd      OpenCL on the CPU (PoCL): tvm-backend-opencl runs its kernels there
#   hipcc                HIP compiler (clang, ROCm device libraries): tvm-backend-rocm compile checks
#   glslang-tools        GLSL -> SPIR-V (glslangValidator): tvm-backend-vulkan
#   spirv-tools          spirv-val: tvm-backend-vulkan
#   mesa-vulkan-drivers  Vulkan on the CPU (lavapipe): tvm-backend-vulkan and tvm-backend-webgpu
#
# TVM_SKIP_SYSTEM_DEPS=1 skips this script.
set -uo pipefail

PACKAGES=(pocl-opencl-icd hipcc glslang-tools spirv-tools mesa-vulkan-drivers)

if [ "${TVM_SKIP_SYSTEM_DEPS:-0}" = "1" ]; then
  exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "system-deps: not a Debian-like system; install the equivalents of: ${PACKAGES[*]}" \
       "(without them the tests that need them skip)"
  exit 0
fi
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system-deps: all present (${PACKAGES[*]})"
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${missing[*]}; install them as root with" \
       "'apt-get install --no-install-recommends ${missing[*]}' (until then the tests that need" \
       "them skip)"
  exit 0
fi
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || true
# Say what comes before it comes: apt's own count and sizes, dependencies included (measured
# on Debian 12 with nothing of it installed: 40 packages, 105 MB to download, 531 MB on disk;
# PoCL 271 MB and hipcc 370 MB alone, sharing LLVM).
plan=$(apt-get install --assume-no --no-install-recommends "${missing[@]}" 2>/dev/null \
         | grep -E "newly installed|Need to get|After this operation" | tr '\n' ' ')
echo "system-deps: installing ${missing[*]} for the OpenCL, ROCm, Vulkan and WebGPU backends" \
     "(${plan:-apt did not say how much}); TVM_SKIP_SYSTEM_DEPS=1 skips this, and then the" \
     "tests that need them skip"
if apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  echo "system-deps: installed ${missing[*]} in $(( $(date +%s) - start )) s"
else
  echo "system-deps: apt-get could not install ${missing[*]} (offline?); the tests that need" \
       "them skip"
fi
exit 0
