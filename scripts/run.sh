#!/usr/bin/env bash
# The README's main job: set up, build, then generate a tiny GPT training
# step, shard it full_shard (ZeRO-3) over 4 ranks, compile it to native code
# and train it on the built-in synthetic data with 4 ranks as threads,
# printing the falling loss and each rank's memory by category.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
bin="${ZSHARD_BUILD_DIR:-$root/build}/bin"
work="${ZSHARD_WORK_DIR:-$root/build/demo}"
ranks="${ZSHARD_RANKS:-4}"
mkdir -p "$work"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

echo "== zshard-gen: a 2-layer GPT training step (forward, backward, AdamW), batch 2 per rank"
"$bin/zshard-gen" gpt --layers 2 --d-model 32 --heads 4 --vocab 32 --seq 16 \
  --batch 2 -o "$work/gpt.mlir"
"$bin/zshard-opt" "$work/gpt.mlir" --zshard-verify-contract -o /dev/null

echo "== zshard-compile: one unit per block, full_shard over $ranks ranks, gathers prefetched (the sharded IR)"
"$bin/zshard-compile" "$work/gpt.mlir" --strategy full_shard --ranks "$ranks" \
  --emit=sharded-mlir -o "$work/gpt.sharded.mlir"
grep -E "zshard.unit @" "$work/gpt.sharded.mlir" | sed 's/ \[$//'
echo "   $(grep -c 'zshard.all_gather' "$work/gpt.sharded.mlir") all-gathers, $(grep -c 'zshard.reduce_scatter' "$work/gpt.sharded.mlir") reduce-scatters"

echo "== zshard-compile: the same command to native code, with the static memory plan"
"$bin/zshard-compile" "$work/gpt.mlir" --strategy full_shard --ranks "$ranks" \
  -o "$work/gpt.zsa" --memory-report

echo "== zshard-run: $ranks ranks train 300 steps on the synthetic sequence"
"$bin/zshard-run" "$work/gpt.zsa" --ranks "$ranks" --steps 300 \
  --save-full "$work/gpt.safetensors" | tee "$work/run.log"

echo "== per-rank peak memory by category (bytes), as measured (compare the plan above)"
tail -n 1 "$work/run.log" | /usr/bin/python3 -c '
import json, sys
summary = json.loads(sys.stdin.read())
cats = ["parameters", "gradients", "optimizer_state", "activations", "communication", "other", "total"]
print("rank  " + "  ".join(f"{c:>15}" for c in cats))
for r, peaks in enumerate(summary["rank_peak_bytes"]):
    print(f"{r:>4}  " + "  ".join(f"{peaks[c]:>15,}" for c in cats))
'
