#!/usr/bin/env python3
"""Where a compiled step's time goes, per op class, against the host's bandwidth.

Compiles a step (default: a zshard-gen GPT, d 256, 4 layers, 4 heads, vocab
256, seq 128, batch 8; or --step FILE, e.g. from zshard-export), maps each
outlined kernel (`<step>.compute.N`, --zshard-outline-compute-ops) to an op
class from its body, its calls' module paths and phases, and counts the bytes
each call reads and writes (its linalg op's memref operands; an init operand
the body reads counts twice). zshard-run then runs the step under
`perf record -e cpu-clock --call-graph dwarf`; every sample is charged to the
innermost frame that is a kernel, the runtime's sgemm (matmul) or attention
entry, a loop LLVM outlined from the step (scatters), or the step's glue
(memcpy/memset it calls: fill/copy; the rest: glue). Samples outside the step
(initialisation, logging) are left out, and so are the --warmup steps: a
run of --warmup + --steps steps is profiled and only the samples of its
last --steps steps count (by the samples' times and the logged step times),
so the figures are a steady-state step's (the first step also clears the
pages of its buffers).
A STREAM-like triad (bench/
stream_triad.c, compiled with -O3 -march=native in the same run) measures one
core's bandwidth with arrays in L2, in L3 and beyond the LLC; each class's
achieved GB/s is printed with its fraction of the last (the host's memory
bandwidth) and of the L3 figure. From `objdump -d` of step.so, the FP
arithmetic instructions of each class's kernels are counted as scalar (ss/sd)
or packed by register width (xmm/ymm/zmm), statically and weighted by each
kernel's samples. Prints one JSON object.

usage: op_classes.py --bin BUILD/bin [--step FILE] [--layers 4] [--d-model 256]
                     [--heads 4] [--vocab 256] [--seq 128] [--batch 8]
                     [--steps 10] [--warmup 1] [--period-us 250] [--stream-mb 1536]
                     [--no-perf] [--keep DIR]
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile

CLASSES = ["matmul", "attention", "layernorm/rmsnorm", "softmax/loss", "gelu/silu",
           "residual/elementwise", "adamw/optimizer", "embedding/scatter", "fill/copy",
           "glue", "other"]

ELEMENT_BYTES = {"f64": 8, "f32": 4, "bf16": 2, "f16": 2, "i64": 8, "i32": 4, "i8": 1,
                 "i1": 1, "index": 8}


def memref_bytes(text):
    """Bytes of `memref<AxBxf32>` (a static shape)."""
    m = re.match(r"memref<([^,>]*)", text.strip())
    if not m:
        return 0
    parts = m.group(1).split("x")
    count = 1
    for dim in parts[:-1]:
        count *= int(dim) if dim.isdigit() else 0
    return count * ELEMENT_BYTES.get(parts[-1], 4)


def split_types(text):
    """Splits `memref<..>, memref<..>` at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def strip_locs(line):
    return re.sub(r'\s*loc\((?:[^()]|\([^()]*\))*\)', "", line)


def parse_functions(text):
    """Outlined kernels: name -> body lines (without locations)."""
    funcs, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r"  func\.func private @(\S+\.compute\.\d+)\(", line)
        if m:
            name, body = m.group(1), []
            continue
        if name:
            if line.startswith("  }"):
                funcs[name] = body
                name = None
            else:
                body.append(strip_locs(line))
    return funcs


def kernel_bytes(body):
    """Bytes the linalg op of an outlined body reads and writes per call."""
    text = "\n".join(body)
    m = re.search(r"linalg\.(\w+).*?(?:ins\((.*?) : (.*?)\) )?outs\((.*?) : (.*?)\)", text)
    if not m:
        return 0
    ins = split_types(m.group(3)) if m.group(3) else []
    outs = split_types(m.group(5))
    total = sum(memref_bytes(t) for t in ins)
    block = re.search(r"\^bb0\((.*?)\):", text)
    names = [a.split(":")[0].strip() for a in block.group(1).split(",")] if block else []
    out_names = names[len(names) - len(outs):] if names else []
    for i, t in enumerate(outs):
        size = memref_bytes(t)
        read = i < len(out_names) and re.search(re.escape(out_names[i]) + r"\b",
                                                text[block.end():])
        total += size * (2 if read else 1)
    return total


