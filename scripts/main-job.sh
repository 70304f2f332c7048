#!/usr/bin/env bash
# The README's main job on a built tree (scripts/run.sh sets up and builds
# first): tokenize the docs' bytes, generate a 2-layer Llama training step,
# shard it full_shard over ZSHARD_RANKS (4) rank threads with one unit per
# decoder layer, compile it with an eval entry, train ZSHARD_STEPS (600)
# steps on the text with the eval loss on held-out text every 100 steps, and
# print the per-rank memory table and draw the loss curve. The build and work
# directories are ZSHARD_BUILD_DIR (build/) and ZSHARD_WORK_DIR (build/demo).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${ZSHARD_BUILD_DIR:-$root/build}/bin"
work="${ZSHARD_WORK_DIR:-$root/build/demo}"
ranks="${ZSHARD_RANKS:-4}"
steps="${ZSHARD_STEPS:-600}"
mkdir -p "$work"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

echo "== text-tokens: the bytes of docs/*.md and README.md as u16 tokens (vocabulary 256)"
/usr/bin/python3 "$root/scripts/text-tokens.py" "$root"/docs/*.md "$root/README.md" \
  --train "$work/train.bin" --val "$work/val.bin"

echo "== zshard-gen: a 2-layer Llama training step (d 96, 6 heads, 2 kv heads; forward, backward, AdamW), batch 4 per rank of 64 tokens"
"$bin/zshard-gen" llama --layers 2 --d-model 96 --heads 6 --kv-heads 2 \
  --ffn-hidden 256 --vocab 256 --seq 64 --batch 4 -o "$work/llama.mlir"
"$bin/zshard-opt" "$work/llama.mlir" --zshard-verify-contract -o /dev/null

echo "== zshard-compile: one unit per LlamaDecoderLayer, full_shard over $ranks ranks, gathers prefetched (the sharded IR)"
"$bin/zshard-compile" "$work/llama.mlir" --strategy full_shard --ranks "$ranks" \
  --wrap transformer=LlamaDecoderLayer \
  --emit=sharded-mlir -o "$work/llama.sharded.mlir"
grep -E "zshard.unit @" "$work/llama.sharded.mlir" | sed 's/ \[$//'
echo "   $(grep -c 'zshard.all_gather' "$work/llama.sharded.mlir") all-gathers, $(grep -c 'zshard.reduce_scatter' "$work/llama.sharded.mlir") reduce-scatters"

echo "== zshard-compile: the same command to native code with a forward-only eval entry, and the static memory plans"
"$bin/zshard-compile" "$work/llama.mlir" --strategy full_shard --ranks "$ranks" \
  --wrap transformer=LlamaDecoderLayer \
  --eval -o "$work/llama.zsa" --memory-report

echo "== zshard-run: $ranks ranks train $steps steps on the docs' bytes (cosine lr after 20 warmup steps), eval loss on held-out bytes every 100 steps"
"$bin/zshard-run" "$work/llama.zsa" --ranks "$ranks" --steps "$steps" \
  --data "$work/train.bin" --lr 3e-3 --warmup-steps 20 --lr-decay cosine --decay-steps "$steps" \
  --min-lr 3e-4 --eval-data "$work/val.bin" --eval-every 100 --eval-steps 8 \
  --log-json "$work/run.jsonl" \
  --save-full "$work/llama.safetensors" | tee "$work/run.log"

echo "== per-rank peak memory by category (bytes), as measured (compare the plan above)"
tail -n 1 "$work/run.log" | /usr/bin/python3 -c '
import json, sys
summary = json.loads(sys.stdin.read())
cats = ["parameters", "gradients", "optimizer_state", "activations", "communication", "other", "total"]
print("rank  " + "  ".join(f"{c:>15}" for c in cats))
for r, peaks in enumerate(summary["rank_peak_bytes"]):
    print(f"{r:>4}  " + "  ".join(f"{peaks[c]:>15,}" for c in cats))
'

echo "== the loss curve: $work/loss.png"
/usr/bin/python3 "$root/bench/plot_run.py" --log "$work/run.jsonl" \
  -o "$work/loss.png" --title "Llama 2x96, full_shard over $ranks ranks, docs bytes"
