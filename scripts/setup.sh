#!/usr/bin/env bash
# Installs every Debian 12 package zshard needs. Idempotent: installs only what
# is missing, runs `apt-get update` only when something is. Fails loudly.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++ pkg-config
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libgtest-dev libopenblas-dev libopenmpi-dev openmpi-bin libdnnl-dev
  nlohmann-json3-dev python3 python3-numpy python3-matplotlib
  python3-venv
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install packages" >&2; exit 1; }
    SUDO="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Checks that the pieces the build relies on are really there.
for tool in /usr/lib/llvm-22/bin/mlir-tblgen /usr/lib/llvm-22/bin/lit /usr/lib/llvm-22/bin/FileCheck; do
  [ -x "$tool" ] || { echo "setup: $tool is missing after install" >&2; exit 1; }
done
[ -f /usr/lib/llvm-22/lib/cmake/mlir/MLIRConfig.cmake ] || { echo "setup: MLIR 22 CMake config missing" >&2; exit 1; }
/usr/bin/python3 -c "import numpy" || { echo "setup: python3-numpy not importable by /usr/bin/python3" >&2; exit 1; }
/usr/bin/python3 -c "import matplotlib" || { echo "setup: python3-matplotlib not importable by /usr/bin/python3" >&2; exit 1; }
if [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: CUDA toolkit found at /usr/local/cuda (CUDA parts will compile)"
else
  echo "setup: no CUDA toolkit at /usr/local/cuda; CUDA parts are skipped"
fi
