// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=2 -o %t.mlir
// RUN: zshard-opt %t.mlir --zshard-verify-contract -o /dev/null
// RUN: sed 's/zshard.microbatches = 2 : i64/zshard.microbatches = 1 : i64/' %t.mlir \
// RUN:   | not zshard-opt --zshard-verify-contract 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: sed '0,/zshard.microbatch = 1 : i64/s//zshard.microbatch = 5 : i64/' %t.mlir \
// RUN:   | not zshard-opt --zshard-verify-contract 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: sed '0,/zshard.microbatch = 1 : i64/s//zshard.microbatch = "one"/' %t.mlir \
// RUN:   | not zshard-opt --zshard-verify-contract 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: sed 's/zshard.microbatches = 2 : i64, //' %t.mlir \
// RUN:   | not zshard-opt --zshard-verify-contract 2>&1 | FileCheck %s --check-prefix=UNTAGGED

// Tests the contract's rules for accumulating steps (docs/contract.md,
// "Accumulating steps"): a step zshard-accumulate wrote passes; a count
// below 2, a microbatch outside [0, K) or not an integer, and microbatch
// tags without the step's count are one error each.
// COUNT: {{.*}}mlp2-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard.microbatches of the step must be an i64 of at least 2, got 1 : i64
// RANGE: {{.*}}mlp2-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard.microbatch of op 'tensor.extract_slice' must be an i64 in [0, 2), got 5 : i64
// TYPE: {{.*}}mlp2-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard.microbatch of op 'tensor.extract_slice' must be an i64 in [0, 2), got "one"
// UNTAGGED: {{.*}}mlp2-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: op 'tensor.extract_slice' (and {{[0-9]+}} other ops) has zshard.microbatch but the step has no zshard.microbatches
// UNTAGGED-NOT: error
