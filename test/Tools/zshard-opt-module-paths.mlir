// Tests that module paths are attributes (zshard.path) that survive any
// printing: without debug info, and through plain mlir-opt (which reads the
// zshard.adamw updates only in generic form, as unregistered ops). Piped into
// zshard-opt again, the contract still holds and zshard-remat still finds the
// blocks; piped into zshard-compile, the step compiles.

// RUN: zshard-gen gpt --layers 2 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 1 -o %t.mlir
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo=false | FileCheck %s --check-prefix=NOLOC
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo=false | zshard-opt --zshard-verify-contract --zshard-remat --mlir-print-debuginfo=false | FileCheck %s
// RUN: zshard-opt %t.mlir --mlir-print-op-generic --mlir-print-debuginfo=false \
// RUN:   | mlir-opt --allow-unregistered-dialect \
// RUN:   | zshard-opt --zshard-verify-contract --zshard-remat --mlir-print-debuginfo=false | FileCheck %s
// RUN: zshard-gen mlp --widths 4,6,3 --batch 2 | zshard-opt --mlir-print-debuginfo=false \
// RUN:   | zshard-opt --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard --mlir-print-debuginfo=false \
// RUN:   | zshard-compile - --emit=memory-plan -o /dev/null

// NOLOC-NOT: loc(
// NOLOC: linalg.matmul {zshard.path = "h.0.attn.c_attn"}
// NOLOC-NOT: loc(

// The checkpointed blocks' clones keep their paths.
// CHECK-LABEL: func.func @train_step
// CHECK:       linalg.matmul {zshard.path = "h.0.attn.c_attn"}
// CHECK-DAG:   {zshard.path = "h.0.{{[a-z_0-9.]+}}", zshard.remat = "h.0"}
// CHECK-DAG:   {zshard.path = "h.1.{{[a-z_0-9.]+}}", zshard.remat = "h.1"}
