// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard --zshard-async -o %t.mlir
// RUN: zshard-opt %t.mlir --zshard-prefetch --zshard-verify-contract | FileCheck %s --check-prefix=PRE
// RUN: zshard-opt %t.mlir --zshard-prefetch="forward-depth=2 backward=post" | FileCheck %s --check-prefix=POST
// RUN: zshard-opt %t.mlir --zshard-prefetch="forward-depth=0 backward=none" | FileCheck %s --check-prefix=NONE
// RUN: zshard-opt %t.mlir --zshard-prefetch="max-inflight=1" | FileCheck %s --check-prefix=LIMIT
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=shard_grad_op" --zshard-shard --zshard-async \
// RUN:   | zshard-opt --zshard-prefetch="max-inflight=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOHOLD
// RUN: zshard-opt %t.mlir --zshard-prefetch="bucket-bytes=300" --zshard-verify-contract | FileCheck %s --check-prefix=BUCKET
// RUN: not zshard-opt %t.mlir --zshard-prefetch="backward=sideways" 2>&1 | FileCheck %s --check-prefix=BAD

// Three full_shard units (fc.0, fc.1, fc.2) over 2 ranks; fc.0 is not
// needed in backward.

// Default (forward-depth=1, backward=pre): in forward, fc.1 is gathered
// while fc.0 computes (its start right after fc.0's wait) and fc.2 while
// fc.1 computes; every wait sits just before the first use of its unit.
// In backward (reverse order), the first gather (fc.2) starts as soon as
// its forward gather is released, overlapping the loss; fc.1's starts right
// after fc.2's backward wait, never before fc.1's forward release.
// Reduce-scatters start after their gradients and are in flight one at a time: each is waited
// for right before the next starts, the last in the optimizer.
// PRE:      %[[T0:.*]] = zshard.all_gather_start %{{.*}} unit @fc.0
// PRE-NEXT: %[[G0:.*]] = zshard.wait %[[T0]]
// PRE-NEXT: %[[T1:.*]] = zshard.all_gather_start %{{.*}} unit @fc.1
// PRE:      linalg.matmul {{.*}}ins(%arg0, %{{.*}} : tensor<2x4xf32>, tensor<4x6xf32>)
// PRE:      zshard.release %[[G0]]
// PRE:      %[[G1:.*]] = zshard.wait %[[T1]]
// PRE-NEXT: %[[T2:.*]] = zshard.all_gather_start %{{.*}} unit @fc.2
// PRE:      linalg.matmul
// PRE:      zshard.release %[[G1]]
// PRE:      %[[G2:.*]] = zshard.wait %[[T2]]
// PRE:      linalg.matmul
// PRE:      zshard.release %[[G2]]
// PRE-NEXT: %[[B2:.*]] = zshard.all_gather_start %{{.*}} unit @fc.2
// PRE:      %[[W2:.*]] = zshard.wait %[[B2]]
// PRE-NEXT: %[[B1:.*]] = zshard.all_gather_start %{{.*}} unit @fc.1
// PRE:      linalg.matmul
// PRE:      zshard.release %[[W2]]
// PRE:      %[[RS2:.*]] = zshard.reduce_scatter_start avg %{{.*}} unit @fc.2
// PRE:      %[[W1:.*]] = zshard.wait %[[B1]]
// PRE:      linalg.matmul
// PRE:      zshard.release %[[W1]]
// PRE-NOT:  zshard.all_gather_start
// PRE:      zshard.wait %[[RS2]]
// PRE-NEXT: %[[RS1:.*]] = zshard.reduce_scatter_start avg %{{.*}} unit @fc.1
// PRE:      zshard.wait %[[RS1]]
// PRE-NEXT: zshard.reduce_scatter_start avg %{{.*}} unit @fc.0
// PRE:      zshard.wait
// PRE:      return

