// RUN: zshard-compile --help | FileCheck %s
// RUN: zshard-compile --help | sed -n '121,$p' | wc -c | FileCheck %s --check-prefix=LENGTH
// RUN: not script -qec zshard-compile /dev/null | FileCheck %s --check-prefix=TERMINAL
// RUN: zshard-gen mlp --widths 4,8,2 --batch 2 -o %t.mlir
// RUN: zshard-compile --emit=memory-plan < %t.mlir | FileCheck %s --check-prefix=STDIN
// RUN: zshard-compile - --emit=memory-plan < %t.mlir | FileCheck %s --check-prefix=STDIN
// RUN: zshard-gen --help | FileCheck %s --check-prefix=GEN

// Tests that zshard-compile's --help lists its own options, by category,
// and none of LLVM's or MLIR's, in at most 120 lines; that with no input file and a terminal on stdin it
// prints its usage and fails instead of waiting for a step, while a step
// piped to it (with or without `-`) is read; and that zshard-gen's --help
// is its own usage.
// CHECK:     USAGE: zshard-compile [options] <training step .mlir, - for stdin>
// CHECK-NOT: print-after-all
// CHECK-NOT: x86-asm-syntax
// CHECK-NOT: --mlir-
// CHECK:     Code generation:
// CHECK:     -mcpu=<cpu>
// CHECK:     Input and output:
// CHECK:     --emit=<value>
// CHECK:     =sharded-mlir
// CHECK:     Sharding (of an unsharded step):
// CHECK:     --prefetch=<none|KEY=VALUE,...>
// CHECK:     --ranks=<N>
// CHECK:     --remat=<none|all|every=K|selective|budget=BYTES>
// CHECK:     --strategy=<value>
// CHECK:     =full_shard
// CHECK: --wrap=<transformer=PATTERN|CLASS,...|size=MIN_PARAMS>
// CHECK-NOT: print-after-all
// CHECK-NOT: x86-asm-syntax
// CHECK-NOT: --mlir-

// LENGTH: {{^0$}}

// TERMINAL:      usage: zshard-compile STEP.mlir [--strategy STRATEGY --ranks N] [-o STEP.zsa]
// TERMINAL-NEXT: zshard-compile - < STEP.mlir
// TERMINAL-NEXT: (zshard-compile --help lists the options)

// STDIN: memory plan per rank of <stdin>:

// GEN:     usage:
// GEN:     zshard-gen gpt --layers L --d-model D --heads H --vocab V --seq T --batch B
// GEN:     --dtype f32|bf16
// GEN-NOT: print-after-all
// GEN-NOT: --mlir-