def classify(body, paths, phases, module_classes):
    """The op class of one outlined kernel."""
    text = "\n".join(body)
    ops = set(re.findall(r"\b((?:linalg|arith|math|memref)\.\w+)", text))
    compute = {o for o in ops if o.startswith(("arith.", "math.")) and o not in
               ("arith.constant", "arith.cmpi", "arith.select", "arith.index_cast")}
    if ops & {"linalg.fill"} and not compute:
        return "fill/copy"
    if (ops & {"linalg.copy", "linalg.transpose", "linalg.generic"}) and not compute:
        return "fill/copy"
    if "optimizer" in phases:
        return "adamw/optimizer"
    path = collections.Counter(paths).most_common(1)[0][0] if paths else ""
    parts = path.split(".") if path else []
    owners = [module_classes.get(".".join(parts[:i]), "") for i in range(len(parts), 0, -1)]
    owner = owners[0] if owners else ""
    if not parts or parts[-1] in ("lm_head", "loss", "transformer", "model"):
        return "softmax/loss"
    if "memref.load" in ops or (parts and parts[-1] in ("wte", "wpe", "embed_tokens",
                                                       "tok_embeddings")) \
            or "Embedding" in owner:
        return "embedding/scatter"
    if "Norm" in owner or (parts and re.match(r"(ln|norm|.*_norm|.*layernorm)", parts[-1])):
        return "layernorm/rmsnorm"
    if re.search(r"memref<[\dx]*xi(32|64)>", text):
        return "softmax/loss"
    if "0.797884583" in text or "4.471500e-02" in text or "MLP" in owner or \
            (parts and parts[-1] in ("mlp", "act", "act_fn", "gelu")):
        return "gelu/silu"
    if "Attention" in owner or (parts and parts[-1] in ("attn", "self_attn")):
        return "attention"
    return "residual/elementwise"


def parse_step(text):
    """Calls of kernels and runtime entries in the step, with bytes."""
    calls = collections.defaultdict(lambda: {"calls": 0, "paths": [], "phases": set()})
    runtime = collections.defaultdict(lambda: {"calls": 0, "bytes": 0, "flops": 0})
    copies = {"calls": 0, "bytes": 0}
    for line in text.splitlines():
        m = re.search(r"call @(\S+\.compute\.\d+)\(", line)
        if m:
            entry = calls[m.group(1)]
            entry["calls"] += 1
            phase = re.search(r'zshard\.phase = #zshard\.phase<(\w+)>', line)
            if phase:
                entry["phases"].add(phase.group(1))
            loc = re.search(r'loc\("([^"]*)"', line)
            entry["paths"].append(loc.group(1) if loc else "")
            continue
        m = re.search(r"call @(zshard_rt_step_\w+)\((.*?)\)", line)
        if m:
            args = [a.strip() for a in m.group(2).split(",")]
            vals = []
            for a in args:
                c = re.match(r"%c(-?\d+)_i(?:32|64)(?:_\d+)?$", a)
                vals.append(int(c.group(1)) if c else None)
            r = runtime[m.group(1)]
            r["calls"] += 1
            if m.group(1).startswith("zshard_rt_step_sgemm") and None not in vals[2:6]:
                b, mm, n, k = vals[2:6]
                r["flops"] += 2 * b * mm * n * k
                r["bytes"] += 4 * b * (mm * k + k * n + 2 * mm * n)
            elif m.group(1).startswith("zshard_rt_step_attention") and None not in vals[:5]:
                b, h, kv, t, d = vals[:5]
                q, kvb, lse = b * h * t * d, b * kv * t * d, b * h * t
                if m.group(1).endswith("fwd"):
                    r["bytes"] += 4 * (2 * q + 2 * kvb + lse)
                    r["flops"] += 2 * b * h * t * t * d  # causal: half of 2 products
                else:
                    r["bytes"] += 4 * (3 * q + 4 * kvb + lse + q)
                    r["flops"] += 5 * b * h * t * t * d
            continue
        m = re.search(r"memref\.copy %\S+, %\S+ : (memref<[^>]*>) to", line)
        if m:
            copies["calls"] += 1
            copies["bytes"] += 2 * memref_bytes(m.group(1))
    return calls, runtime, copies


FP_RE = re.compile(r"^v?(add|sub|mul|div|max|min|sqrt|rsqrt14|rcp14|rsqrt|rcp|"
                   r"f?n?m(?:add|sub)\d*|fmaddsub\d*|fmsubadd\d*|round|rndscale|getexp|"
                   r"getmant|scalef|cmp[a-z]*)(p|s)(s|d|h)$")


