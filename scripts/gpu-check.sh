#!/usr/bin/env bash
# The CUDA backend checked on a GPU, and one benchmark config, as JSON.
#
#   scripts/gpu-check.sh [all]        on a machine with the toolchain of
#                                     scripts/setup.sh and a GPU: prepare, run
#   scripts/gpu-check.sh prepare DIR  here (no GPU needed): build, compile the
#                                     artifacts, record the CPU reference, and
#                                     bundle a CUDA runtime (no MPI) with the
#                                     libraries it needs that a bare CUDA
#                                     machine lacks (OpenBLAS)
#   scripts/gpu-check.sh run DIR      on the GPU machine, from DIR alone (no
#                                     LLVM needed): the checks and the figures
#
# The checks:
#   0. the runtime's requires-gpu tests that need no build tree (the CUDA
#      self-test, the device and its products, the attention kernels against
#      the CPU's, NCCL);
#   1. gpt tiny, compiled for CUDA, 10 steps on the GPU against the same
#      step compiled for the CPU: losses within 1e-5 (f32) and 1e-2 (bf16),
#      relative; in f32 also with head size 64 (the attention kernels'
#      specialised path);
#   2. a benchmark config (default d 1024, 24 layers, seq 1024, batch 8,
#      bf16) for 10 steps: tokens/s, model FLOP utilisation against 790
#      TFLOP/s bf16 (the step's FLOPs from the cost model), predicted vs
#      measured peak memory, exposed communication (world size 1), and
#      torch eager on the same GPU and config (bench/peer/gpu_eager.py: the
#      exporter's nanoGPT example in bf16) as the peer.
# `run` prints one JSON object and writes it to DIR/result.json; it exits
# non-zero when a check fails or no GPU is usable (with the reason).
#
# Environment: ZSHARD_BUILD_DIR (default build), GPU_CHECK_LAYERS,
# GPU_CHECK_DMODEL, GPU_CHECK_SEQ, GPU_CHECK_BATCH, GPU_CHECK_CHIP (sm_90).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-all}"
dir="${2:-$root/.gpu-check}"
layers="${GPU_CHECK_LAYERS:-24}"
dmodel="${GPU_CHECK_DMODEL:-1024}"
seq="${GPU_CHECK_SEQ:-1024}"
batch="${GPU_CHECK_BATCH:-8}"
chip="${GPU_CHECK_CHIP:-sm_90}"
say() { echo "gpu-check: $*" >&2; }

