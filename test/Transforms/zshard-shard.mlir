// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=FULL
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=shard_grad_op" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=ZERO2
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=no_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=DDP
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=zero1" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=ZERO1
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=4 replicas=2 strategy=hybrid_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=HYBRID
// RUN: zshard-gen mlp --widths 4,6,3 --batch 2 --dtype bf16 \
// RUN:   | zshard-opt --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard reduce-type=f32" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=MIXED
// RUN: zshard-gen mlp --widths 4,6,3 --batch 2 --dtype bf16 \
// RUN:   | zshard-opt --zshard-form-units="pattern=fc.<i> ranks=2 strategy=no_shard reduce-type=f32" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=DDPMIXED
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-shard 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOUNITS

// Tests full_shard (ZeRO-3) on a 2-layer MLP with one unit per layer over 2
// ranks: each unit's members become one flat shard argument (fc.0: 30
// elements -> 15 per rank; fc.1: 21, padded to 22 -> 11); the unit is
// gathered before its first forward use and released after its last; fc.1
// is gathered again in backward (its weight feeds the input gradient) and
// released; fc.0 is not (nothing in backward reads it); each unit's
// gradients are packed into its padded flat buffer and reduce-scattered
// once; the AdamW update runs on this rank's part of each member (dynamic
// offset and length from the rank's coordinate) and lands in the shard
// results.
// FULL:       func.func @train_step(
// FULL-SAME:    %[[S0:[a-z0-9]+]]: tensor<15xf32> {zshard.inits = [#zshard.init<normal(0, 0.02)>, #zshard.init<zeros>], zshard.name = "fc.0", zshard.role = #zshard.role<param_shard>, zshard.unit = @fc.0}
// FULL-SAME:    tensor<15xf32> {zshard.inits = [#zshard.init<zeros>, #zshard.init<zeros>], zshard.name = "fc.0.exp_avg", zshard.role = #zshard.role<opt_state_shard>, zshard.slot = "exp_avg", zshard.unit = @fc.0}
// FULL-SAME:    %[[S1:[a-z0-9]+]]: tensor<11xf32> {{{.*}}zshard.name = "fc.1", zshard.role = #zshard.role<param_shard>, zshard.unit = @fc.1}
// FULL-SAME:    -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<15xf32> {zshard.name = "fc.0", zshard.role = #zshard.role<param_shard_out>, zshard.unit = @fc.0}
// FULL:       %[[RANK:.*]] = shard.process_multi_index on @world axes = [0] : index
// FULL:       %[[G0:.*]] = zshard.all_gather %[[S0]] on @world[0] unit @fc.0 : tensor<15xf32> -> tensor<30xf32>
// FULL-NEXT:  %[[W0F:.*]] = tensor.extract_slice %[[G0]][0] [24] [1] : tensor<30xf32> to tensor<24xf32>
// FULL-NEXT:  %[[W0:.*]] = tensor.expand_shape %[[W0F]] {{\[\[}}0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// FULL-NEXT:  tensor.extract_slice %[[G0]][24] [6] [1] : tensor<30xf32> to tensor<6xf32>
// FULL:       linalg.matmul {{.*}}ins(%{{.*}}, %[[W0]] : tensor<2x4xf32>, tensor<4x6xf32>)
// FULL:       zshard.release %[[G0]] : tensor<30xf32>
// FULL:       %[[G1:.*]] = zshard.all_gather %[[S1]] on @world[0] unit @fc.1 : tensor<11xf32> -> tensor<22xf32>
// FULL:       zshard.release %[[G1]] : tensor<22xf32>
// FULL:       %[[G1B:.*]] = zshard.all_gather %[[S1]] on @world[0] unit @fc.1 : tensor<11xf32> -> tensor<22xf32>
// FULL:       zshard.release %[[G1B]] : tensor<22xf32>
// FULL-NOT:   zshard.all_gather
// FULL:       %[[R1:.*]] = zshard.reduce_scatter avg %{{.*}} on @world[0] unit @fc.1 : tensor<22xf32> -> tensor<11xf32>
// FULL:       %[[R0:.*]] = zshard.reduce_scatter avg %{{.*}} on @world[0] unit @fc.0 : tensor<30xf32> -> tensor<15xf32>
// FULL:       arith.muli %[[RANK]], %{{.*}} : index
// FULL:       tensor.extract_slice %[[S0]][%{{.*}}] [%{{.*}}] [1] : tensor<15xf32> to tensor<?xf32>
// FULL:       zshard.adamw textbook {{.*}} : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
// FULL:       tensor.insert_slice %{{.*}} into %[[S0]][%{{.*}}] [%{{.*}}] [1] : tensor<?xf32> into tensor<15xf32>
// FULL:       return

// Tests shard_grad_op (ZeRO-2): one gather per unit, kept through backward
// (no reshard) and released after its last backward use.
// ZERO2:     zshard.unit @fc.0 on @world[0] shard_grad_op padded(30)
// ZERO2:     %[[G1:.*]] = zshard.all_gather %{{.*}} unit @fc.1
// ZERO2-NOT: zshard.all_gather {{.*}} unit @fc.1
// ZERO2:     linalg.matmul indexing_maps
// ZERO2:     zshard.release %[[G1]]
// ZERO2:     zshard.reduce_scatter avg {{.*}} unit @fc.1
// ZERO2:     zshard.reduce_scatter avg {{.*}} unit @fc.0

