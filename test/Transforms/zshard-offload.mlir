// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-offload | FileCheck %s
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-offload --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard | FileCheck %s --check-prefix=SHARD
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard --zshard-offload | FileCheck %s --check-prefix=SHARD

// Tests that zshard-offload places exactly the optimizer state (both
// moments of both parameters) in host memory and nothing else, and that
// the placement holds for the state's shards whether it runs before or
// after zshard-shard.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "fc.0.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: {zshard.init = #zshard.init<zeros>, zshard.name = "fc.0.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.placement = #zshard.placement<host>, zshard.role = #zshard.role<opt_state>
// CHECK-SAME: zshard.name = "fc.0.bias.exp_avg", zshard.param = "fc.0.bias", zshard.placement = #zshard.placement<host>, zshard.role = #zshard.role<opt_state>
// CHECK-SAME: zshard.name = "fc.0.weight.exp_avg_sq", zshard.param = "fc.0.weight", zshard.placement = #zshard.placement<host>, zshard.role = #zshard.role<opt_state>
// CHECK-SAME: zshard.name = "fc.0.bias.exp_avg_sq", zshard.param = "fc.0.bias", zshard.placement = #zshard.placement<host>, zshard.role = #zshard.role<opt_state>
// CHECK-SAME: {zshard.name = "x", zshard.role = #zshard.role<batch>}

// SHARD-LABEL: func.func @train_step
// SHARD-SAME: zshard.name = "fc.0", zshard.role = #zshard.role<param_shard>
// SHARD-SAME: zshard.name = "fc.0.exp_avg", zshard.placement = #zshard.placement<host>, zshard.role = #zshard.role<opt_state_shard>
// SHARD-SAME: zshard.name = "fc.0.exp_avg_sq", zshard.placement = #zshard.placement<host>, zshard.role = #zshard.role<opt_state_shard>