def simd_counts(so):
    """Per function of `so`: FP arithmetic instructions by kind."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", so], check=True,
                         capture_output=True, text=True).stdout
    counts, name = {}, None
    for line in out.splitlines():
        m = re.match(r"[0-9a-f]+ <(.*)>:$", line)
        if m:
            name = m.group(1)
            counts[name] = collections.Counter()
            continue
        if not name or "\t" not in line:
            continue
        fields = line.split("\t")
        insn = fields[-1].split(None, 1) if fields[-1].strip() else []
        if not insn:
            continue
        m = FP_RE.match(insn[0])
        if not m:
            continue
        operands = insn[1] if len(insn) > 1 else ""
        if m.group(2) == "s":
            counts[name]["scalar"] += 1
        elif "zmm" in operands:
            counts[name]["zmm"] += 1
        elif "ymm" in operands:
            counts[name]["ymm"] += 1
        else:
            counts[name]["xmm"] += 1
    return counts


def simd_summary(counter):
    total = sum(counter.values())
    packed = total - counter["scalar"]
    return {"fp_instructions": total, "scalar": counter["scalar"], "xmm": counter["xmm"],
            "ymm": counter["ymm"], "zmm": counter["zmm"],
            "packed_fraction": round(packed / total, 4) if total else None}


def stream(work, stream_mb):
    """Triad GB/s, one core, arrays in L2, in L3, beyond the LLC."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stream_triad.c")
    exe = os.path.join(work, "stream_triad")
    subprocess.run(["cc", "-O3", "-march=native", "-o", exe, src], check=True)
    result = {"kernel": "a[i] = b[i] + s * c[i], f32, 12 B/element, -O3 -march=native"}
    for key, total_bytes, reps in (("l2", 1 << 20, 3000), ("l3", 64 << 20, 30),
                                   ("dram", stream_mb << 20, 6)):
        n = total_bytes // 12
        out = subprocess.run([exe, str(n), str(reps)], check=True, capture_output=True,
                             text=True).stdout
        result[key + "_gbps"] = json.loads(out)["best_gbps"]
        result[key + "_bytes"] = 12 * n
    return result


def perf_samples(args, artifact, work):
    """Samples of the step's last --steps steps per charged frame, and their
    step times. One run of --warmup + --steps steps is profiled; a sample
    counts when it falls after the warmup, found from the sample times
    (perf's clock) and the logged step times: the steady-state steps are the
    last sum(their ms) before the step's last sample."""
    data = os.path.join(work, "perf.data")
    log = os.path.join(work, "log.jsonl")
    period_ns = int(args.period_us * 1000)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads))
    steps = args.warmup + args.steps
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-c", str(period_ns),
                    "--call-graph", "dwarf,16384", "-o", data, "--",
                    os.path.join(args.bin, "zshard-run"), artifact, "--steps",
                    str(steps), "--threads", str(args.threads), "--log-json", log,
                    "--quiet"], check=True, capture_output=True, env=env)
    script = subprocess.run(["perf", "script", "-i", data, "-F", "time,ip,sym,dso"],
                            check=True, capture_output=True, text=True).stdout
    with open(log) as f:
        ms = [json.loads(line)["ms"] for line in f if line.strip()][args.warmup:]
    samples = []  # (time, target or None outside the step, leaf)
    for sample in script.split("\n\n"):
        lines = sample.strip().splitlines()
        when = re.match(r"\s*(\d+\.\d+):", lines[0]) if lines else None
        frames = []
        for line in lines:
            m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", line)
            if m:
                frames.append((re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)), m.group(2)))
        if not frames or not when:
            continue
        time = float(when.group(1))
        if not any(dso.endswith("step.so") for _, dso in frames):
            # oneDNN's matmul runs JIT code without unwind tables (perf
            # names it by its /tmp/perf-PID.map): the stack ends there.
            # Nothing else in zshard-run generates code at run time.
            leaf_dso = frames[0][1]
            jit = re.search(r"/perf-\d+\.map$", leaf_dso) or "libdnnl" in leaf_dso
            samples.append((time, "matmul" if jit else None, frames[0][0]))
            continue
        leaf = frames[0][0]
        target = "glue"
        for sym, dso in frames:
            if ".compute." in sym:
                target = sym
                break
            if sym.startswith(("zshard_rt_step_sgemm", "zshard_rt_step_gemm")):
                target = "matmul"
                break
            if sym.startswith("zshard_rt_step_attention"):
                target = "attention"
                break
            if ".zshard.loop" in sym:
                target = "embedding/scatter"
                break
            if dso.endswith("step.so"):
                if re.match(r"_*(memcpy|memmove|memset)", leaf) or "memcpy" in leaf \
                        or "memset" in leaf or "memmove" in leaf:
                    target = "fill/copy"
                break
        samples.append((time, target, leaf))
    in_step = [t for t, target, _ in samples if target]
    cut = (max(in_step) - sum(ms) / 1e3) if in_step else 0.0
    charged = collections.Counter()
    outside, leaves = 0, collections.Counter()
    for time, target, leaf in samples:
        if time < cut:
            continue
        if not target:
            outside += 1
            continue
        charged[target] += 1
        if target == "glue":
            leaves[leaf] += 1
    return charged, outside, leaves, period_ns, ms


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True, help="the build's bin/ directory")
    p.add_argument("--step", help="a step to compile (default: zshard-gen gpt)")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=10, help="steps profiled")
    p.add_argument("--warmup", type=int, default=1,
                   help="steps run first and left out of the profile (at least 0)")
    p.add_argument("--threads", type=int, default=1, help="BLAS threads")
    p.add_argument("--period-us", type=float, default=250.0, help="cpu-clock sample period")
    p.add_argument("--stream-mb", type=int, default=1536,
                   help="triad arrays in all beyond the LLC (MiB)")
    p.add_argument("--no-perf", action="store_true", help="no profile (classes, bytes, SIMD)")
    p.add_argument("--keep", help="keep the step, artifact and profile in this directory")
    args = p.parse_args()
    if args.warmup < 0 or args.steps < 1:
        p.error("--warmup must be at least 0 and --steps at least 1")

    work = args.keep or tempfile.mkdtemp(prefix="op_classes.")
    os.makedirs(work, exist_ok=True)
    try:
        report = run(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=1))