// forward-depth=2 starts fc.0 and fc.1 together, fc.2 while fc.0
// computes; backward=post starts fc.1's backward gather only after fc.2's
// backward release (its gradient computation is done).
// POST:      zshard.all_gather_start %{{.*}} unit @fc.0
// POST-NEXT: zshard.all_gather_start %{{.*}} unit @fc.1
// POST-NEXT: zshard.wait
// POST-NEXT: zshard.all_gather_start %{{.*}} unit @fc.2
// POST:      %[[W2:.*]] = zshard.wait %{{.*}} : !zshard.token<tensor<18xf32>>
// POST:      linalg.matmul
// POST:      zshard.release %[[W2]]
// POST:      %[[W2B:.*]] = zshard.wait %{{.*}} : !zshard.token<tensor<18xf32>>
// POST:      linalg.matmul
// POST-NEXT: zshard.release %[[W2B]]
// POST-NEXT: zshard.all_gather_start %{{.*}} unit @fc.1

// No prefetch: every gather starts right before its wait.
// NONE-COUNT-5: zshard.all_gather_start {{.*}}
// NONE-NEXT:    zshard.wait
// NONE-NOT:     zshard.all_gather_start

// max-inflight=1: at most one gathered unit is live at any point, so a
// gather starts only after the previous unit's release.
// LIMIT:      %[[G0:.*]] = zshard.wait %{{.*}} : !zshard.token<tensor<30xf32>>
// LIMIT:      zshard.release %[[G0]]
// LIMIT-NEXT: zshard.all_gather_start %{{.*}} unit @fc.1
// LIMIT:      %[[G1:.*]] = zshard.wait %{{.*}} : !zshard.token<tensor<36xf32>>
// LIMIT:      zshard.release %[[G1]]
// LIMIT-NEXT: zshard.all_gather_start %{{.*}} unit @fc.2

// shard_grad_op keeps each gathered unit until backward, so a limit of one
// unit cannot hold; the pass says so where it cannot.
// NOHOLD: warning: loc("fc.2"): zshard-prefetch: 1 other gathered units are still live where this unit is needed, so max-inflight=1 cannot hold here (they are not released before)

// bucket-bytes=300: fc.0 (120 gathered bytes) and fc.1 (144) fit one
// bucket, fc.2 (72) would not join them (336 > 300): one all_gather of both
// shards side by side (15 + 18 elements per rank), whose [ranks, 33] view
// is cut back into each unit's gathered buffer; the bucket is released once
// both are cut out. In backward fc.2 and fc.1 (reverse order) share one.
// BUCKET:      %[[IN0:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0] [15] [1] : tensor<15xf32> into tensor<33xf32>
// BUCKET-NEXT: %[[IN:.*]] = tensor.insert_slice %{{.*}} into %[[IN0]][15] [18] [1] : tensor<18xf32> into tensor<33xf32>
// BUCKET-NEXT: %[[T:.*]] = zshard.all_gather_start %[[IN]] on @world[0] : tensor<33xf32> -> !zshard.token<tensor<66xf32>>
// BUCKET-NEXT: %[[B:.*]] = zshard.wait %[[T]]
// BUCKET-NEXT: zshard.all_gather_start %{{.*}} unit @fc.2
// BUCKET-NEXT: %[[V:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [2, 33] : tensor<66xf32> into tensor<2x33xf32>
// BUCKET-NEXT: %[[S0:.*]] = tensor.extract_slice %[[V]][0, 0] [2, 15] [1, 1] : tensor<2x33xf32> to tensor<2x15xf32>
// BUCKET-NEXT: tensor.collapse_shape %[[S0]] {{\[\[}}0, 1]] : tensor<2x15xf32> into tensor<30xf32>
// BUCKET-NEXT: %[[S1:.*]] = tensor.extract_slice %[[V]][0, 15] [2, 18] [1, 1] : tensor<2x33xf32> to tensor<2x18xf32>
// BUCKET-NEXT: tensor.collapse_shape %[[S1]] {{\[\[}}0, 1]] : tensor<2x18xf32> into tensor<36xf32>
// BUCKET-NEXT: zshard.release %[[B]] : tensor<66xf32>
// BUCKET:      zshard.all_gather_start %{{.*}} on @world[0] : tensor<27xf32> -> !zshard.token<tensor<54xf32>>
// BUCKET-NOT:  zshard.all_gather_start

// BAD: for the --backward option: 'sideways' is not one of pre, post, none
