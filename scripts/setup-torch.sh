#!/usr/bin/env bash
# Creates the Python virtual environment the PyTorch exporter (zshard-export),
# its tests and bench/peer use: torch from PyPI, pinned, in
# ${ZSHARD_TORCH_VENV:-<repo>/.venv-torch}. Idempotent: does nothing when the
# venv already holds the pinned versions. Fails loudly.
#
# Linux torch wheels on PyPI are the CUDA builds and pull the CUDA runtime
# wheels (cuda-toolkit, cudnn, nccl, ...): the CPU-only wheels are not on PyPI,
# and the CUDA wheel does not import without those libraries (it links them),
# so the whole set is installed. About 3 GB on disk; see docs/zshard-export.md
# for the measured install time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ZSHARD_TORCH_VENV:-$root/.venv-torch}"
python="${ZSHARD_TORCH_BASE_PYTHON:-/usr/bin/python3}"

TORCH_VERSION=2.15.0
NUMPY_SPEC="numpy>=1.26,<3"
# Hugging Face models for the exporter's tests (test/export/hf_models.py):
# the newest transformers on PyPI that works with this torch, and its
# safetensors.
TRANSFORMERS_VERSION=5.24.0
SAFETENSORS_VERSION=0.8.0

if [ -x "$venv/bin/python" ] &&
   "$venv/bin/python" - "$TORCH_VERSION" <<'EOF' 2>/dev/null
import sys, importlib.metadata as md
sys.exit(0 if md.version("torch") == sys.argv[1] and md.version("numpy") else 1)
EOF
then
  if "$venv/bin/python" - "$TRANSFORMERS_VERSION" "$SAFETENSORS_VERSION" <<'EOF' 2>/dev/null
import sys, importlib.metadata as md
sys.exit(0 if (md.version("transformers"), md.version("safetensors")) == tuple(sys.argv[1:]) else 1)
EOF
  then
    echo "setup-torch: torch $TORCH_VERSION, transformers $TRANSFORMERS_VERSION present in $venv"
    exit 0
  fi
  # torch is there: add the pinned transformers (and its safetensors) only.
  "$venv/bin/python" -m pip install -q "transformers==$TRANSFORMERS_VERSION" \
    "safetensors==$SAFETENSORS_VERSION"
  "$venv/bin/python" -c "import transformers; print('setup-torch: transformers', transformers.__version__)"
  exit 0
fi

# The venv module is Debian's python3-venv, which scripts/setup.sh installs.
if ! "$python" -c "import venv, ensurepip" 2>/dev/null; then
  echo "setup-torch: $python has no venv module; run scripts/setup.sh first (it installs python3-venv)" >&2
  exit 1
fi

start=$(date +%s)
echo "setup-torch: creating $venv with torch $TORCH_VERSION"
"$python" -m venv --clear "$venv"
"$venv/bin/python" -m pip install -q --upgrade "pip>=24"
"$venv/bin/python" -m pip install -q "torch==$TORCH_VERSION" "$NUMPY_SPEC" \
  "transformers==$TRANSFORMERS_VERSION" "safetensors==$SAFETENSORS_VERSION"
"$venv/bin/python" -c "import torch, numpy, transformers; torch.ones(2) @ torch.ones(2); print('setup-torch: torch', torch.__version__, 'numpy', numpy.__version__, 'transformers', transformers.__version__)"
echo "setup-torch: done in $(( $(date +%s) - start )) s ($(du -sh "$venv" | cut -f1) in $venv)"
