#!/usr/bin/env bash
# The README's test command: sets up a fresh Debian 12 machine, builds, and runs
# every test (lit, unit, runtime, reference, docs) with ctest. GPU tests are
# labelled requires-gpu and report "Skipped" without a GPU.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/setup-torch.sh"
bash "$root/scripts/build.sh"
build="${ZSHARD_BUILD_DIR:-$root/build}"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
ctest --test-dir "$build" --output-on-failure -j "${ZSHARD_JOBS:-2}"
