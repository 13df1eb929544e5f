#!/usr/bin/env bash
# setup.sh — installs what graphc needs to build and test on Debian 12:
# compiler and make, CMake, pkg-config, cmocka (unit tests), OpenBLAS (optional
# fast GEMM in generated code), Debian's python3 + numpy (test drivers), binutils
# (`nm` in the model tests), Graphviz (`dot`, which renders `graphc dump --format=dot`
# in the cli test), clang with its libFuzzer runtime (scripts/fuzz.sh; Debian ships the
# runtime in libclang-rt-14-dev, which clang only recommends), libclang-dev (the reader of --ops
# files, CMake GRAPHC_LIBCLANG=AUTO finds it), the Arm bare-metal toolchain
# with newlib and qemu's Arm system emulator (the firmware test, tests/firmware).
# Idempotent: does nothing when everything is there.
set -euo pipefail

packages=(build-essential cmake pkg-config libcmocka-dev libopenblas-dev python3 python3-numpy python3-onnx
          python3-torch python3-torchvision python3-sklearn git ca-certificates binutils graphviz clang libclang-rt-14-dev
          libclang-dev
          gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup.sh: done"
