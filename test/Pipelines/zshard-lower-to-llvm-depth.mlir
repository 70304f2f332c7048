// RUN: zshard-gen gpt --layers 1 --d-model 32 --heads 2 --vocab 64 --seq 8 --batch 2 -o %t1.mlir
// RUN: zshard-gen gpt --layers 3 --d-model 32 --heads 2 --vocab 64 --seq 8 --batch 2 -o %t3.mlir
// RUN: zshard-opt %t1.mlir --zshard-lower-to-llvm -o %t1.lowered
// RUN: zshard-opt %t3.mlir --zshard-lower-to-llvm --mlir-print-local-scope -o %t3.lowered
// RUN: grep -c "llvm.func @train_step.compute" %t1.lowered > %t1.count
// RUN: grep -c "llvm.func @train_step.compute" %t3.lowered > %t3.count
// RUN: diff %t1.count %t3.count
// RUN: FileCheck %s < %t3.lowered

// Tests that the blocks of a GPT step compile to one set of functions: the
// 3-layer step defines exactly as many outlined functions as the 1-layer
// step (the diff of their counts), and the same op of each block calls the
// same function.
// CHECK: llvm.call @[[F:train_step.compute.[0-9]+]]({{.*}} loc("h.0.mlp")
// CHECK: llvm.call @[[F]]({{.*}} loc("h.1.mlp")
// CHECK: llvm.call @[[F]]({{.*}} loc("h.2.mlp")
