#!/usr/bin/env bash
# Configures and builds zshard in build/ (Release, Ninja, ccache, -j2).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ZSHARD_BUILD_DIR:-$root/build}"
jobs="${ZSHARD_JOBS:-2}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/zshard-ccache}"
# Paths relative to the checkout, so that clones in other directories hit
# the same cache entries.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
cmake --build "$build" -j "$jobs"
