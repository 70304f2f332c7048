// Tests that module paths (name locations) survive zshard-opt's output by
// default: piped into zshard-opt again, the contract still holds and the
// passes that read the paths (remat) still find the blocks; piped into
// zshard-compile, the step compiles. With the paths gone (printed with
// --mlir-print-debuginfo=false, or by plain mlir-opt, which reads the
// zshard.adamw updates only in generic form as unregistered ops), the
// contract verifier and remat each report one error, on the first op, with
// the fix.

// RUN: zshard-gen gpt --layers 2 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 1 -o %t.mlir
// RUN: zshard-opt %t.mlir | zshard-opt --zshard-verify-contract --zshard-remat | FileCheck %s
// RUN: zshard-gen mlp --widths 4,6,3 --batch 2 \
// RUN:   | zshard-opt --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard \
// RUN:   | zshard-compile - --emit=memory-plan -o /dev/null

// RUN: zshard-opt %t.mlir --mlir-print-debuginfo=false | FileCheck %s --check-prefix=NOLOC
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo=false \
// RUN:   | not zshard-opt --zshard-verify-contract 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LOST --implicit-check-not=error:
// RUN: zshard-opt %t.mlir --mlir-print-op-generic | mlir-opt --allow-unregistered-dialect \
// RUN:   | not zshard-opt --zshard-verify-contract 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LOST --implicit-check-not=error:
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo=false \
// RUN:   | not zshard-opt --zshard-remat 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMAT --implicit-check-not=error:
// RUN: zshard-gen mlp --widths 4,6,3 --batch 2 \
// RUN:   | zshard-opt --mlir-print-debuginfo=false --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard \
// RUN:   | not zshard-compile - --emit=memory-plan -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COMPILE

// Paths are printed inline, on every op, the checkpointed blocks' clones too.
// CHECK-LABEL: func.func @train_step
// CHECK:       linalg.matmul {{.*}} loc("h.0.attn.c_attn")
// CHECK-DAG:   {zshard.remat = "h.0"} {{.*}} loc("h.0.{{.*}}")
// CHECK-DAG:   {zshard.remat = "h.1"} {{.*}} loc("h.1.{{.*}}")
// CHECK:       } loc(""("zshard-gen":0:0))

// NOLOC-NOT: loc(

// LOST: {{^}}<stdin>:{{[0-9]+}}:{{[0-9]+}}: error: op 'tensor.empty' has no module path (nor do {{[0-9]+}} more ops); module paths are name locations such as loc("h.0.attn"), which MLIR prints only with debug info: print the step with zshard-opt (it keeps them by default) or with --mlir-print-debuginfo{{$}}

// REMAT: {{^}}<stdin>:{{[0-9]+}}:{{[0-9]+}}: error: zshard-remat: op 'tensor.empty' has no module path (nor do {{[0-9]+}} more ops); module paths are name locations such as loc("h.0.attn"), which MLIR prints only with debug info: print the step with zshard-opt (it keeps them by default) or with --mlir-print-debuginfo{{$}}

// COMPILE: {{^}}<stdin>:{{[0-9]+}}:{{[0-9]+}}: error: op 'shard.process_multi_index' has no module path (nor do {{[0-9]+}} more ops); {{.*}}{{$}}
// COMPILE-NOT: has no module path