prepare() {
  local build="${ZSHARD_BUILD_DIR:-$root/build}" bin
  bin="$build/bin"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  say "building the compiler in $build"
  "$root/scripts/build.sh" >/dev/null
  say "building a CUDA runtime without MPI in $dir/rt-build"
  # With the requires-gpu tests that read no file of the build tree.
  local tests=(zshard-rt-cuda-self-test zshard-rt-gpu-cuda-device-test
               zshard-rt-gpu-cuda-attention-test zshard-rt-gpu-nccl-test)
  # No oneDNN: a bare CUDA machine lacks it, and bf16 products run on cuBLAS.
  cmake -S "$root/runtime" -B "$dir/rt-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DZSHARD_ENABLE_CUDA=ON -DZSHARD_ENABLE_MPI=OFF -DZSHARD_ENABLE_DNNL=OFF \
    -DZSHARD_RUNTIME_BUILD_TESTS=ON >/dev/null
  cmake --build "$dir/rt-build" -j "${ZSHARD_JOBS:-2}" --target zshard-run "${tests[@]}" \
    >/dev/null
  rm -rf "$dir/bundle" && mkdir -p "$dir/bundle/lib" "$dir/bundle/tests"
  cp "$dir/rt-build/tools/zshard-run/zshard-run" "$dir/bundle/"
  local test
  for test in "${tests[@]}"; do cp "$dir/rt-build/test/$test" "$dir/bundle/tests/"; done
  cp -L "$dir/rt-build/lib/libzshard_rt.so."*.*.* "$dir/bundle/lib/"
  (cd "$dir/bundle/lib" && for f in libzshard_rt.so.*.*.*; do
     ln -sf "$f" "${f%.*}"; ln -sf "$f" libzshard_rt.so; done)
  # What a bare CUDA machine lacks: OpenBLAS and its Fortran runtime (the
  # CUDA libraries come from its own CUDA or Python packages).
  ldd "$dir/rt-build/lib/libzshard_rt.so" |
    awk '/libopenblas|libgfortran|libquadmath/ {print $3}' |
    while read -r lib; do cp -L "$lib" "$dir/bundle/lib/"; done

  # The tiny step in f32 and bf16 (head size 16: the attention kernels'
  # general path), and in f32 with head size 64 (their specialised path).
  local tiny=(gpt --layers 2 --d-model 64 --heads 4 --vocab 128 --seq 32 --batch 4)
  local h64=(gpt --layers 2 --d-model 128 --heads 2 --vocab 128 --seq 64 --batch 4)
  local name
  for name in f32 bf16 h64-f32; do
    case $name in
      f32) "$bin/zshard-gen" "${tiny[@]}" --dtype f32 -o "$dir/tiny-$name.mlir" ;;
      bf16) "$bin/zshard-gen" "${tiny[@]}" --dtype bf16 -o "$dir/tiny-$name.mlir" ;;
      h64-f32) "$bin/zshard-gen" "${h64[@]}" --dtype f32 -o "$dir/tiny-$name.mlir" ;;
    esac
    "$bin/zshard-compile" "$dir/tiny-$name.mlir" -o "$dir/tiny-$name-cpu.zsa"
    "$bin/zshard-compile" "$dir/tiny-$name.mlir" --target=cuda --cuda-chip="$chip" \
      -o "$dir/tiny-$name-cuda.zsa"
    "$bin/zshard-run" "$dir/tiny-$name-cpu.zsa" --steps 10 --quiet \
      --log-json "$dir/tiny-$name-cpu.log" >/dev/null
  done
  say "compiling the benchmark config (d $dmodel, $layers layers, seq $seq, batch $batch, bf16)"
  "$bin/zshard-gen" gpt --layers "$layers" --d-model "$dmodel" --heads $((dmodel / 64)) \
    --vocab 32768 --seq "$seq" --batch "$batch" --dtype bf16 -o "$dir/bench.mlir"
  "$bin/zshard-compile" "$dir/bench.mlir" --target=cuda --cuda-chip="$chip" \
    -o "$dir/bench-cuda.zsa" --memory-json "$dir/bench.plan.json" \
    --cost-report --device h200 --link nvlink > "$dir/bench.cost.txt"
  cat > "$dir/config.json" <<EOF
{"layers": $layers, "d_model": $dmodel, "heads": $((dmodel / 64)), "vocab": 32768,
 "seq": $seq, "batch": $batch, "dtype": "bf16",
 "chip": "$chip", "commit": "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"}
