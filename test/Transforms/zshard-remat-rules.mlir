// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-remat="pattern=fc.<i> policy=every=2" | FileCheck %s --check-prefix=EVERY
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-remat="pattern=fc.<i> blocks=fc.1" | FileCheck %s --check-prefix=NAMED
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-remat="pattern=fc.<i> policy=budget=48" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET --implicit-check-not=remark:
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-remat="pattern=fc.<i> policy=budget=1KiB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FITS --implicit-check-not=remark:
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-remat="pattern=fc.<i> policy=budget=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOSMALL --implicit-check-not=error:
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-remat="pattern=fc.<i> blocks=fc.7" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADBLOCK --implicit-check-not=error:
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-remat="pattern=h.<i>" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOMATCH --implicit-check-not=error:
// RUN: zshard-opt %S/Inputs/mlp2-early-backward-step.mlir --zshard-remat="pattern=fc.<i>" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EARLY --allow-empty
// RUN: zshard-opt %S/Inputs/mlp2-early-backward-step.mlir --zshard-remat="pattern=fc.<i>" --mlir-print-debuginfo=false 2>/dev/null | FileCheck %s --check-prefix=EARLYIR
// RUN: sed 's/^  %%mask = /  "test.probe"(%%h0) : (tensor<2x6xf32>) -> ()\n  %%mask = /' %S/Inputs/mlp2-early-backward-step.mlir \
// RUN:   | zshard-opt --allow-unregistered-dialect --zshard-remat="pattern=fc.<i>" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EFFECT --implicit-check-not=remark:

// zshard-remat's rules on a hand-written step (two linear layers fc.0 and
// fc.1, Inputs/mlp2-step.mlir), independent of zshard-gen: which blocks
// each policy picks, the budget's choice and report, and one line for each
// error. Without checkpointing, 72 bytes of activations live across forward
// and backward: fc.0's 2x6 hidden values (48 bytes) and fc.1's 2x3 output
// (24 bytes), which the loss's backward reads whatever is checkpointed.

// every=2 checkpoints blocks 0, 2, ...: only fc.0 is recomputed.
// EVERY: zshard.remat = "fc.0"
// EVERY-NOT: zshard.remat = "fc.1"

// blocks= checkpoints exactly the named ones.
// NAMED-NOT: zshard.remat = "fc.0"
// NAMED: zshard.remat = "fc.1"
// NAMED-NOT: zshard.remat = "fc.0"

// A budget checkpoints the blocks that free the most bytes per recomputed
// FLOP until the rest fits, and says what it chose.
// BUDGET: mlp2-step.mlir:0:0: remark: zshard-remat: budget=48 bytes: checkpointing 1 of 2 blocks (fc.0); 24 bytes of activations live across forward and backward{{$}}
// FITS: mlp2-step.mlir:0:0: remark: zshard-remat: budget=1024 bytes: checkpointing 0 of 2 blocks (); 72 bytes of activations live across forward and backward{{$}}

// TOOSMALL: mlp2-step.mlir:0:0: error: zshard-remat: budget=8 bytes cannot be met: with 1 of 2 blocks checkpointed 24 bytes of activations still live across forward and backward, 16 bytes too many{{$}}
// BADBLOCK: mlp2-step.mlir:0:0: error: zshard-remat: blocks names 'fc.7', which is not a block of pattern 'fc.<i>' (its blocks are fc.0, fc.1){{$}}
// NOMATCH: mlp2-step.mlir:0:0: error: zshard-remat: pattern 'h.<i>' matches no forward op; no block to checkpoint (the step's repeated blocks are fc.<i>){{$}}

// A backward op inside a block's forward (Inputs/mlp2-early-backward-step.mlir:
// the ReLU mask of fc.0 sits between fc.0's bias add and its ReLU) moves down
// to its first user, after fc.0's recomputation, which it then reads: both
// blocks are checkpointed, without a remark.
// EARLY-NOT: remark:
// EARLYIR:      zshard.remat = "fc.1"
// EARLYIR:      %[[H:.*]] = linalg.generic {{.*}} attrs = {{ *}}{zshard.path = "fc.0", zshard.remat = "fc.0"}
// EARLYIR:      linalg.generic {{.*}} ins(%[[H]] : tensor<2x6xf32>) {{.*}} attrs = {{ *}}{zshard.path = "fc.0"} {
// EARLYIR-NEXT: ^bb0
// EARLYIR-NEXT: arith.constant
// EARLYIR-NEXT: arith.constant
// EARLYIR-NEXT: arith.cmpf ogt

// An op with memory effects (or unknown ones) does not move: when such a
// backward op reads fc.0's values inside its forward, fc.0 is not
// checkpointed, with one remark.
// EFFECT: remark: {{.*}}zshard-remat: block 'fc.0' is read by backward before its forward ends; not checkpointed{{$}}
