// RUN: zshard-gen mlp --widths 4,6,3 --batch 2 \
// RUN:   | zshard-opt --mlir-print-debuginfo --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard -o %t.mlir
// RUN: zshard-compile %t.mlir --emit=memory-plan --cost-report --device a100 --link nvlink --memory-json %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo --zshard-offload | zshard-compile - --emit=memory-plan --cost-report --device a100 --link nvlink | FileCheck %s --check-prefix=OFFLOAD
// RUN: zshard-gen gpt --preset llama2-7b --layers 1 --dtype bf16 | zshard-compile - --emit=memory-plan | FileCheck %s --check-prefix=PRESET
// RUN: not zshard-compile %t.mlir --cost-report --device tpu 2>&1 | FileCheck %s --check-prefix=BADDEV --implicit-check-not=error
// RUN: zshard-compile --help | FileCheck %s --check-prefix=PRESETS
// RUN: zshard-gen gpt --preset llama2-7b --layers 1 | not zshard-compile - -o %t.zsa 2>&1 | FileCheck %s --check-prefix=SHAPES

// Tests zshard-compile's reports on a 2-layer MLP, full_shard over 2 ranks
// (fc.0: 30 elements, 15 per rank; fc.1: 21 padded to 22, 11 per rank):
// the cost model's figures for 5 collectives (2 forward gathers, 1
// backward gather, 2 reduce-scatters), then the memory table: the runtime
// holds the parameter shards once, (15 + 11) x 4 = 104 bytes, and the two
// moment shards, 208 bytes, because the optimizer writes their updates in
// place (zshard-update-in-place); the step's largest gathered buffer is
// fc.0's 30 floats (120 bytes), its reduced gradient shards 26 floats (104
// bytes).
// CHECK: cost model of {{.*}} (a100, nvlink): {"collectives":5,"communication_s":{{.*}},"compute_s":{{.*}},"exposed_communication_s":{{.*}},"flops":{{.*}},"offload_s":0,"step_s":{{.*}}}
// CHECK: memory plan per rank of
// CHECK-NEXT: category (bytes)  held by runtime peak at total peak
// CHECK-NEXT: parameters 104 104 104
// CHECK-NEXT: gradients 0 104
// CHECK-NEXT: optimizer_state 208 208 208
// CHECK-NEXT: activations
// CHECK-NEXT: communication 0 120
// CHECK-NEXT: other
// CHECK-NEXT: host_offload 0 0 0
// CHECK-NEXT: buffers 0 0 0
// CHECK-NEXT: total [[TOTAL:[0-9]+]]
// CHECK-NEXT: peak per rank: {{[0-9.]+}} B
// JSON: "peak":{"activations":{{[0-9]+}},"buffers":0,"communication":120,"gradients":104,"host_offload":0,"optimizer_state":208,"other":{{[0-9]+}},"parameters":104}

// With the optimizer state offloaded (zshard-offload) the moment shards are
// held in the host pool, outside the device peak, which drops by their 208
// bytes; the cost model charges moving them over the A100's PCIe link twice
// (2 x 208 B / 25 GB/s = 16.6 ns).
// OFFLOAD: "offload_s":1.66{{[0-9]*}}e-08
// OFFLOAD: optimizer_state 0 0 0
// OFFLOAD: host_offload 208 208 208
// OFFLOAD-NEXT: buffers 0 0 0
// OFFLOAD-NEXT: total 576
// OFFLOAD-NEXT: peak per rank: 576.00 B
// OFFLOAD-NEXT: host pool per rank (offloaded, not in the peak): 208.00 B

// A shapes-only preset (one LLaMA-2-7B-sized block, bf16) is planned without
// code generation: parameters in and out, 2 x 2 bytes x (4096 x 32000 x 2 +
// 4096 x 4096 (wpe) + one block), and f32 optimizer state.
// PRESET: parameters {{[0-9]+}} {{[0-9]+}} {{[0-9]+}}
// PRESET: peak per rank: {{[0-9.]+}} GiB

// The presets are an enum option: an unknown one is refused while the
// command line is parsed, and --help lists each with its figures.
// BADDEV: {{^}}zshard-compile: for the --device option: 'tpu' is not one of a100, h100, h200, cpu{{$}}
// PRESETS: --device=<value>
// PRESETS-NEXT: =a100 {{.*}}A100 SXM: 19.5 TFLOP/s f32, 312 bf16, 2.0 TB/s, host 25 GB/s
// PRESETS-NEXT: =h100
// PRESETS-NEXT: =h200
// PRESETS-NEXT: =cpu
// PRESETS: --link=<value>
// PRESETS-NEXT: =nvlink
// PRESETS-NEXT: =ib {{.*}}InfiniBand NDR 400 Gbit/s: 50 GB/s, 5 us
// PRESETS-NEXT: =eth100
// PRESETS-NEXT: =eth10
// SHAPES: is a shapes-only step (zshard.shapes_only): it is meant for planning, not for running (use --emit=memory-plan)
