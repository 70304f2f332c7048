// RUN: zshard-gen gpt --layers 1 --d-model 16 --heads 2 --vocab 32 --seq 8 --batch 2 -o %t.mlir
// RUN: sed -e 's/zshard.name = "lr", zshard.role = #zshard.role<hyper>/zshard.default = 2.500000e-01 : f64, zshard.name = "lr", zshard.role = #zshard.role<hyper>/' %t.mlir > %t-lr.mlir
// RUN: zshard-compile %t-lr.mlir -o %t.zsa
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.zsa/manifest.json
// RUN: env OPENBLAS_NUM_THREADS=1 zshard-run %t.zsa --steps 1 2>&1 | FileCheck %s --check-prefix=RECORDED
// RUN: env OPENBLAS_NUM_THREADS=1 zshard-run %t.zsa --steps 1 --lr 0.01 2>&1 | FileCheck %s --check-prefix=GIVEN
// RUN: sed -e 's/zshard.name = "lr", zshard.role = #zshard.role<hyper>/zshard.default = "fast", zshard.name = "lr", zshard.role = #zshard.role<hyper>/' %t.mlir > %t-bad.mlir
// RUN: not zshard-opt %t-bad.mlir --zshard-verify-contract 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: sed -e 's/zshard.name = "tokens", zshard.role = #zshard.role<batch>/zshard.default = 1.0 : f64, zshard.name = "tokens", zshard.role = #zshard.role<batch>/' %t.mlir > %t-batch.mlir
// RUN: not zshard-opt %t-batch.mlir --zshard-verify-contract 2>&1 | FileCheck %s --check-prefix=BATCH

// Tests that the lr a producer records on the step (zshard.default on the
// hyper lr, as the exporter writes the optimizer's lr) reaches the
// artifact's manifest as the hyper's "default", that zshard-run trains with
// it unless --lr is given and says which lr it uses, and that the contract
// refuses a zshard.default that is not a float, or on another role.

// MANIFEST:      "default": 0.25,
// MANIFEST-NEXT: "dtype": "f32",
// MANIFEST-NEXT: "index": {{[0-9]+}},
// MANIFEST-NEXT: "name": "lr",
// MANIFEST-NEXT: "role": "hyper",

// RECORDED: lr 0.25 (the artifact's)
// RECORDED: "lr":0.25,"lr_source":"artifact"

// GIVEN: lr 0.01 (--lr)
// GIVEN: "lr":0.01,"lr_source":"--lr"

// BAD: argument #{{[0-9]+}} ('lr'): zshard.default must be a finite float (e.g. 3.0e-04 : f64), got "fast"
// BATCH: argument #{{[0-9]+}} ('tokens'): zshard.default is for hyper arguments only
