#!/usr/bin/env bash
# The README's main job: set up, build, then generate a tiny GPT training
# step, compile it to native code and train it on the built-in synthetic data,
# printing the falling loss.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
bin="${ZSHARD_BUILD_DIR:-$root/build}/bin"
work="${ZSHARD_WORK_DIR:-$root/build/demo}"
mkdir -p "$work"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

echo "== zshard-gen: a 2-layer GPT training step (forward, backward, AdamW)"
"$bin/zshard-gen" gpt --layers 2 --d-model 32 --heads 4 --vocab 32 --seq 16 \
  --batch 8 -o "$work/gpt.mlir"
"$bin/zshard-opt" "$work/gpt.mlir" --zshard-verify-contract -o /dev/null
echo "   $(grep -c '' "$work/gpt.mlir") lines of MLIR, contract verified"

echo "== zshard-compile: lower to native code"
"$bin/zshard-compile" "$work/gpt.mlir" -o "$work/gpt.zsa" --timing
ls -l "$work/gpt.zsa"

echo "== zshard-run: train 300 steps on the synthetic sequence"
"$bin/zshard-run" "$work/gpt.zsa" --steps 300 --save "$work/gpt.safetensors"