def run(args, work):
    tool = lambda name: os.path.join(args.bin, name)
    step = args.step
    if not step:
        step = os.path.join(work, "gpt.mlir")
        subprocess.run([tool("zshard-gen"), "gpt", "--layers", str(args.layers), "--d-model",
                        str(args.d_model), "--heads", str(args.heads), "--vocab",
                        str(args.vocab), "--seq", str(args.seq), "--batch", str(args.batch),
                        "-o", step], check=True)
    artifact = os.path.join(work, "step.zsa")
    subprocess.run([tool("zshard-compile"), step, "-o", artifact], check=True)
    plan = os.path.join(work, "plan.mlir")
    subprocess.run([tool("zshard-compile"), step, "--compile-to=plan", "-o", plan,
                    "--mlir-print-debuginfo", "--mlir-print-local-scope"], check=True)
    # The outlining zshard-lower-to-llvm runs first: the same kernels and names
    # as in step.so (checked below against its symbols).
    outlined = subprocess.run([tool("zshard-opt"), plan, "--zshard-outline-compute-ops",
                               "--mlir-print-debuginfo", "--mlir-print-local-scope"],
                              check=True, capture_output=True, text=True).stdout
    with open(os.path.join(work, "outlined.mlir"), "w") as f:
        f.write(outlined)
    module_classes = dict(re.findall(r'([\w.]+) = "(\w+)"', (re.search(
        r"zshard\.module_classes = \{([^}]*)\}", outlined) or re.match("", "")).group(0)))
    funcs = parse_functions(outlined)
    calls, runtime, copies = parse_step(outlined)
    so = os.path.join(artifact, "step.so")
    counts = simd_counts(so)
    missing = sorted(set(funcs) - set(counts))

    kernels = {}
    for name, body in funcs.items():
        site = calls.get(name, {"calls": 0, "paths": [], "phases": set()})
        cls = classify(body, site["paths"], site["phases"], module_classes)
        kernels[name] = {"class": cls, "calls": site["calls"],
                         "bytes_per_call": kernel_bytes(body),
                         "phases": sorted(site["phases"]),
                         "path": collections.Counter(site["paths"]).most_common(1)[0][0]
                         if site["paths"] else None,
                         "simd": simd_summary(counts.get(name, collections.Counter())),
                         "ms_per_step": None}

    classes = {c: {"kernels": 0, "calls": 0, "bytes_per_step": 0} for c in CLASSES}
    for k in kernels.values():
        c = classes[k["class"]]
        c["kernels"] += 1
        c["calls"] += k["calls"]
        c["bytes_per_step"] += k["calls"] * k["bytes_per_call"]
    for name, r in runtime.items():
        cls = "matmul" if "gemm" in name else "attention" if "attention" in name else None
        if cls:
            classes[cls]["calls"] += r["calls"]
            classes[cls]["bytes_per_step"] += r["bytes"]
            classes[cls]["flops_per_step"] = classes[cls].get("flops_per_step", 0) + r["flops"]
    classes["fill/copy"]["calls"] += copies["calls"]
    classes["fill/copy"]["bytes_per_step"] += copies["bytes"]

    report = {"bench": "op_classes", "step": args.step or "zshard-gen gpt",
              "config": None if args.step else {
                  "layers": args.layers, "d_model": args.d_model, "heads": args.heads,
                  "vocab": args.vocab, "seq": args.seq, "batch": args.batch},
              "blas_threads": args.threads, "kernels_outlined": len(funcs),
              "kernels_missing_in_so": missing, "stream": stream(work, args.stream_mb)}
    host = report["stream"]["dram_gbps"]
    l3 = report["stream"]["l3_gbps"]

    profile = None
    sampled = None
    if args.no_perf:
        report["profile_error"] = "--no-perf"
    elif not shutil.which("perf"):
        report["profile_error"] = "no perf on PATH"
    else:
        try:
            sampled = perf_samples(args, artifact, work)
        except subprocess.CalledProcessError as error:
            report["profile_error"] = "perf failed: " + (error.stderr or b"").decode(
                errors="replace").strip()[-300:]
    if sampled:
        charged, outside, leaves, period_ns, ms = sampled
        per_step = period_ns / 1e6 / args.steps
        class_samples = collections.Counter()
        for k in kernels.values():
            k["ms_per_step"] = 0.0
        for target, n in charged.items():
            cls = kernels[target]["class"] if target in kernels else target
            class_samples[cls] += n
            if target in kernels:
                kernels[target]["ms_per_step"] = round(n * per_step, 3)
        step_ms = sum(charged.values()) * per_step
        for cls, c in classes.items():
            c["ms_per_step"] = round(class_samples[cls] * per_step, 3)
            c["share"] = round(class_samples[cls] / max(1, sum(charged.values())), 4)
            sec = class_samples[cls] * per_step / 1e3
            c["gbps"] = round(c["bytes_per_step"] / sec / 1e9, 2) if sec > 0 and \
                c["bytes_per_step"] else None
            c["fraction_of_host_bw"] = round(c["gbps"] / host, 3) if c["gbps"] else None
            c["fraction_of_l3_bw"] = round(c["gbps"] / l3, 3) if c["gbps"] else None
            if "flops_per_step" in c and sec > 0:
                c["gflops"] = round(c["flops_per_step"] / sec / 1e9, 2)
        timed = sorted(ms)
        profile = {"method": "perf cpu-clock, dwarf call graphs, innermost kernel frame",
                   "period_us": args.period_us, "steps": args.steps,
                   "warmup_steps_left_out": args.warmup,
                   "samples_in_step": sum(charged.values()), "samples_outside_step": outside,
                   "profiled_ms_per_step": round(step_ms, 3),
                   "logged_step_ms_median": round(timed[len(timed) // 2], 3) if timed else None,
                   "non_matmul_share": round(1 - classes["matmul"]["share"], 4),
                   "non_blas_share": round(1 - classes["matmul"]["share"] -
                                           classes["attention"]["share"], 4),
                   "glue_top_leaves": dict(leaves.most_common(6))}
    report["profile"] = profile
    for cls, c in classes.items():
        members = [k for k in kernels.values() if k["class"] == cls]
        static = collections.Counter()
        weighted = [0.0, 0.0]
        for k in members:
            s = k["simd"]
            static.update({key: s[key] for key in ("scalar", "xmm", "ymm", "zmm")})
            if s["fp_instructions"] and k.get("ms_per_step"):
                weighted[0] += k["ms_per_step"] * s["packed_fraction"]
                weighted[1] += k["ms_per_step"]
        c["simd"] = simd_summary(static)
        c["simd"]["packed_fraction_time_weighted"] = round(weighted[0] / weighted[1], 4) \
            if weighted[1] else None
    classes["matmul"]["simd"]["note"] = "OpenBLAS (not in step.so)"
    report["classes"] = classes
    report["kernels"] = dict(sorted(kernels.items(),
                                    key=lambda kv: int(kv[0].rsplit(".", 1)[1])))
    return report


if __name__ == "__main__":
    main()