// Tests no_shard (DDP): parameters and optimizer state stay whole, there
// is no gather, and each unit's gradients travel as one flat all-reduce.
// DDP:       func.func @train_step(%{{.*}}: tensor<4x6xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "fc.0.weight", zshard.role = #zshard.role<param>, zshard.unit = @fc.0}
// DDP-NOT:   zshard.all_gather
// DDP-NOT:   param_shard
// DDP:       %[[AR:.*]] = zshard.all_reduce avg %{{.*}} on @world[0] unit @fc.1 : tensor<22xf32>
// DDP:       zshard.all_reduce avg %{{.*}} on @world[0] unit @fc.0 : tensor<30xf32>
// DDP:       return

// Tests zero1: whole parameters in and out and no gather before use;
// optimizer state as shards; gradients reduce-scattered; the optimizer
// updates this rank's part of the packed parameters (a dynamic offset, a
// static shard size) and one all_gather returns the whole parameters, which
// are the param_out results again.
// ZERO1:      func.func @train_step(%[[W0:[a-z0-9]+]]: tensor<4x6xf32> {{{.*}}zshard.name = "fc.0.weight", zshard.role = #zshard.role<param>, zshard.unit = @fc.0}
// ZERO1-SAME:   zshard.role = #zshard.role<opt_state_shard>, zshard.slot = "exp_avg", zshard.unit = @fc.0}
// ZERO1-SAME:   -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<4x6xf32> {zshard.name = "fc.0.weight", zshard.role = #zshard.role<param_out>}
// ZERO1-NOT:  param_shard
// ZERO1-NOT:  zshard.all_gather
// ZERO1:      zshard.reduce_scatter avg {{.*}} unit @fc.0 : tensor<30xf32> -> tensor<15xf32>
// ZERO1:      tensor.extract_slice %{{.*}}[%{{.*}}] [15] [1] : tensor<30xf32> to tensor<15xf32>
// ZERO1:      %[[WHOLE:.*]] = zshard.all_gather %{{.*}} on @world[0] unit @fc.0 : tensor<15xf32> -> tensor<30xf32>
// ZERO1:      tensor.extract_slice %[[WHOLE]][0] [24] [1]
// ZERO1:      return

// Tests hybrid_shard on a 2x2 grid: full_shard inside the shard group (axis
// 1), and the gradient shard all-reduced over the replicas (axis 0).
// HYBRID:     shard.grid @world(shape = 2x2)
// HYBRID:     shard.process_multi_index on @world axes = [1] : index
// HYBRID:     zshard.all_gather %{{.*}} on @world[1] unit @fc.0 : tensor<15xf32> -> tensor<30xf32>
// HYBRID:     %[[RS:.*]] = zshard.reduce_scatter avg %{{.*}} on @world[1] unit @fc.1 : tensor<22xf32> -> tensor<11xf32>
// HYBRID-NEXT: zshard.all_reduce avg %[[RS]] on @world[0] unit @fc.1 : tensor<11xf32>
// NOUNITS: error: {{.*}}zshard-shard: the module has no units; run zshard-form-units first

// Tests mixed precision in the IR types: bf16 parameters are gathered in
// bf16, gradients are widened to f32 and reduced in f32, the f32 master copy
// and moments are f32 shards, and the f32 gradient shard is narrowed to the
// gradient's bf16 for the update, which runs on this rank's piece of the
// master.
// MIXED:      zshard.unit @fc.0 on @world[0] full_shard padded(30) param(bf16) reduce(f32)
// MIXED:      zshard.role = #zshard.role<param_shard>
// MIXED-SAME: tensor<15xf32> {zshard.inits = [#zshard.init<param>, #zshard.init<param>], zshard.name = "fc.0.master", zshard.role = #zshard.role<opt_state_shard>, zshard.slot = "master", zshard.unit = @fc.0}
// MIXED:      zshard.all_gather %{{.*}} unit @fc.0 : tensor<15xbf16> -> tensor<30xbf16>
// MIXED:      arith.extf %{{.*}} : tensor<24xbf16> to tensor<24xf32>
// MIXED:      zshard.reduce_scatter avg %{{.*}} unit @fc.0 : tensor<30xf32> -> tensor<15xf32>
// MIXED:      arith.truncf %{{.*}} : tensor<?xf32> to tensor<?xbf16>
// MIXED:      zshard.adamw textbook {{.*}} master %{{.*}} : tensor<?xf32> lr {{.*}} : tensor<?xbf16>, tensor<?xbf16>, tensor<?xf32>, tensor<?xf32>

// no_shard with bf16 gradients reduced in f32: the all-reduced members are
// rounded back to bf16 for the unchanged update.
// DDPMIXED:      zshard.all_reduce avg %{{.*}} unit @fc.1 : tensor<22xf32>
// DDPMIXED:      arith.truncf %{{.*}} : tensor<6x3xf32> to tensor<6x3xbf16>