EOF
  rm -f "$dir"/*.mlir
  rm -rf "$dir/rt-build"
  say "prepared $dir ($(du -sh "$dir" | cut -f1)); on the GPU machine: scripts/gpu-check.sh run $dir"
}

run() {
  dir="$(cd "$dir" && pwd)"
  # CUDA libraries: the machine's toolkit, else NVIDIA's Python packages.
  local libs="$dir/bundle/lib"
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    [[ -d $d ]] && libs="$libs:$d"
  done
  local site
  site="$(python3 -c 'import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]))' \
          2>/dev/null || true)"
  if [[ -n $site ]]; then
    for d in "$site"/nvidia/*/lib "$site"/nvidia/*/lib64; do
      [[ -d $d ]] && libs="$libs:$d"
    done
  fi
  export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export OPENBLAS_NUM_THREADS=1
  "$dir/bundle/zshard-run" --version >/dev/null
  python3 - "$dir" "$root" <<'EOF'
import json, os, statistics, subprocess, sys, time

d, root = sys.argv[1], sys.argv[2]
run = os.path.join(d, "bundle", "zshard-run")
result = {"checks": {}, "benchmark": None, "ok": True}

def losses(path):
    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]

def zrun(artifact, log, steps=10):
    p = subprocess.run([run, artifact, "--device", "cuda", "--steps", str(steps), "--quiet",
                        "--log-json", log], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip() or p.stdout.strip())
    return json.loads(p.stdout.strip().splitlines()[-1])

def check(name, body):
    """One check; a failure is recorded with its reason and the others run."""
    try:
        body()
    except Exception as e:  # a clear reason, not a trace
        result["ok"] = False
        result.setdefault("errors", {})[name] = str(e)[-4000:]

def tiny(name, tol):
    cpu = losses(os.path.join(d, f"tiny-{name}-cpu.log"))
    log = os.path.join(d, f"tiny-{name}-cuda.log")
    zrun(os.path.join(d, f"tiny-{name}-cuda.zsa"), log)
    gpu = losses(log)
    worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(gpu, cpu))
    ok = len(gpu) == len(cpu) == 10 and worst <= tol
    result["checks"][f"tiny_{name.replace('-', '_')}"] = {"max_rel_loss_diff": worst, "tolerance": tol,
                                         "cpu": cpu, "cuda": gpu, "ok": ok}
    result["ok"] &= ok

def benchmark():
    config = json.load(open(os.path.join(d, "config.json")))
    plan = json.load(open(os.path.join(d, "bench.plan.json")))
    cost = open(os.path.join(d, "bench.cost.txt")).read()
    flops = json.loads(cost[cost.index("{"):cost.rindex("}") + 1])["flops"]
    log = os.path.join(d, "bench-cuda.log")
    start = time.time()
    summary = zrun(os.path.join(d, "bench-cuda.zsa"), log)
    with open(log) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    ms = statistics.median(s["ms"] for s in steps[2:])  # after two warm-up steps
    tokens = config["batch"] * config["seq"]
    measured = max(r["total"] for r in summary["rank_peak_bytes"])
    result["benchmark"] = {
        "config": config,
        "step_ms_median": ms,
        "tokens_per_s": tokens / (ms / 1e3),
        "step_flops": flops,
        "mfu_vs_790_tflops": flops / (ms / 1e3) / 790e12,
        "peak_bytes_predicted": plan["peak_total"],
        "peak_bytes_measured": measured,
        "peak_rel_diff": (plan["peak_total"] - measured) / measured,
        "exposed_comm_s": summary.get("rank_exposed_comm_s"),
        "losses": [s["loss"] for s in steps],
        "wall_s": time.time() - start,
    }

def peer():
    """Torch eager on the same GPU and config (bench/peer/gpu_eager.py)."""
    config = json.load(open(os.path.join(d, "config.json")))
    args = [sys.executable, os.path.join(root, "bench", "peer", "gpu_eager.py")]
    for key in ("layers", "d_model", "heads", "vocab", "seq", "batch"):
        args += ["--" + key.replace("_", "-"), str(config[key])]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[-2000:] or p.stdout.strip())
    eager = json.loads(p.stdout.strip().splitlines()[-1])
    result["torch_eager"] = eager
    if result["benchmark"]:
        result["benchmark"]["vs_torch_eager"] = (result["benchmark"]["step_ms_median"]
                                                 / eager["step_ms_median"])

def gpu_tests():
    """The runtime's requires-gpu tests bundled by prepare: each must pass."""
    tests = sorted(os.listdir(os.path.join(d, "bundle", "tests")))
    outcome = {}
    for test in tests:
        p = subprocess.run([os.path.join(d, "bundle", "tests", test)], capture_output=True,
                           text=True, timeout=300)
        outcome[test] = "passed" if p.returncode == 0 else f"exit {p.returncode}"
        if p.returncode != 0:
            outcome[test + "_output"] = (p.stdout + p.stderr)[-2000:]
    ok = all(outcome[t] == "passed" for t in tests)
    result["checks"]["gpu_tests"] = {"tests": outcome, "ok": ok}
    result["ok"] &= ok

check("gpu_tests", gpu_tests)
for name, tol in (("f32", 1e-5), ("bf16", 1e-2), ("h64-f32", 1e-5)):
    check(f"tiny_{name.replace('-', '_')}", lambda: tiny(name, tol))
check("benchmark", benchmark)
check("torch_eager", peer)

text = json.dumps(result)
open(os.path.join(d, "result.json"), "w").write(text + "\n")
print(text)
sys.exit(0 if result["ok"] else 1)
EOF
}

case "$mode" in
  prepare) prepare ;;
  run) run ;;
  all) prepare && run ;;
  *) echo "usage: scripts/gpu-check.sh [all | prepare DIR | run DIR]" >&2; exit 2 ;;
esac
