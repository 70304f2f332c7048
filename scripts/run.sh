#!/usr/bin/env bash
# The README's main job: set up, build, then generate a small Llama training
# step (RMSNorm, RoPE, grouped-query attention, SwiGLU, untied head), shard it
# full_shard (ZeRO-3) over 4 ranks with one unit per decoder layer, compile it
# to native code and train it with 4 ranks as threads on real text -- the
# bytes of this repository's docs, one token per byte (scripts/text-tokens.py)
# -- printing the falling loss, each rank's memory by category and a loss plot.
#
# The job itself is scripts/main-job.sh (ctest main-job runs it on the built
# tree with fewer steps).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
exec bash "$root/scripts/main-job.sh"
