// RUN: zshard-gen mlp --widths 4,6,3 --batch 2 \
// RUN:   | zshard-opt --mlir-print-debuginfo --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard -o %t.mlir
// RUN: zshard-compile %t.mlir --emit=memory-plan --cost-report --device a100 --link nvlink --memory-json %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: zshard-gen gpt --preset llama2-7b --layers 1 --dtype bf16 | zshard-compile - --emit=memory-plan | FileCheck %s --check-prefix=PRESET
// RUN: not zshard-compile %t.mlir --cost-report --device tpu 2>&1 | FileCheck %s --check-prefix=BADDEV
// RUN: zshard-gen gpt --preset llama2-7b --layers 1 | not zshard-compile - -o %t.zsa 2>&1 | FileCheck %s --check-prefix=SHAPES

// Tests zshard-compile's reports on a 2-layer MLP, full_shard over 2 ranks
// (fc.0: 30 elements, 15 per rank; fc.1: 21 padded to 22, 11 per rank):
// the cost model's figures for 5 collectives (2 forward gathers, 1
// backward gather, 2 reduce-scatters), then the memory table: the runtime
// holds the parameter shards in and out, 2 x (15 + 11) x 4 = 208 bytes, and
// the two moment shards in and out, 416 bytes; the step's largest gathered
// buffer is fc.0's 30 floats (120 bytes), its reduced gradient shards 26
// floats (104 bytes).
// CHECK: cost model of {{.*}} (a100, nvlink): {"collectives":5,"communication_s":{{.*}},"compute_s":{{.*}},"exposed_communication_s":{{.*}},"flops":{{.*}},"step_s":{{.*}}}
// CHECK: memory plan per rank of
// CHECK-NEXT: category (bytes)  held by runtime peak at total peak
// CHECK-NEXT: parameters 208 208 208
// CHECK-NEXT: gradients 0 104
// CHECK-NEXT: optimizer_state 416 416 416
// CHECK-NEXT: activations
// CHECK-NEXT: communication 0 120
// CHECK-NEXT: other
// CHECK-NEXT: total
// CHECK-NEXT: peak per rank: {{[0-9.]+}} KiB
// JSON: "peak":{"activations":{{[0-9]+}},"communication":120,"gradients":104,"optimizer_state":416,"other":{{[0-9]+}},"parameters":208}

// A shapes-only preset (one LLaMA-2-7B-sized block, bf16) is planned without
// code generation: parameters in and out, 2 x 2 bytes x (4096 x 32000 x 2 +
// 4096 x 4096 (wpe) + one block), and f32 optimizer state.
// PRESET: parameters {{[0-9]+}} {{[0-9]+}} {{[0-9]+}}
// PRESET: peak per rank: {{[0-9.]+}} GiB

// BADDEV: zshard-compile: unknown --device 'tpu'; presets: a100, h100, h200, cpu
// SHAPES: is a shapes-only step (zshard.shapes_only): it is meant for planning, not for running (use --emit=memory-plan)
